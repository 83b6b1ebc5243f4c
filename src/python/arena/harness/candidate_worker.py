"""The judge's handle on its candidate worker: start it, ask it things, freeze it, end it.

The worker is a child of the judge in the same sandbox (sandbox.py), started with only its two
pipes open, and goes into user and PID namespaces of its own first thing (apart.py): the process
the judge started is a waiter, the worker its grandchild, and no process of the judge's namespace
(the judge least of all) can be named from the worker's, to signal or ptrace it. The judge makes
itself non-dumpable too, so its memory stays closed through /proc: the references, the seeds and
the result key stay out of reach. Freezing stops every process of the sandbox except its init,
the judge and the judge's own helpers (the clock sampler): the worker, whatever it started, and
daemons that left it for the init.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence

from arena.harness.frames import WorkerError, receive, send

REPLY_LIMIT = 8 << 30


class CandidateFailed(Exception):
    """A request the candidate's code failed (import error, exception in the call, ...)."""

    def __init__(self, message: str, kind: str = "", trace: str = "") -> None:
        super().__init__(message)
        self.kind, self.trace = kind, trace


def not_dumpable() -> None:
    """This process's memory and descriptors closed through /proc to others of its uid (the judge,
    and a baseline's own worker once loaded)."""
    if sys.platform.startswith("linux"):
        pr_set_dumpable = 4
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_dumpable, 0)


def _widen(fd: int) -> None:
    """The pipe's buffer at the most an unprivileged process may ask (1 MiB by default, not 64
    KiB): a checked call's outputs of many MiB then cross in far fewer wake-ups of each side."""
    try:
        import fcntl

        limit = int(Path("/proc/sys/fs/pipe-max-size").read_text())
        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), limit)
    except (OSError, ValueError, ImportError):
        pass  # not Linux, or the limit is lower: the default buffer still works


# The processes of the judge's own workers (a baseline's, baseline_apart.py): never frozen with
# the candidate's, nor counted among the processes the candidate left running.
_TRUSTED: set[int] = set()


def _import_path() -> str:
    return os.pathsep.join(os.path.abspath(p) for p in sys.path if p and os.path.isdir(p))


