"""The trusted kernel layer: filled only from no-op runs, read below each run's own cache, of
which each process reads back only what it wrote there, unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.harness.kernel_cache import TRUSTED_VARIABLE, promote


def _compiled(cache: Path, key: str) -> Path:
    """A cache entry as Triton writes one: a kernel's files and a group naming them by path."""
    folder = cache / key
    folder.mkdir(parents=True)
    (folder / "k.cubin").write_bytes(b"\x7fELF binary")
    (folder / "k.json").write_text('{"name": "k"}')
    (folder / "lock").write_text("")
    group = {"child_paths": {name: str(folder / name) for name in ("k.cubin", "k.json")}}
    (folder / "__grp__k.json").write_text(json.dumps(group))
    return folder


def test_promote_adds_whole_entries_once(tmp_path: Path) -> None:
    run, trusted = tmp_path / "run-triton", tmp_path / "trusted"
    _compiled(run, "KEY1")
    assert promote(run, trusted) == 1
    assert sorted(p.name for p in (trusted / "KEY1").iterdir()) == ["__grp__k.json", "k.cubin", "k.json"]
    (trusted / "KEY1" / "k.cubin").write_bytes(b"first")
    assert promote(run, trusted) == 0  # kept, not overwritten
    assert (trusted / "KEY1" / "k.cubin").read_bytes() == b"first"
    assert promote(tmp_path / "absent", trusted) == 0


def test_a_run_reads_its_own_cache_then_the_trusted_layer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.harness.triton_cache import LayeredCache

    trusted = tmp_path / "trusted"
    promote(_compiled(tmp_path / "noop-run", "KEY1").parent, trusted)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "this-run"))
    monkeypatch.setenv(TRUSTED_VARIABLE, str(trusted))
    cache = LayeredCache("KEY1")
    assert cache.get_file("k.cubin") == str(trusted / "KEY1" / "k.cubin")
    # The group written in the no-op run's folder is found in the layer.
    assert cache.get_group("k.json") == {
        "k.cubin": str(trusted / "KEY1" / "k.cubin"),
        "k.json": str(trusted / "KEY1" / "k.json"),
    }
    written = cache.put(b"mine", "k.cubin")  # writes go to the run's own cache
    assert written.startswith(str(tmp_path / "this-run")) and cache.get_file("k.cubin") == written
    assert (trusted / "KEY1" / "k.cubin").read_bytes() == b"\x7fELF binary"
    assert LayeredCache("OTHER").get_file("k.cubin") is None


def test_without_a_layer_it_is_triton_s_own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.harness.triton_cache import LayeredCache

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "this-run"))
    monkeypatch.delenv(TRUSTED_VARIABLE, raising=False)
    cache = LayeredCache("KEY1")
    assert cache.get_file("k.cubin") is None and cache.get_group("k.json") is None


def test_a_kernel_planted_in_the_runs_cache_or_changed_there_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's cache is writable by the candidate's worker: an entry this process did not put
    there, or whose bytes changed since, is not read (Triton compiles again); the layer still is."""
    from arena.harness.triton_cache import LayeredCache

    monkeypatch.setattr(LayeredCache, "_written", {})
    run = tmp_path / "this-run"
    monkeypatch.setenv("TRITON_CACHE_DIR", str(run))
    monkeypatch.delenv(TRUSTED_VARIABLE, raising=False)
    _compiled(run, "KEY1")  # as the candidate's worker would leave it: a whole entry, group and all
    cache = LayeredCache("KEY1")
    assert (run / "KEY1" / "k.cubin").is_file()
    assert cache.get_file("k.cubin") is None and cache.get_group("k.json") is None
    assert not cache.has_file("k.cubin")
    # What this process compiles replaces it, and reads back while its bytes are unchanged.
    files: dict[str, bytes | str] = {"k.cubin": b"\x7fELF mine", "k.json": "{}"}
    paths = {name: cache.put(data, name) for name, data in files.items()}
    cache.put_group("k.json", paths)
    assert cache.get_group("k.json") == paths and LayeredCache("KEY1").get_file("k.cubin") == paths["k.cubin"]
    Path(paths["k.cubin"]).write_bytes(b"\x7fELF slower")  # changed after it was put
    assert cache.get_file("k.cubin") is None and cache.get_group("k.json") is None
    # With a layer, the layer's entry is what a miss in the run's own cache finds.
    trusted = tmp_path / "trusted"
    promote(_compiled(tmp_path / "noop-run", "KEY1").parent, trusted)
    monkeypatch.setenv(TRUSTED_VARIABLE, str(trusted))
    assert LayeredCache("KEY1").get_file("k.cubin") == str(trusted / "KEY1" / "k.cubin")
