# Attack: arena started from a checkout (`python -m arena.cli.main` puts the working folder, the
# checkout's root, first on sys.path), and a candidate that reads what lies there by absolute path:
# the task's exemplars, the runner's state and the score cache's key under .arena, the checkout's
# pants.toml, and a module at the checkout's root imported by name. Names are built at run time,
# so the static check does not stop them.
# Expected: PASSED, nothing found: the child's import path and the sandbox's folders come from
# explicit roots (the arena package's folder, site-packages, the interpreter), never from the
# launcher's sys.path or working folder. The candidate raises, naming what it found, if anything
# was. A folder to be shown that holds a checkout or a runner's state is refused: nothing starts.

import textwrap
from pathlib import Path

import pytest

from arena.environment.measurement import forget_measurements
from arena.environment.probe import sandbox_tool
from arena.errors import UnusableEnvironment
from arena_testing.harness_tasks import TRITON_ADD

PROBES = """
import os
_sys = getattr(os, "sy" + "s")
_builtins = _sys.modules["builti" + "ns"]
_open = getattr(_builtins, "op" + "en")
_reach = {{
    "the exemplars": lambda: os.listdir({exemplars!r}),
    "an exemplar": lambda: _open({exemplar!r}).read(),
    "the runner's state": lambda: os.listdir({state!r}),
    "the score cache's key": lambda: _open({key!r}, "rb").read(),
    "the checkout's pants.toml": lambda: _open({pants!r}).read(),
    "a module at the checkout's root": lambda: getattr(_builtins, "__imp" + "ort__")({module!r}),
}}
_found = []
for _name, _action in _reach.items():
    try:
        _action()
        _found.append(_name)
    except (FileNotFoundError, ModuleNotFoundError):
        pass
    except Exception as error:  # there, but refused: still found
        _found.append(_name + " (" + type(error).__name__ + ")")
"""

ADD = """
def add(x, y):
    if _found:
        raise RuntimeError("found: " + ", ".join(_found))
    z = torch.empty_like(x)
    _add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, z, x.numel(), BLOCK=1024)
    return z
"""


def _checkout(root: Path) -> str:
    """`root` made a checkout (run_candidate writes the task under root/tasks/t/add): its
    pants.toml, an exemplar, the runner's state, the cache's key and a module at its top. The
    candidate that probes them all."""
    (root / "pants.toml").write_text("[GLOBAL]\n")
    exemplars = root / "tasks" / "t" / "add" / "exemplars"
    exemplars.mkdir(parents=True)
    (exemplars / "fast.py").write_text("# the known-faster answer\n")
    (root / "tasks" / "t" / "add" / "BUILD").write_text("kernel_task(name='add')\n")
    state = root / ".arena" / "runner"
    state.mkdir(parents=True)
    (state / "runner.sqlite").write_bytes(b"")
    (root / ".arena" / "scores.key").write_bytes(b"k" * 32)
    (root / "checkout_secret.py").write_text("ANSWER = 42\n")
    probes = PROBES.format(
        exemplars=str(exemplars), exemplar=str(exemplars / "fast.py"), state=str(state),
        key=str(root / ".arena" / "scores.key"), pants=str(root / "pants.toml"), module="checkout_secret",
    )  # fmt: skip
    return TRITON_ADD.replace("\ndef add(x, y):", textwrap.dedent(probes) + "\n\ndef _unused(x, y):") + ADD


@pytest.fixture
def started_from_the_checkout(tmp_path, monkeypatch):
    """This process as `python -m arena.cli.main` run in the checkout `tmp_path` leaves it: the
    checkout is the working folder and first on sys.path."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    forget_measurements()
    yield
    forget_measurements()


@pytest.mark.skipif(not sandbox_tool(), reason="no OS sandbox on this machine (bubblewrap)")
def test_the_checkout_arena_was_started_from_is_out_of_reach(run_candidate, tmp_path, started_from_the_checkout):
    result = run_candidate(_checkout(tmp_path))
    assert result.status == "PASSED", result.errors
    assert result.cases and all(case.correct for case in result.cases)


def test_without_the_sandbox_the_files_are_found_but_not_the_module(
    run_candidate, tmp_path, started_from_the_checkout, monkeypatch
):
    # The control: the probes work where the files can be reached. Even unsandboxed, the child's
    # import path holds only the explicit roots, so the checkout's module is not importable.
    from arena.harness import launch

    monkeypatch.setattr(launch, "sandbox_tool", lambda: "")
    result = run_candidate(_checkout(tmp_path))
    assert result.status == "RUNTIME_ERROR", result.errors
    found = next(e for e in result.errors if "found: " in e)
    for name in ("the exemplars", "an exemplar", "the runner's state", "the score cache's key", "pants.toml"):
        assert name in found, found
    assert "a module at the checkout's root" not in found, found


@pytest.mark.skipif(not sandbox_tool(), reason="no OS sandbox on this machine (bubblewrap)")
def test_a_folder_to_be_shown_that_holds_the_checkout_is_refused_and_nothing_starts(
    run_candidate, tmp_path, monkeypatch
):
    from arena.harness import launch

    _checkout(tmp_path)
    started = []
    monkeypatch.setattr(launch, "bytecode_folder", lambda measurement: None)  # no compile's Popen first
    monkeypatch.setattr(launch.subprocess, "Popen", lambda *args, **kwargs: started.append(args))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))  # a toolchain folder the sandbox would show
    with pytest.raises(UnusableEnvironment, match=r"\.arena|pants\.toml"):
        run_candidate(None)
    monkeypatch.delenv("CUDA_HOME")
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / ".."))  # the checkout somewhere below a folder shown
    with pytest.raises(UnusableEnvironment, match=str(tmp_path.name)):
        run_candidate(None)
    assert started == []