class CandidateWorker:
    def __init__(self) -> None:
        """Started in the judge's working folder; it imports torch while the judge waits for its job."""
        not_dumpable()
        self.settled_threads: int | None = None  # settle(): the worker's own threads
        self.settled_ids: frozenset[str] = frozenset()  # settle(): every thread's id then
        self.settled_all: int | None = None  # settle(every_thread=True): every thread then, named or not
        requests_r, self._requests = os.pipe()
        self._replies, replies_w = os.pipe()
        for fd in (self._requests, self._replies):
            _widen(fd)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "arena.harness.worker", str(requests_r), str(replies_w)],
            pass_fds=(requests_r, replies_w),
            stdin=subprocess.DEVNULL,
            # The judge's own import path, whoever started the judge (the launcher, a test, a bench).
            # Inductor compiles in the worker itself, not in a pool of processes that would stay
            # behind and read as processes the candidate left running.
            env=dict(os.environ, PYTHONPATH=_import_path(), TORCHINDUCTOR_COMPILE_THREADS="1"),
            start_new_session=True,  # outside a sandbox, the process group is what freezing stops
        )
        os.close(requests_r)
        os.close(replies_w)
        self.frozen = False
        self._own: tuple[int, ...] = ()  # the waiter, and the init and the worker once found

    @property
    def pid(self) -> int:
        """The worker's own process, as the judge's PID namespace numbers it."""
        return self._own_processes()[-1]

    def _own_processes(self) -> tuple[int, ...]:
        """The process the judge started, and when it went apart (apart.py) the init and the worker
        below it. Asked only once the worker has replied to `start` (it has gone apart by then)."""
        if len(self._own) in (1, 3):
            return self._own
        waiter = self.process.pid
        try:
            namespaces = {os.readlink(f"/proc/{waiter}/ns/{name}") for name in ("pid", "pid_for_children")}
        except OSError:  # it ended
            return (waiter,)
        if len(namespaces) == 1:
            self._own = (waiter,)
            return self._own
        parents = _parents()
        # The init is pid 1 of the new namespace and the worker pid 2 (the candidate's processes,
        # also the init's children once orphaned, come later): /proc/<pid>/status's NSpid says.
        init = next((pid for pid, parent in parents.items() if parent == waiter and _inner_pid(pid) == 1), 0)
        worker = next((pid for pid, parent in parents.items() if parent == init and _inner_pid(pid) == 2), 0)
        if not (init and worker):  # ended, or not started yet: ask again later
            return (waiter,)
        self._own = (waiter, init, worker)
        return self._own

    def send(self, op: str, header: dict[str, Any] | None = None, blobs: Sequence[bytes] = ()) -> None:
        try:
            send(self._requests, dict(header or {}, op=op), blobs)
        except OSError as error:
            raise WorkerError(f"the worker is gone ({error})") from None

    def receive(self) -> tuple[dict[str, Any], list[bytearray]]:
        header, blobs = receive(self._replies, REPLY_LIMIT)
        if not header.get("ok"):
            raise CandidateFailed(
                str(header.get("error", "the worker failed"))[:20000],
                str(header.get("kind", "")),
                str(header.get("trace", ""))[-8000:],
            )
        return header, blobs

    def request(
        self, op: str, header: dict[str, Any] | None = None, blobs: Sequence[bytes] = ()
    ) -> tuple[dict[str, Any], list[bytearray]]:
        self.send(op, header, blobs)
        return self.receive()

    def how_it_ended(self) -> str:
        """How the worker process ended (waiting briefly for it), for the message of a fault."""
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "it closed its pipe but still runs"
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exited with code {code} without a result"

    # -- freezing ---------------------------------------------------------------------------------
    def freeze(self) -> None:
        self._signal(signal.SIGSTOP)
        self.frozen = True

    def thaw(self) -> None:
        self._signal(signal.SIGCONT)
        self.frozen = False

    def _signal(self, sig: int) -> None:
        if os.environ.get("ARENA_SANDBOXED") != "1":
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                pass
            return
        for pid in self._sandbox_pids():
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    def _sandbox_pids(self) -> list[int]:
        """Every process in the sandbox's PID namespace but its init, the judge and the judge's
        own helpers (its children other than the worker)."""
        me, pids = os.getpid(), []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) in {1, me} or int(entry) in _TRUSTED:
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            if parent == me and int(entry) != self.process.pid:
                continue
            pids.append(int(entry))
        return pids

    def processes_started(self) -> int:
        """Processes the candidate started that still run: in a sandbox, every process of it but the
        worker, the judge, its helpers and the init; outside one, the worker's descendants that
        stayed in its tree (a daemon that left it is not seen: the sandbox is what bounds those)."""
        own = set(self._own_processes())
        if os.environ.get("ARENA_SANDBOXED") == "1":
            return sum(1 for pid in self._sandbox_pids() if pid not in own)
        parents = _parents()
        tree, grew = {self.process.pid}, True
        while grew:
            more = {pid for pid, parent in parents.items() if parent in tree} - tree
            tree |= more
            grew = bool(more)
        return len(tree - own)

    def settle(self, every_thread: bool = False) -> None:
        """The threads counted now (after the candidate's first call: the pools a library starts
        on first use exist) are the worker's own; left_running counts any beyond them, and with
        `every_thread` any beyond all of the threads now, whatever their names (a native thread
        that names itself as a runtime's is then counted too: where runs showed no runtime
        starting a thread after a first call, docs/harness.md)."""
        names = self._thread_names()  # one reading: the count and the ids agree
        self.settled_threads = _counted(names)
        self.settled_ids = frozenset(names)
        self.settled_all = len(names) if every_thread else None

    def left_running(self) -> str:
        """What the candidate left running beside its calls, counted by the kernel ('' for
        nothing): threads beyond the settled count, processes it started. The judge asks after
        the checked calls and after every timed chunk, so nothing of the candidate's can wait
        between chunks for the next chunk's inputs (#35 item 6)."""
        names = self._thread_names()
        now = _counted(names)
        more = now - (now if self.settled_threads is None else self.settled_threads)
        if self.settled_all is not None:
            more = max(more, len(names) - self.settled_all)
        if more > 0:
            named = self._named_since(names)
            also = f"; started under other names: {listed(named)}" if named else ""
            return (
                f"the candidate left {more} thread(s) running that its calls started (counted by the kernel: "
                f"work beside its calls that the timer does not see{also})"
            )
        started = self.processes_started()
        if started:
            return f"the candidate left {started} process(es) running beside its calls (work the timer does not see)"
        return ""

    def named_since_settled(self) -> dict[str, int]:
        """The threads started since settle() that _counted leaves out (they bear another
        name), by name: what the runtimes start after a first call, logged where they are not
        counted (settle without every_thread: docs/harness.md) so that a rule counting every
        thread can be judged against what honest runs show."""
        return self._named_since(self._thread_names())

    def _named_since(self, names: dict[str, str | None]) -> dict[str, int]:
        found: dict[str, int] = {}
        for tid, name in names.items():
            if name and tid not in self.settled_ids and name != _STARTED_AS:
                found[name] = found.get(name, 0) + 1
        return found

    def _thread_names(self) -> dict[str, str | None]:
        """Each of the worker's threads (its id in /proc/<pid>/task) with its name."""
        task = Path(f"/proc/{self.pid}/task")
        try:
            return {entry.name: _thread_name(entry) for entry in task.iterdir()}
        except OSError as error:
            raise WorkerError(f"the worker's threads cannot be counted: {error}") from None

    def close(self) -> None:
        if self.frozen:
            self.thaw()
        try:
            self.send("exit")
        except WorkerError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if os.environ.get("ARENA_SANDBOXED") != "1":  # in a sandbox, its PID namespace does this
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for fd in (self._requests, self._replies):
            try:
                os.close(fd)
            except OSError:
                pass


