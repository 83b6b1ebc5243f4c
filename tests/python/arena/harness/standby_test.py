"""Children started ahead of their job (launch.Child, launch.Standby): ready early, used once."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from arena.harness import launch
from arena.harness.launch import Child, Standby, run_harness
from arena.harness.settings import HarnessSettings
from arena_testing.harness_tasks import build_task

SETTINGS = HarnessSettings(backend="cpu", timeout_s=120, cases=("small",))


def _wait(predicate, timeout_s: float = 90.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def _python_of(child: Child) -> int:
    """The pid of the child's Python: the process itself, or, inside the sandbox, the last of
    bubblewrap's descendants."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    pid = child.process.pid
    while True:
        below = [p for p, parent in parents.items() if parent == pid]
        if not below:
            return pid
        pid = below[0]


def _waits_for_its_job(child: Child) -> bool:
    """Blocked in read() on stdin (x86-64 syscall 0, fd 0), or in a pipe read where the kernel
    hides syscalls: the only pipe a child reads is stdin, after its imports."""
    proc = Path(f"/proc/{_python_of(child)}")
    try:
        syscall = (proc / "syscall").read_text().split()
        if syscall[:2] == ["0", "0x0"]:
            return True
        return "pipe_read" in (proc / "wchan").read_text()
    except OSError:
        return False


def _has_torch(child: Child) -> bool:
    try:
        return "libtorch_python" in Path(f"/proc/{_python_of(child)}/maps").read_text()
    except OSError:
        return False


def test_a_waiting_child_has_torch_imported_before_its_job_exists() -> None:
    child = Child()
    try:
        # Both at once, waited for: under load the child was once caught in another pipe read
        # during its imports (a fresh-clone CI run), before torch was mapped.
        assert _wait(lambda: _waits_for_its_job(child) and _has_torch(child)), (
            "the child never waited for its job with torch imported"
        )
        assert child.ready()
    finally:
        child.close()
    assert child.process.returncode is not None and not child.work.exists()


def test_a_child_closed_without_a_job_exits_cleanly() -> None:
    child = Child()
    assert child.process.stdin is not None
    child.process.stdin.close()
    assert child.process.wait(timeout=120) == 0
    child.close()


def test_each_run_uses_the_waiting_child_once_and_starts_the_next(tmp_path: Path) -> None:
    task, standby = build_task(tmp_path), Standby()
    try:
        first = run_harness(task, None, tmp_path, SETTINGS, standby=standby)
        waiting = standby._next
        assert first.status == "PASSED", first.errors
        assert waiting is not None and waiting.ready()
        second = run_harness(task, None, tmp_path, SETTINGS, standby=standby)
        assert second.status == "PASSED", second.errors
        assert waiting.process.returncode is not None and not waiting.work.exists()  # used, then gone
        assert standby._next is not None and standby._next is not waiting
    finally:
        standby.close()
    assert standby._next is None


def test_a_standby_for_one_job_starts_no_second_child(tmp_path: Path) -> None:
    task, standby = build_task(tmp_path), Standby(again=False)
    try:
        standby.warm()
        waiting = standby._next
        result = run_harness(task, None, tmp_path, SETTINGS, standby=standby)
        assert result.status == "PASSED", result.errors
        assert waiting is not None and not waiting.work.exists()  # the one started ahead was used
        assert standby._next is None
    finally:
        standby.close()


def test_a_dead_waiting_child_is_replaced(tmp_path: Path) -> None:
    task, standby = build_task(tmp_path), Standby()
    try:
        standby.take().close()
        waiting = standby._next
        assert waiting is not None
        waiting.process.kill()
        waiting.process.wait()
        result = run_harness(task, None, tmp_path, SETTINGS, standby=standby)
        assert result.status == "PASSED", result.errors
        assert not waiting.work.exists()
    finally:
        standby.close()


def test_a_child_started_before_the_harness_sources_changed_is_not_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    standby = Standby()
    try:
        standby.take().close()
        stale = standby._next
        assert stale is not None
        monkeypatch.setattr(launch, "trusted_digest", lambda: "sources edited since")
        fresh = standby.take()
        assert fresh is not stale and stale.process.returncode is not None
        assert fresh.trusted_digest == "sources edited since"
        fresh.close()
    finally:
        standby.close()


def test_a_child_dies_with_the_thread_that_started_it() -> None:
    """Why a Standby belongs to one long-lived thread: Linux's parent-death signal follows the
    starting thread, so a lane thread that ends takes its waiting child with it."""
    standby = Standby()

    def lane() -> None:
        standby.take().close()
        waiting = standby._next
        assert waiting is not None and _wait(lambda: _waits_for_its_job(waiting))  # signal asked for

    thread = threading.Thread(target=lane)
    thread.start()
    thread.join()
    orphan = standby._next
    assert orphan is not None
    try:
        assert _wait(lambda: orphan.process.poll() is not None, 30)
        assert not orphan.ready()
        child = standby.take()  # replaced, not handed out dead
        assert child is not orphan and child.process.poll() is None
        child.close()
    finally:
        standby.close()


def test_a_child_reads_the_parents_byte_code_through_its_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the environment ships no byte code, the child is given the parent's compile of it
    (bytecode.py), shown read-only: the run works and the child writes nothing there."""
    folder = tmp_path / "bytecode"
    folder.mkdir(mode=0o755)
    monkeypatch.setattr(launch, "bytecode_folder", lambda measurement: folder)
    child = Child()
    try:
        assert child.bytecode == folder
        if child.sandbox:
            assert str(folder) in child.shown
    finally:
        child.close()
    result = run_harness(build_task(tmp_path / "task"), None, tmp_path / "task", SETTINGS)
    assert result.status == "PASSED", result.errors
    assert list(folder.iterdir()) == []
