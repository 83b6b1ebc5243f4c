import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from arena.environment import probe as env_module
from arena.environment.environment import Environment, fingerprint_environment, has_gpu
from arena.environment.probe import probe_environment, probe_host


def _forget() -> None:
    probe_host.cache_clear()
    probe_environment.cache_clear()


def _fake_tool(folder: Path, name: str, output: str) -> None:
    path = folder / name
    path.write_text(f"#!/bin/sh\ncat <<'END'\n{output}\nEND\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def test_fingerprint_covers_identity_not_clocks() -> None:
    base = Environment(backend="cuda", gpu_name="NVIDIA H200", versions={"torch": "2.11"})
    assert fingerprint_environment(base) == fingerprint_environment(replace(base, clocks={"sm_mhz": "1500"}))
    measured = replace(base, measurement={"event_overhead_us": "1.3"})
    assert fingerprint_environment(base) == fingerprint_environment(measured)
    assert fingerprint_environment(base) == fingerprint_environment(replace(base, fingerprint="x"))
    for changed in (
        replace(base, gpu_name="NVIDIA H100"),
        replace(base, versions={"torch": "2.12"}),
        replace(base, image_digest="sha256:ab"),
        replace(base, driver="580"),
    ):
        assert fingerprint_environment(changed) != fingerprint_environment(base)


def test_probe_reads_a_gpu_from_nvidia_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_tool(tmp_path, "nvidia-smi", "NVIDIA H200, 9.0, 580.65.06")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("ARENA_IMAGE_DIGEST", "sha256:feed")
    _forget()
    try:
        found = probe_environment()
    finally:
        _forget()
    assert (found.backend, found.gpu_name, found.gpu_arch, found.driver) == (
        "cuda",
        "NVIDIA H200",
        "sm_90",
        "580.65.06",
    )
    assert found.image_digest == "sha256:feed"
    assert found.fingerprint == fingerprint_environment(found)
    assert has_gpu(found)


def test_probe_without_a_gpu_tool_is_the_cpu_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(env_module, "_command", lambda argv: "")
    _forget()
    try:
        found = probe_environment()
    finally:
        _forget()
    assert found.backend == "cpu-interpreter" and not has_gpu(found)
    assert "python" in found.versions
    assert found.versions.get("torch")  # from package metadata, torch itself is not imported


def test_the_sandbox_is_probed_turned_off_on_request_and_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox_tool = env_module.sandbox_tool
    sandbox_tool.cache_clear()
    _forget()
    try:
        monkeypatch.setenv("ARENA_SANDBOX", "off")
        assert sandbox_tool() == ""
        assert probe_environment().versions["sandbox"] == "none"
        sandbox_tool.cache_clear()
        _forget()
        # A bwrap that cannot make namespaces (refused by the kernel, say) is no sandbox either.
        _fake_tool(tmp_path, "bwrap", "bwrap: No permissions to creating new namespace")
        (tmp_path / "bwrap").write_text("#!/bin/sh\necho 'bwrap: cannot create namespace' >&2\nexit 1\n")
        monkeypatch.setenv("ARENA_SANDBOX", "auto")
        monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
        assert sandbox_tool() == ""
        sandbox_tool.cache_clear()
        (tmp_path / "bwrap").write_text("#!/bin/sh\n[ \"$1\" = --version ] && echo 'bubblewrap 0.8.0'\nexit 0\n")
        assert sandbox_tool() == "bwrap 0.8.0"
        assert probe_environment().versions["sandbox"] == "bwrap 0.8.0"
    finally:
        sandbox_tool.cache_clear()
        _forget()