def trust(worker: CandidateWorker) -> None:
    """`worker`'s processes (it has answered `start`, so it has gone apart) are the judge's own."""
    _TRUSTED.update(worker._own_processes())


def untrust(worker: CandidateWorker) -> None:
    """`worker`'s processes trusted no more (it is closing): a pid the kernel gives out again,
    in a process that judges again (a bench's Runs), may be a candidate's."""
    _TRUSTED.difference_update(worker._own_processes())


# The name every thread Python or a plain pthread_create starts bears: the worker's executable's
# (the kernel keeps 15 bytes of a name).
_STARTED_AS = os.path.basename(sys.executable)[:15]


def _counted(names: dict[str, str | None]) -> int:
    """The threads counted among the worker's `names` (id -> name, as the kernel lists them in
    /proc/<pid>/task: no code in the worker can hide one): those that bear the name the worker
    started with (its executable's), as every thread Python or a plain pthread_create starts does,
    or none. The GPU runtimes name theirs (cuda-EvtHandlr, ...) and may start them when they like;
    settle(every_thread=True) counts those too. A renamed main thread changes nothing: the name is
    the executable's, not the main thread's now."""
    return sum(1 for name in names.values() if name in (_STARTED_AS, ""))


def listed(named: dict[str, int]) -> str:
    """Threads by name (named_since_settled) as one line: `name xcount`, by name."""
    return ", ".join(f"{name} x{count}" for name, count in sorted(named.items()))


def _parents() -> dict[int, int]:
    """Every process this PID namespace shows, with its parent."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    return parents


def _inner_pid(pid: int) -> int:
    """`pid`'s number in the innermost PID namespace it is in (0 when it cannot be read)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    line = next((line for line in status.splitlines() if line.startswith("NSpid:")), "")
    return int(line.split()[-1]) if line.split()[1:] else 0


def _thread_name(task: Path) -> str | None:
    """A thread's name (comm); None for one that ended while it was being read."""
    try:
        return (task / "comm").read_text().rstrip("\n")
    except OSError:
        return None
