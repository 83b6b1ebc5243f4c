"""The child's stage pipeline (arena.harness.run), in this process on the CPU backend: the stage
bookkeeping, how a run finishes, and whole runs of the add task (arena_testing.harness_tasks)."""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

import pytest

from arena.harness.job import Job
from arena.harness.run import LOG_LIMIT, Run, cut
from arena.harness.settings import HarnessSettings
from arena.harness.verdict import Verdict
from arena_testing.harness_tasks import TRITON_ADD, build_task, harness_job

# Every case of the add task, in the order the run checks them: each declared case, then its hidden copy.
CASES = ["small", "small~hidden0", "main", "main~hidden0"]


def make_job(root: Path, source: str | None = None, **settings: object) -> Job:
    """The job a parent would hand a child for the add task and `source` as kernel.py (None: the baseline)."""
    return harness_job(root, build_task(root), source, **settings)


def test_cut_keeps_a_short_log_and_the_end_of_a_long_one() -> None:
    assert cut("short") == "short"
    exact = "x" * LOG_LIMIT
    assert cut(exact) == exact
    long = "head-" + "y" * LOG_LIMIT + "-tail"
    assert cut(long) == "...\n" + long[-LOG_LIMIT:]
    assert cut(long).endswith("-tail") and "head-" not in cut(long)


def test_a_verdict_carries_its_status_and_message() -> None:
    verdict = Verdict("CHEAT_DETECTED", "patched a timer")
    assert verdict.status == "CHEAT_DETECTED" and str(verdict) == "patched a timer"


def test_a_run_starts_from_its_job(tmp_path: Path) -> None:
    job = make_job(tmp_path, cases=("small",), hidden_seeds=2)
    run = Run(job)
    task = build_task(tmp_path)
    assert run.task == dataclasses.replace(task, cases=task.cases[:1])  # only the case asked for
    assert run.settings == HarnessSettings(backend="cpu", secret_seed=99, cases=("small",), hidden_seeds=2)
    assert run.secret_seed == 99
    assert run.dirs["candidate"] == tmp_path / "run" / "candidate"
    assert (run.stage, run.compiled, run.stages, run.cases) == ("setup", False, [], [])


# -- stage bookkeeping --------------------------------------------------------------------------


def test_a_stage_log_holds_its_marks_and_the_next_stage_starts_afresh(tmp_path: Path) -> None:
    run = Run(make_job(tmp_path))
    run._mark("inputs drawn")
    run._mark("references computed")
    run._end_stage("setup", True, "2 input sets")
    run._end_stage("compile", False, "does not compile")
    setup, compile_ = run.stages
    lines = setup.log.splitlines()
    assert [line.split("s ", 1)[1] for line in lines[:2]] == ["inputs drawn", "references computed"]
    assert lines[2] == "2 input sets" and setup.ok and setup.seconds >= 0
    assert compile_.log == "does not compile" and not compile_.ok  # the marks went with setup


def test_a_stage_log_is_cut_to_the_limit(tmp_path: Path) -> None:
    run = Run(make_job(tmp_path))
    run._end_stage("check", False, "z" * (3 * LOG_LIMIT))
    assert run.stages[0].log == cut("z" * (3 * LOG_LIMIT))


def test_a_failure_logs_the_stage_it_stopped_in(tmp_path: Path) -> None:
    run = Run(make_job(tmp_path))
    run._end_stage("setup", True, "")
    run.stage = "check"
    result = run.finish("RUNTIME_ERROR", ["check: ValueError: boom", ""])
    assert (result.status, result.compiled, result.correct) == ("RUNTIME_ERROR", False, False)
    assert result.errors == ("check: ValueError: boom",)  # empty errors are dropped
    assert [(s.name, s.ok) for s in result.stages] == [("setup", True), ("check", False)]
    assert result.stages[1].log.strip() == "check: ValueError: boom"


def test_a_failure_in_the_first_call_is_reported_as_the_compile_stage(tmp_path: Path) -> None:
    run = Run(make_job(tmp_path))
    run.compiled, run.stage = True, "first call"
    result = run.finish("RUNTIME_ERROR", ["first call: boom"])
    assert [(s.name, s.ok) for s in result.stages] == [("compile", False)]
    assert result.compiled


