"""The harness job protocol: what a parent hands a harness child, and what it believes back.

One definition for every place a child runs (this host: launch.py; the pinned image and a pool
worker: arena.executors) and for the child itself (child.py):
- the folders of a job: task/, baseline/, candidate/ (shipped, read-only to the child) and
  work/, home/, triton/ (scratch the child writes);
- the screen before anything starts (the static check of the candidate's sources);
- the job document the child reads on stdin (Job), with the per-run result key;
- the frame that comes back: one HMAC-signed HarnessResult (channel.py) naming only the task's
  cases, after the judge's marks (CANDIDATE_MARK: from here on candidate code may run), and the
  failure results a parent makes when no such frame arrives: the candidate's when its code was
  running (charged), a fault of the harness otherwise (retried and refunded).
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from arena.candidate.candidate import Candidate, baseline_candidate, write_candidate
from arena.harness.channel import ChannelError, open_frame
from arena.harness.forbidden import check_candidate
from arena.harness.result import HarnessResult
from arena.harness.settings import HarnessSettings
from arena.harness.version import check_sources
from arena.task.codec import task_to_dict
from arena.task.task import Task

SHIPPED = ("task", "baseline", "candidate")  # laid out by the parent, read-only to the child
SCRATCH = ("work", "home", "triton")  # the child's cwd, HOME and Triton cache
FOLDERS = SHIPPED + SCRATCH
RESULT_FD = 3  # the child's result descriptor where a shell opens it (container, pool worker)
RESULT_LIMIT = 64 << 20  # a result frame larger than this is not ours
LOG_TAIL = 64 * 1024  # bytes a parent keeps of each of stdout and stderr
LOG_BYTES = 4096  # of each stream, quoted in a failure's errors
# Written by the judge on its result descriptor, ahead of the frame, before the candidate's code is
# built or loaded: a judge that ends without a frame after it ended with candidate code alive.
CANDIDATE_MARK = b"~candidate\n"
SETUP_FAILED = 70  # the child's exit when the judge's own setup failed before any candidate code


class JobError(ValueError):
    """The bytes on the child's stdin are not a job document."""


@dataclass(frozen=True)
class Job:
    """One run: the task (task_to_dict), the settings, the folders as the child sees them, the
    secret seed of the hidden cases, the result key (hex) and the result descriptor's number."""

    task: Mapping[str, Any]
    settings: Mapping[str, Any]
    dirs: Mapping[str, str]
    secret_seed: int
    key: str
    result_fd: int = RESULT_FD

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self) -> bytes:
        return json.dumps(self.to_dict()).encode()

    def canonical_json(self) -> bytes:
        """One text per job (sorted keys, no spaces): what a derived key is computed over."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, data: bytes) -> Job:
        try:
            raw = json.loads(data)
            job = cls(
                task=dict(raw["task"]),
                settings=dict(raw["settings"]),
                dirs={str(k): str(v) for k, v in raw["dirs"].items()},
                secret_seed=int(raw["secret_seed"]),
                key=str(raw["key"]),
                result_fd=int(raw["result_fd"]),
            )
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise JobError(f"not a harness job: {type(error).__name__}: {error}") from None
        if set(job.dirs) != set(FOLDERS):
            raise JobError(f"a job names the folders {', '.join(FOLDERS)}")
        return job

    @property
    def key_bytes(self) -> bytes:
        return bytes.fromhex(self.key)


def new_job(
    task: Task, settings: HarnessSettings, dirs: Mapping[str, str], key: bytes, result_fd: int = RESULT_FD
) -> Job:
    """The job for `task`, with only the cases settings.cases names (select_cases: every executor
    builds its job here, so none runs a case it was not asked for); `dirs` are the folders as the
    child will see them. The secret seed is the settings' (tests fix it) or drawn now."""
    secret = settings.secret_seed if settings.secret_seed is not None else secrets.randbits(63)
    return Job(
        task=task_to_dict(select_cases(task, settings)),
        settings=dataclasses.asdict(settings),
        dirs=dict(dirs),
        secret_seed=secret,
        key=key.hex(),
        result_fd=result_fd,
    )


def screen_candidate(
    task: Task, candidate: Candidate | None, repo_root: Path
) -> tuple[Candidate, HarnessResult | None]:
    """The candidate to run (None: the baseline, a no-op), and a CHEAT_DETECTED result when the
    static check already refuses it (then nothing is started). Every parent calls this first, so
    it is also where the trusted sources are checked against the pin (SourcesChanged)."""
    check_sources()
    baseline = baseline_candidate(task, repo_root)
    chosen = candidate or baseline
    findings = check_candidate(chosen.files, baseline.files, task.forbidden)
    if findings:
        return chosen, HarnessResult(
            status="CHEAT_DETECTED", compiled=False, correct=False, errors=tuple(map(str, findings))
        )
    return chosen, None


