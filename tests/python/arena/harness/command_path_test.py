"""The judge's PATH keeps the job's folders off (child.keep_job_folders_off_the_command_path): a
tool it runs by name after candidate code has run is never one the candidate planted there."""

import os
import shutil
import stat
from pathlib import Path

import pytest

from arena.harness.backends.repository import command_env
from arena.harness.child import COMMAND_PATH, keep_job_folders_off_the_command_path


def test_a_tool_planted_in_the_jobs_folders_is_not_found_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, scratch, system = tmp_path / "home", tmp_path / "scratch", tmp_path / "system"
    for folder in (home / "bin", scratch / "bin", system):
        folder.mkdir(parents=True)
        tool = folder / "nvidia-smi"  # what the clock sample starts by name
        tool.write_text("#!/bin/sh\nexit 0\n")
        tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    given = os.pathsep.join([str(home / "bin"), str(scratch / "bin"), str(system), "/usr/bin", "/bin"])
    monkeypatch.setenv("PATH", given)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.delenv(COMMAND_PATH, raising=False)
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.chdir(scratch)
    keep_job_folders_off_the_command_path()
    assert os.environ["PATH"] == os.pathsep.join([str(system), "/usr/bin", "/bin"])
    assert shutil.which("nvidia-smi") == str(system / "nvidia-smi")
    compiler = shutil.which("gcc") or shutil.which("clang")
    if compiler:  # Triton's launcher is compiled with CC, by an absolute path
        assert os.environ["CC"] == os.path.realpath(compiler) and os.path.isabs(os.environ["CC"])
    # A repository's own commands (candidate code) keep the job's `python` shims first.
    assert os.environ[COMMAND_PATH] == given and command_env()["PATH"] == given


def test_no_compiled_kernel_cache_under_the_jobs_home(tmp_path: Path) -> None:
    """HOME is the job's (candidate code writes it): torch's NVRTC kernel cache, the CUDA driver's
    JIT cache and ROCm's code-object cache would be read from there by the judge too."""
    from arena.environment.measurement import current_measurement
    from arena.harness.launch import _child_env

    env = _child_env(tmp_path, current_measurement())
    assert env["HOME"].startswith(str(tmp_path))
    assert (env["USE_PYTORCH_KERNEL_CACHE"], env["CUDA_CACHE_DISABLE"], env["AMD_COMGR_CACHE"]) == ("0", "1", "0")
