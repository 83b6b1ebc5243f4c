"""The parent's byte code for an environment that ships none (harness/bytecode.py)."""

from __future__ import annotations

import os
import platform
import py_compile
import subprocess
import sys
from pathlib import Path

from arena.environment.measurement import Measurement
from arena.harness.bytecode import COMPLETE, bytecode_folder
from arena.harness.launch import _child_env


def _root(tmp_path: Path, compiled: bool = False) -> Path:
    """An import root holding a package named torch (the probe) and a module beside it."""
    root = tmp_path / "site"
    (root / "torch").mkdir(parents=True)
    (root / "torch" / "__init__.py").write_text("from torch import ops\nANSWER = ops.ANSWER\n")
    (root / "torch" / "ops.py").write_text("ANSWER = 42\n")
    if compiled:
        for name in ("__init__", "ops"):
            source = root / "torch" / f"{name}.py"
            py_compile.compile(str(source), cfile=None, doraise=True)
    return root


def _measurement(root: Path) -> Measurement:
    return Measurement("host", sys.executable, (str(root),), {"python": platform.python_version()})


def test_an_environment_without_byte_code_is_compiled_once_into_a_folder_of_its_own(tmp_path: Path) -> None:
    root = _root(tmp_path)
    folder = bytecode_folder(_measurement(root), cache=tmp_path / "cache")
    assert folder is not None and (folder / COMPLETE).is_file()
    mirrored = folder / str(root).lstrip(os.sep) / "torch"
    assert sorted(p.name.split(".")[0] for p in mirrored.glob("*.pyc")) == ["__init__", "ops"]
    assert not (root / "torch" / "__pycache__").exists()  # the environment itself is left as it was
    assert folder.stat().st_mode & 0o005 == 0o005  # children, another user, read it
    again = bytecode_folder(_measurement(root), cache=tmp_path / "cache")
    assert again == folder and len(list((tmp_path / "cache").iterdir())) == 1


def test_a_child_reads_that_byte_code_and_writes_none(tmp_path: Path) -> None:
    root = _root(tmp_path)
    measurement = _measurement(root)
    folder = bytecode_folder(measurement, cache=tmp_path / "cache")
    assert folder is not None
    env = _child_env(tmp_path / "work", measurement, bytecode=folder)
    assert env["PYTHONPYCACHEPREFIX"] == str(folder) and env["PYTHONDONTWRITEBYTECODE"] == "1"
    done = subprocess.run(
        [sys.executable, "-v", "-c", "import torch; print(torch.ANSWER)"],
        env={**env, "PYTHONSAFEPATH": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "42"
    loaded = [line for line in done.stderr.splitlines() if "code object from" in line and "torch" in line]
    assert len(loaded) == 2 and all(str(folder) in line for line in loaded), loaded
    assert not (root / "torch" / "__pycache__").exists()


def test_nothing_is_made_where_the_environment_ships_byte_code_or_has_no_torch(tmp_path: Path) -> None:
    compiled = _root(tmp_path / "a", compiled=True)
    assert bytecode_folder(_measurement(compiled), cache=tmp_path / "cache") is None
    empty = tmp_path / "b"
    empty.mkdir()
    assert bytecode_folder(_measurement(empty), cache=tmp_path / "cache") is None
    assert not (tmp_path / "cache").exists()
    assert "PYTHONPYCACHEPREFIX" not in _child_env(tmp_path / "work", _measurement(compiled))