def test_a_stage_that_already_logged_its_failure_is_not_logged_twice(tmp_path: Path) -> None:
    run = Run(make_job(tmp_path))
    run.compiled, run.stage = True, "check"
    run._end_stage("check", False, "1 of 4 cases correct")
    result = run.finish("INCORRECT", ["z: got 3, want 2"])
    assert [s.log for s in result.stages] == ["1 of 4 cases correct"]


def test_a_pass_adds_no_stage_and_its_errors_are_cut(tmp_path: Path) -> None:
    run = Run(make_job(tmp_path))
    run.compiled, run.stage = True, "check"
    result = run.finish("PASSED", ["w" * (2 * LOG_LIMIT)])
    assert result.correct and result.stages == ()
    assert result.errors == (cut("w" * (2 * LOG_LIMIT)),)


# -- whole runs on the CPU backend ----------------------------------------------------------------


def test_the_baseline_passes_every_case_on_the_interpreter(tmp_path: Path, cpu: None) -> None:
    run = Run(make_job(tmp_path))
    result = run.execute()
    assert result.status == "PASSED", result.errors
    assert [(s.name, s.ok) for s in result.stages] == [("setup", True), ("compile", True), ("check", True)]
    assert [(c.name, c.correct, c.hidden) for c in result.cases] == [(name, True, "~" in name) for name in CASES]
    assert not result.timings_available and not any(c.candidate_us for c in result.cases)
    # The setup log says when the worker was born, had imported torch, was asked and was ready.
    setup = next(s.log for s in result.stages if s.name == "setup")
    assert re.search(
        r"worker started \(born [+-]\d+\.\d+s, imported [+-]\d+\.\d+s, asked [+-]\d+\.\d+s, "
        r"ready [+-]\d+\.\d+s\)",
        setup,
    ), setup
    worker = run.worker.process  # the candidate ran in a process of its own, which ends with the run
    assert worker.pid != os.getpid() and worker.poll() is None
    run.close()
    assert worker.poll() is not None


def test_a_wrong_candidate_is_incorrect_and_the_check_stage_says_so(tmp_path: Path, cpu: None) -> None:
    wrong = TRITON_ADD.replace("mask=mask) + tl.load", "mask=mask) - tl.load")
    run = Run(make_job(tmp_path, wrong))
    result = run.execute()
    run.close()
    assert result.status == "INCORRECT" and result.compiled and not result.correct
    assert not any(c.correct for c in result.cases)
    assert result.stages[-1].name == "check" and not result.stages[-1].ok
    assert result.errors and all(result.errors)


def test_a_forbidden_call_at_run_time_stops_the_run_with_a_verdict(tmp_path: Path, cpu: None) -> None:
    # getattr hides torch.add from the static screen; the call itself is seen in the first call
    # (every call of the candidate is recorded, that one too).
    source = 'import torch\n\ndef add(x, y):\n    return getattr(torch, "a" + "dd")(x, y)\n'
    run = Run(make_job(tmp_path, source))
    try:
        run.execute()
    except Verdict as verdict:
        assert verdict.status == "CHEAT_DETECTED" and "torch.add" in str(verdict)
    else:
        pytest.fail("the run ended without a verdict")
    run.close()
    assert run.stage == "first call" and run.compiled


def test_a_candidate_that_does_not_import_fails_in_the_compile_stage(tmp_path: Path, cpu: None) -> None:
    run = Run(make_job(tmp_path, "def add(x, y)\n    return x + y\n"))
    status, message = _verdict_of(run)
    assert status == "COMPILE_ERROR" and "SyntaxError" in message
    assert run.stage == "compile" and not run.compiled
    assert [s.name for s in run.stages] == ["setup"]


def test_a_candidate_that_fails_when_called_fails_in_the_first_call(tmp_path: Path, cpu: None) -> None:
    run = Run(make_job(tmp_path, "def add(x, y):\n    raise ValueError('boom')\n"))
    status, message = _verdict_of(run)
    assert status == "RUNTIME_ERROR" and "ValueError: boom" in message
    assert run.stage == "first call" and run.compiled
    assert run.finish("RUNTIME_ERROR", ["boom"]).stages[-1].name == "compile"


def _verdict_of(run: Run) -> tuple[str, str]:
    """The run's Verdict (status, message); its worker ended either way."""
    try:
        run.execute()
    except Verdict as verdict:
        return verdict.status, str(verdict)
    finally:
        run.close()
    pytest.fail("the run ended without a verdict")
