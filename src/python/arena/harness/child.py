"""The harness child, the judge: one fresh process that checks and times one candidate, which runs
in a worker process of its own (worker.py).

Order matters: ask to die with the parent; start the worker (it imports torch beside us); import
torch and the harness's own modules (this may happen long before the job exists: see
launch.Standby); read the job (task, settings, paths, secret seed, result key) from stdin; then
run.Run: hand the worker its task, draw every input set and compute every reference output, load
the trusted baseline, and only then have the worker build and import the candidate. Just before
that, the judge marks its result descriptor (job.CANDIDATE_MARK): a judge that ends without a
frame after the mark ended with candidate code alive, which is the candidate's verdict, charged;
and from the mark on, a catchable signal sent to the judge (ALARMS) is CHEAT_DETECTED. The result
leaves as one signed frame on the descriptor the parent opened, which is then closed. This module
is the only place that catches broad exceptions: whatever the candidate does becomes a status.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import resource
import signal
import sys
import traceback
import types
from typing import TYPE_CHECKING, NoReturn

# A killed runner must not leave children holding a GPU: Linux kills us when the parent goes.
from arena.harness.apart import die_with_parent

if TYPE_CHECKING:
    from arena.harness.result import HarnessResult
    from arena.harness.run import Run

# Signals a process may catch that only a process of this sandbox could send the judge (the parent
# kills with SIGKILL; the judge has a session of its own): while the candidate's code runs, the
# candidate's, where its worker could name the judge at all (apart.py).
ALARMS = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGTSTP", "SIGTTIN", "SIGTTOU")


def leave_working_folder_off_the_path() -> None:
    """`python -m` puts the working folder (the job's scratch, which candidate code writes) first
    on the import path; PYTHONSAFEPATH keeps it off from Python 3.11 on, this on older ones. A
    module imported later by name must come from the explicit roots, never from there."""
    here = os.path.realpath(os.getcwd())
    sys.path[:] = [p for p in sys.path if p and os.path.realpath(p) != here]


# PATH as the parent gave it (its first folder the job's `python` shims): for a repository's own
# build and bench commands (backends/repository.py), which are candidate code anyway.
COMMAND_PATH = "ARENA_COMMAND_PATH"


def keep_job_folders_off_the_command_path() -> None:
    """The job's folders (HOME, TMPDIR, the working folder: the candidate's processes write there)
    off this process's PATH, and Triton's C compiler named by an absolute path (CC): a tool the
    judge, or a worker it starts, runs by name after candidate code has run (nvidia-smi for the
    clock sample, the compiler of Triton's launcher) must never be one the candidate planted there
    (docs/harness.md, cheat 36)."""
    import shutil

    given = os.environ.get("PATH", "")
    job = [os.path.realpath(p) for p in (os.environ.get("HOME"), os.environ.get("TMPDIR"), os.getcwd()) if p]
    kept = [p for p in given.split(os.pathsep) if p and not _inside(os.path.realpath(p), job)]
    os.environ.setdefault(COMMAND_PATH, given)
    os.environ["PATH"] = os.pathsep.join(kept)
    if "CC" not in os.environ:
        compiler = shutil.which("gcc") or shutil.which("clang")
        if compiler:
            os.environ["CC"] = os.path.realpath(compiler)


def _inside(path: str, folders: list[str]) -> bool:
    return any(path == folder or path.startswith(folder.rstrip(os.sep) + os.sep) for folder in folders)


def _preload() -> None:
    """What every job needs, imported before the job arrives (and before any candidate code, so
    timing.py seizes the clock functions as torch defines them). Not Triton: its language
    functions are made interpreted or compiled when it is imported, and only the job says which."""
    import torch  # noqa: F401

    from arena.harness import check, device, inputs, timing  # noqa: F401


def main() -> None:
    die_with_parent()
    leave_working_folder_off_the_path()
    keep_job_folders_off_the_command_path()  # before the worker starts: it inherits the result
    from arena.harness.candidate_worker import CandidateWorker

    # The candidate's process first: its `import torch` runs beside ours, not after it (on the
    # H200 the job waited 3.8-5.1 s for a worker started after the judge's import).
    worker = CandidateWorker()
    _preload()
    from arena.harness.device import select_backend
    from arena.harness.job import Job
    from arena.harness.run import Run

    request = sys.stdin.buffer.read()
    sys.stdin.close()
    if not request:  # a standby closed without a job
        worker.close()
        os._exit(0)
    job = Job.from_json(request)
    key, fd = job.key_bytes, job.result_fd
    os.set_inheritable(fd, False)  # builds and any grandchild never get the result descriptor
    set_limits(select_backend(str(job.settings["backend"])))  # "auto" on a machine without a GPU: cpu
    run = Run(job, worker)
    del job  # the key stays only in this frame's locals
    watch = Watch(fd)
    run.on_candidate = watch.candidate_alive
    result = _executed(run)
    watch.raising = False  # from here on only noted: nothing may break the frame's writing
    try:
        run.close()
    except BaseException as error:  # noqa: BLE001 - a worker that will not end is killed by the sandbox
        result = dataclasses.replace(result, errors=(*result.errors, f"the candidate's worker did not end: {error}"))
    if watch.seen and result.status != "CHEAT_DETECTED":
        message = f"the judge was sent {', '.join(watch.seen)} while the candidate's code was running"
        result = dataclasses.replace(result, status="CHEAT_DETECTED", correct=False, errors=(message, *result.errors))
    left = _processes_left_behind()
    if left:
        message = f"the candidate left {left} process(es) running; the sandbox's PID namespace killed them"
        result = dataclasses.replace(result, errors=(*result.errors, message))
    from arena.harness.channel import sign_frame

    frame = sign_frame(key, result.to_json())
    view = memoryview(frame)
    while view:
        view = view[os.write(fd, view) :]
    os.close(fd)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # no candidate atexit hook or finalizer runs after the result


def _executed(run: Run) -> HarnessResult:
    """The run's result: whatever it raised becomes a status here, the process edge (a verdict
    raised, a compile or runtime error of the stage it came in), except a failure of the judge's
    own setup before anything of the candidate's ran, which leaves no verdict (_no_verdict): a
    Verdict raised there too (the judge's calibration of empty chunks, which only harness code
    runs, once read as the candidate's RUNTIME_ERROR: bench/results/2026-12-06.md)."""
    from arena.harness.run import cut
    from arena.harness.verdict import Verdict

    try:
        return run.execute()
    except BaseException as error:  # noqa: BLE001 - the process edge: any failure is a result
        if run.stage == "setup" and not run.candidate_touched:
            _no_verdict(run)
        if isinstance(error, Verdict):
            return run.finish(error.status, [str(error)])
        compiling = run.stage == "compile" or (run.stage == "first call" and "Compil" in type(error).__name__)
        status = "COMPILE_ERROR" if compiling else "RUNTIME_ERROR"
        return run.finish(status, [f"{run.stage}: {type(error).__name__}: {error}", cut(traceback.format_exc())])


def _no_verdict(run: Run) -> NoReturn:
    """End without a result (SETUP_FAILED): the parent's result is then a fault of the harness,
    run again and refunded, not a verdict charged to a candidate none of whose code ran (a node
    whose GPU runtime refuses what the judge needs would otherwise fail every candidate)."""
    from arena.harness.job import SETUP_FAILED

    traceback.print_exc()  # into the log tail the parent keeps
    sys.stderr.flush()
    with contextlib.suppress(BaseException):
        run.close()
    os._exit(SETUP_FAILED)


class Watch:
    """The judge's watch on its own end: the mark on the result descriptor before candidate code may
    run, and from then on each of ALARMS that arrives, a verdict (raised once, then only noted)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.seen: list[str] = []
        self.raising = True

    def candidate_alive(self) -> None:
        from arena.harness.job import CANDIDATE_MARK

        os.write(self.fd, CANDIDATE_MARK)
        for name in ALARMS:
            signal.signal(getattr(signal, name), self._alarm)

    def _alarm(self, number: int, frame: types.FrameType | None) -> None:
        from arena.harness.verdict import Verdict

        name = signal.Signals(number).name
        self.seen.append(name)
        if self.raising:
            self.raising = False
            raise Verdict("CHEAT_DETECTED", f"the judge was sent {name} while the candidate's code was running")


def _processes_left_behind() -> int:
    """Inside the sandbox's PID namespace, the processes besides its init (1) and this one: what
    the candidate started and left running. Outside a sandbox, 0 (the host's are not ours)."""
    if os.environ.get("ARENA_SANDBOXED") != "1":
        return 0
    mine = {1, os.getpid()}
    return sum(1 for entry in os.listdir("/proc") if entry.isdigit() and int(entry) not in mine)


def set_limits(backend: str) -> None:
    """The kernel's backstop behind the parent's watch (arena/limits/confine.py: no core dumps, files
    <= 1 GiB, a cap on the user's tasks, the OOM killer's first choice). Address space is capped
    only on the CPU backend: CUDA and ROCm reserve far more virtual memory than they use."""
    from arena.limits.limits import confine_self, job_limits

    confine_self(job_limits())
    if backend == "cpu":
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        limit = int(min(total * 0.75, 64 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


if __name__ == "__main__":
    main()
