"""One harness job for a child that runs elsewhere: in the pinned container or on a pool worker.

The parent-side steps of arena.harness.launch.run_harness, with the child's folders named as the
child will see them: the static check of the candidate, the task/baseline/candidate folders (laid
out by the harness itself), the job document the child reads on stdin, and the checks on the
signed frame that comes back. The child is the same `python3 -m arena.harness.child`.
"""

from __future__ import annotations

import dataclasses
import secrets
from pathlib import Path
from typing import Any, Mapping

from arena.candidate.candidate import Candidate, baseline_candidate
from arena.harness.channel import ChannelError, open_frame
from arena.harness.forbidden import check_candidate
from arena.harness.launch import _check_case_names, _lay_out, make_folders
from arena.harness.result import HarnessResult
from arena.harness.settings import HarnessSettings
from arena.task.codec import task_to_dict
from arena.task.task import Task

SHIPPED = ("task", "baseline", "candidate")  # the folders a child elsewhere receives (read-only)
SCRATCH = ("work", "home", "triton")  # the folders it makes itself, on scratch space
RESULT_FD = 3  # the descriptor the child writes its frame to, opened by the command around it
LOG_BYTES = 4096  # of each of stdout and stderr, kept in a failure's errors


def screen_candidate(
    task: Task, candidate: Candidate | None, repo_root: Path
) -> tuple[Candidate, HarnessResult | None]:
    """The candidate to run (None: the baseline), and a CHEAT_DETECTED result if the static check
    already refuses it (then nothing is started)."""
    baseline = baseline_candidate(task, repo_root)
    chosen = candidate or baseline
    findings = check_candidate(chosen.files, baseline.files, task.forbidden)
    if findings:
        return chosen, HarnessResult(
            status="CHEAT_DETECTED", compiled=False, correct=False, errors=tuple(map(str, findings))
        )
    return chosen, None


def lay_out_job(task: Task, candidate: Candidate, repo_root: Path, folder: Path) -> None:
    """folder/{task,baseline,candidate}: the harness's own layout (the reference only in task/)."""
    make_folders(folder)
    _lay_out(task, candidate, repo_root, folder)


def new_job(task: Task, settings: HarnessSettings, dirs: Mapping[str, str], key: bytes) -> dict[str, Any]:
    """The document the child reads on stdin; `dirs` are paths as the child sees them."""
    secret = settings.secret_seed if settings.secret_seed is not None else secrets.randbits(63)
    return {
        "task": task_to_dict(task),
        "settings": dataclasses.asdict(settings),
        "dirs": dict(dirs),
        "secret_seed": secret,
        "key": key.hex(),
        "result_fd": RESULT_FD,
    }


def read_result(frame: bytes, key: bytes, log: str, task: Task, settings: HarnessSettings) -> HarnessResult:
    """The child's result if `frame` is one frame signed with `key` naming only the task's cases."""
    if not frame:
        return failure("RUNTIME_ERROR", "the child ended without a result", log)
    try:
        result = HarnessResult.from_json(open_frame(key, frame))
    except ChannelError as error:
        return failure("CHEAT_DETECTED", f"result channel tampered with: {error}", log)
    except (ValueError, KeyError, TypeError) as error:
        return failure("CHEAT_DETECTED", f"signed result does not parse: {type(error).__name__}", log)
    return _check_case_names(result, task, settings)


def failure(status: str, message: str, log: str = "") -> HarnessResult:
    return HarnessResult(
        status=status, compiled=False, correct=False, errors=tuple(e for e in (message, log) if e)
    )


def log_tail(stdout: bytes, stderr: bytes) -> str:
    """The last LOG_BYTES of each stream, labelled, as the harness reports them."""
    text = ""
    for name, data in (("stdout", stdout), ("stderr", stderr)):
        if data:
            tail = bytes(data[-LOG_BYTES:]).decode(errors="replace")
            text += f"--- {name} (last {min(len(data), LOG_BYTES)} bytes) ---\n{tail}\n"
    return text
