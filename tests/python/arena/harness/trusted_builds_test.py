"""The HIP baseline's trusted builds (trusted_builds.py): keyed on everything that makes the
library, filled only from no-op runs, found by the judge's next build of the same baseline."""

import shutil
from pathlib import Path

import pytest

from arena.harness import trusted_builds
from arena.harness.kernel_cache import ROOT_VARIABLE, TRUSTED_VARIABLE
from arena_testing.harness_tasks import HIP_ADD


@pytest.fixture
def fixed_compiler(monkeypatch):
    monkeypatch.setattr(trusted_builds, "compiler_version", lambda backend: f"compiler for {backend} 1.0")


def _baseline(root: Path, source: str = "int f() { return 1; }\n") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "kernel.hip").write_text(source)
    return root


def test_the_key_covers_sources_arch_backend_and_compiler(tmp_path, fixed_compiler, monkeypatch):
    base = _baseline(tmp_path / "a")
    key = trusted_builds.build_key(base, "kernel.hip", "cuda", "sm_90")
    assert key == trusted_builds.build_key(_baseline(tmp_path / "b"), "kernel.hip", "cuda", "sm_90")  # not the path
    assert key != trusted_builds.build_key(base, "kernel.hip", "cuda", "sm_80")
    assert key != trusted_builds.build_key(base, "kernel.hip", "rocm", "sm_90")
    (base / "helpers.h").write_text("#define N 4\n")  # a header the source may include
    with_header = trusted_builds.build_key(base, "kernel.hip", "cuda", "sm_90")
    assert with_header != key
    (base / "helpers.h").write_text("#define N 5\n")
    assert trusted_builds.build_key(base, "kernel.hip", "cuda", "sm_90") != with_header
    monkeypatch.setattr(trusted_builds, "compiler_version", lambda backend: "compiler 2.0")
    assert trusted_builds.build_key(base, "kernel.hip", "cuda", "sm_90") not in (key, with_header)


def test_only_a_promoted_stash_is_found(tmp_path, monkeypatch):
    work, layer = tmp_path / "work", tmp_path / "layer"
    work.mkdir()
    library = work / "baseline.so"
    library.write_bytes(b"library")
    library.with_suffix(".o").write_bytes(b"object")
    monkeypatch.setenv(TRUSTED_VARIABLE, str(layer))
    assert not trusted_builds.fetch("k1", tmp_path / "elsewhere.so")  # nothing in the layer yet
    trusted_builds.stash("k1", library, work)
    assert not trusted_builds.fetch("k1", tmp_path / "elsewhere.so")  # a stash alone is no layer
    (work / trusted_builds.STASH / "half").mkdir()  # a build cut short: never promoted
    (work / trusted_builds.STASH / "half" / "library.so").write_bytes(b"x")
    assert trusted_builds.promote(work, layer) == 1
    assert trusted_builds.promote(work, layer) == 0  # kept once
    found = tmp_path / "found.so"
    assert trusted_builds.fetch("k1", found)
    assert found.read_bytes() == b"library" and found.with_suffix(".o").read_bytes() == b"object"
    monkeypatch.delenv(TRUSTED_VARIABLE)
    assert not trusted_builds.fetch("k1", found)  # a judge shown no layer finds nothing


def test_a_no_op_fills_the_layer_and_the_next_judge_finds_its_baseline(run_candidate, tmp_path, monkeypatch):
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not installed")
    monkeypatch.setenv(ROOT_VARIABLE, str(tmp_path / "kernels"))

    def baseline_library(result) -> str:
        log = next(stage.log for stage in result.stages if stage.name == "compile")
        return log.rsplit("the baseline's library: ", 1)[-1].strip()

    first = run_candidate(None, hip=True)
    assert first.status == "NEEDS_DEVICE" and baseline_library(first) == "compiled", first.errors
    assert len(list((tmp_path / "kernels" / trusted_builds.FOLDER).iterdir())) == 1
    second = run_candidate(HIP_ADD, hip=True)  # a candidate: it finds the baseline, adds nothing
    assert second.status == "NEEDS_DEVICE" and baseline_library(second) == "from the trusted builds"
    assert len(list((tmp_path / "kernels" / trusted_builds.FOLDER).iterdir())) == 1


def test_a_run_with_a_candidate_fills_nothing(run_candidate, tmp_path, monkeypatch):
    """The judge stashes its baseline build in every run, in the work folder the candidate shares;
    only a no-op run's stash (no candidate code ran) is promoted."""
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not installed")
    monkeypatch.setenv(ROOT_VARIABLE, str(tmp_path / "kernels"))
    result = run_candidate(HIP_ADD, hip=True)
    assert result.status == "NEEDS_DEVICE", result.errors
    layer = tmp_path / "kernels" / trusted_builds.FOLDER
    assert not layer.exists() or not any(layer.iterdir())
