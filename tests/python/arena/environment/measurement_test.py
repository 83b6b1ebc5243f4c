import os
import sys
import venv
from importlib import metadata
from pathlib import Path

import pytest

from arena.environment import measurement as measurement_module
from arena.environment.measurement import (
    ARENA_PACKAGE,
    PYTHON_VARIABLE,
    Measurement,
    current_measurement,
    forget_measurements,
    gpu_usable,
    import_roots,
    select_python,
)
from arena.errors import NoDevice, UnusableEnvironment


@pytest.fixture(autouse=True)
def _fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the GPU answers and the link folder go here
    monkeypatch.delenv(PYTHON_VARIABLE, raising=False)
    forget_measurements()
    yield
    forget_measurements()


def test_the_default_is_this_interpreter_with_its_import_path() -> None:
    found = current_measurement()
    assert (found.kind, found.python) == ("bundled", sys.executable)
    assert found.versions["torch"] == metadata.version("torch")
    assert found.versions["python"].startswith(f"{sys.version_info.major}.{sys.version_info.minor}")
    assert str(ARENA_PACKAGE.parent) in found.path


def test_the_bundled_import_path_is_built_from_explicit_roots_never_from_sys_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Started as `python -m arena.cli.main` in a checkout, the checkout is the working folder and
    first on sys.path: the children's import path and the folders a sandbox shows leave it out."""
    import torch

    checkout = tmp_path / "checkout"
    (checkout / "tasks").mkdir(parents=True)
    (checkout / "pants.toml").write_text("")
    monkeypatch.chdir(checkout)
    monkeypatch.syspath_prepend(str(checkout))
    monkeypatch.syspath_prepend("")  # what `python -c` puts first
    found = current_measurement()
    assert found.path == import_roots()
    assert found.path[0] == str(ARENA_PACKAGE.parent)  # the arena package's own root first
    assert str(Path(torch.__file__).resolve().parent.parent) in found.path  # site-packages
    for folder in (*found.path, *found.folders):
        assert not str(checkout).startswith(folder.rstrip("/") + "/") and folder != str(checkout), folder
    assert os.path.dirname(os.path.realpath(sys.executable)) in found.folders  # the interpreter's own


def test_installed_distributions_outside_site_packages_are_roots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A PEX that is no venv puts each installed wheel's folder on sys.path: a root, found by its
    # .dist-info (a plain folder on sys.path is not).
    wheel = tmp_path / "installed_wheels" / "demo-1.0-py3-none-any.whl"
    (wheel / "demo-1.0.dist-info").mkdir(parents=True)
    (wheel / "demo-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
    (wheel / "demo.py").write_text("")
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.setattr(sys, "path", [*sys.path, str(wheel), str(plain)])
    roots = import_roots()
    assert str(wheel.resolve()) in roots
    assert str(plain) not in roots and str(plain.resolve()) not in roots


def test_a_host_interpreter_gets_only_the_arena_package_on_its_path(monkeypatch: pytest.MonkeyPatch) -> None:
    select_python(sys.executable)  # a Python that has torch: as a GPU machine's python3 would
    assert os.environ[PYTHON_VARIABLE] == sys.executable
    found = current_measurement()
    assert found.kind == "host"
    assert found.versions["torch"] == metadata.version("torch")  # read by that interpreter
    (folder,) = found.path
    assert sorted(p.name for p in Path(folder).iterdir()) == ["arena"]
    assert (Path(folder) / "arena").resolve() == ARENA_PACKAGE
    assert str(ARENA_PACKAGE) in found.folders  # a sandbox shows the link's target too


def test_an_interpreter_without_torch_is_refused_by_name(tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    venv.create(bare, with_pip=False)  # a real Python with nothing installed
    select_python(str(bare / "bin" / "python"))
    with pytest.raises(UnusableEnvironment) as refused:
        current_measurement()
    assert "cannot import numpy, torch, triton" in str(refused.value)
    assert "--python PATH" in str(refused.value)


def test_a_missing_interpreter_is_refused(tmp_path: Path) -> None:
    select_python(str(tmp_path / "no-such-python"))
    with pytest.raises(UnusableEnvironment, match="is not an executable Python interpreter"):
        current_measurement()


def test_too_old_packages_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    real = measurement_module._described

    def old_torch(kind: str, python: str, path: tuple[str, ...]) -> Measurement:
        found = real(kind, python, path)
        return Measurement(found.kind, found.python, found.path, {**found.versions, "torch": "2.1.0"})

    monkeypatch.setattr(measurement_module, "_described", old_torch)
    with pytest.raises(UnusableEnvironment, match="torch 2.1.0, older than 2.4"):
        current_measurement()


def test_a_gpu_the_environment_cannot_use_is_said_not_skipped(tmp_path: Path) -> None:
    found = current_measurement()  # this CPU torch
    gpu_usable(found, "cpu-interpreter", "")  # no GPU here: nothing to say
    with pytest.raises(NoDevice) as refused:
        gpu_usable(found, "cuda", "NVIDIA H200")
    message = str(refused.value)
    assert "NVIDIA H200" in message and "cannot use it" in message and "--backend cpu" in message
    answers = list((tmp_path / "home" / ".cache" / "arena" / "measurement").glob("gpu-*.json"))
    assert len(answers) == 1  # asked once: the next process reads the answer
    answers[0].write_text('{"available": true, "cuda": "13.0", "hip": ""}')
    gpu_usable(found, "cuda", "NVIDIA H200")  # the kept answer is used, no import
    with pytest.raises(NoDevice, match="no HIP build"):
        gpu_usable(found, "rocm", "AMD Instinct MI300X")