def select_cases(task: Task, settings: HarnessSettings) -> Task:
    """`task` with only the cases settings.cases names (all when it names none); a name the task
    does not declare is a ValueError: a run never checks, or times, what its caller did not ask for."""
    if not settings.cases:
        return task
    unknown = sorted(set(settings.cases) - {case.name for case in task.cases})
    if unknown:
        raise ValueError(f"{task.address} has no case named {', '.join(map(repr, unknown))}")
    return dataclasses.replace(task, cases=tuple(case for case in task.cases if case.name in settings.cases))


def make_folders(root: Path, names: tuple[str, ...] = FOLDERS) -> dict[str, Path]:
    """root/<name> for each of `names`, made when missing."""
    folders = {name: root / name for name in names}
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    return folders


def lay_out(task: Task, candidate: Candidate, repo_root: Path, root: Path) -> dict[str, Path]:
    """root/{task,baseline,candidate}: task/ holds every task file (the reference included);
    baseline/ and candidate/ the same without the reference (a candidate cannot import the
    oracle), candidate/ overlaid with the candidate's files. Returns the shipped folders."""
    source = repo_root / task.task_dir
    reference = task.reference.file if task.reference is not None else None
    dirs = make_folders(root, SHIPPED)
    for name in task.all_files():
        for target in SHIPPED:
            if target != "task" and name == reference and name not in task.baseline:
                continue
            origin, destination = source / name, dirs[target] / name
            destination.parent.mkdir(parents=True, exist_ok=True)
            if origin.is_dir():
                shutil.copytree(origin, destination, dirs_exist_ok=True)
            elif origin.is_file():
                shutil.copyfile(origin, destination)
    write_candidate(candidate, dirs["candidate"])
    return dirs


def read_result(frame: bytes, key: bytes, log: str, task: Task, settings: HarnessSettings) -> HarnessResult:
    """The child's result if `frame` is one frame signed with `key` naming only the task's cases;
    otherwise the failure that says why."""
    marks, frame = split_marks(frame)
    if not frame:
        return without_result("ended", marks, log)
    try:
        result = HarnessResult.from_json(open_frame(key, frame))
    except ChannelError as error:
        return failure("CHEAT_DETECTED", f"result channel tampered with: {error}", log)
    except (ValueError, KeyError, TypeError) as error:
        return failure("CHEAT_DETECTED", f"signed result does not parse: {type(error).__name__}", log)
    return check_case_names(result, task, settings)


def split_marks(data: bytes) -> tuple[frozenset[bytes], bytes]:
    """The judge's marks at the head of what its result descriptor carried (lines that start with
    "~"), and the rest: the frame, or nothing."""
    marks = set()
    while data.startswith(b"~"):
        line, newline, rest = data.partition(b"\n")
        if not newline:
            break
        marks.add(line + newline)
        data = rest
    return frozenset(marks), data


def without_result(ending: str, marks: frozenset[bytes], log: str) -> HarnessResult:
    """The parent's result for a judge that `ending` ("was killed by SIGKILL", ...) without a
    frame. With the candidate's code alive (CANDIDATE_MARK), the run is the candidate's: its worker
    cannot signal the judge (apart.py), so what ended or stalled the judge came while its code ran
    (memory it took, a daemon it left): RUNTIME_ERROR, charged. Before that, no candidate code had
    run: the harness left no verdict (a fault: run again, and refunded if it keeps failing)."""
    if CANDIDATE_MARK in marks:
        return failure(
            "RUNTIME_ERROR", f"the judge {ending} without a result while the candidate's code was running", log
        )
    return failure("RUNTIME_ERROR", f"the child {ending} without a result", log, fault=True)


def check_case_names(result: HarnessResult, task: Task, settings: HarnessSettings) -> HarnessResult:
    """A signed result may only name the cases asked for and their hidden copies, each once."""
    task = select_cases(task, settings)
    expected = [c.name for c in task.cases] + [
        f"{c.name}~hidden{i}" for c in task.cases for i in range(settings.hidden_seeds)
    ]
    names = [c.name for c in result.cases]
    if (
        len(set(names)) != len(names)
        or not set(names) <= set(expected)
        or (result.status == "PASSED" and set(names) != set(expected))
    ):
        return failure("CHEAT_DETECTED", "the result's cases do not match the task's")
    return result


def failure(status: str, message: str, log: str = "", fault: bool = False) -> HarnessResult:
    """A result the parent makes itself: nothing compiled or checked, `message` and the log;
    `fault`: the harness left no verdict at all (HarnessResult.harness_fault says why)."""
    return HarnessResult(
        status=status,
        compiled=False,
        correct=False,
        errors=tuple(e for e in (message, log) if e),
        harness_fault=message if fault else "",
    )


def log_tail(stdout: bytes, stderr: bytes) -> str:
    """The last LOG_BYTES of each stream, labelled."""
    text = ""
    for name, data in (("stdout", stdout), ("stderr", stderr)):
        if data:
            tail = bytes(data[-LOG_BYTES:]).decode(errors="replace")
            text += f"--- {name} (last {min(len(data), LOG_BYTES)} bytes) ---\n{tail}\n"
    return text
