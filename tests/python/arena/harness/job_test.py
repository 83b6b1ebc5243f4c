"""The job protocol (arena.harness.job): the document a child reads, the screen before anything
starts, the folders a child gets, and what a parent believes of the frame that comes back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.candidate.candidate import Candidate
from arena.harness import launch
from arena.harness.channel import sign_frame
from arena.harness.job import (
    CANDIDATE_MARK,
    FOLDERS,
    Job,
    JobError,
    lay_out,
    new_job,
    read_result,
    screen_candidate,
    split_marks,
)
from arena.harness.result import CaseOutcome, HarnessResult, StageLog
from arena.harness.settings import HarnessSettings
from arena.task.codec import task_from_dict
from arena.task.task import Task
from arena_testing.harness_tasks import REFERENCE, build_task

KEY = bytes(range(32))
DIRS = {name: f"/job/{name}" for name in FOLDERS}
SETTINGS = HarnessSettings(backend="cpu", hidden_seeds=1)
# What the add task's cases are called in a result: the declared ones and one hidden copy each.
ALL_CASES = ("small", "main", "small~hidden0", "main~hidden0")


@pytest.fixture
def task(tmp_path: Path) -> Task:
    return build_task(tmp_path)


def _passed(names: tuple[str, ...] = ALL_CASES) -> HarnessResult:
    return HarnessResult(
        status="PASSED",
        compiled=True,
        correct=True,
        stages=(StageLog("check", True, 0.5, "4 of 4 cases correct"),),
        cases=tuple(CaseOutcome(n, correct=True, timed=n == "main", hidden="~" in n) for n in names),
        environment={"backend": "cpu"},
    )


# -- the job document ---------------------------------------------------------------------------


def test_a_job_survives_its_json_and_carries_the_task_whole(task: Task) -> None:
    job = new_job(task, HarnessSettings(backend="cpu", secret_seed=42), DIRS, KEY, 7)
    again = Job.from_json(job.to_json())
    assert again.canonical_json() == job.canonical_json()
    assert Job.from_json(again.to_json()) == again  # JSON types from the first trip on
    assert again.key_bytes == KEY and again.result_fd == 7 and again.secret_seed == 42
    assert dict(again.dirs) == DIRS and again.settings["cases"] == []
    assert task_from_dict(dict(again.task)) == task  # the child rebuilds the same task from it


def test_a_job_carries_only_the_cases_asked_for_and_refuses_an_unknown_one(task: Task) -> None:
    small = HarnessSettings(backend="cpu", hidden_seeds=1, cases=("small",))
    job = new_job(task, small, DIRS, KEY)
    assert [c["name"] for c in job.task["cases"]] == ["small"]  # the child never sees "main"
    names = ("small", "small~hidden0")
    assert read_result(sign_frame(KEY, _passed(names).to_json()), KEY, "", task, small).status == "PASSED"
    assert read_result(sign_frame(KEY, _passed().to_json()), KEY, "", task, small).status == "CHEAT_DETECTED"
    with pytest.raises(ValueError, match="has no case named 'large'"):
        new_job(task, HarnessSettings(backend="cpu", cases=("large",)), DIRS, KEY)


def test_the_canonical_text_does_not_depend_on_key_order(task: Task) -> None:
    job = new_job(task, SETTINGS, DIRS, KEY)
    raw = job.to_dict()
    raw["task"] = dict(reversed(list(raw["task"].items())))
    reordered = Job.from_json(json.dumps(raw).encode())
    assert reordered.to_json() != job.to_json()
    assert reordered.canonical_json() == job.canonical_json()


@pytest.mark.parametrize(
    "document",
    [
        b"",
        b"not json",
        b"[1, 2]",  # a list, not an object
        b'{"task": {}, "settings": {}, "dirs": {}, "secret_seed": 1, "key": "00"}',  # no result_fd
        b'{"task": {}, "settings": {}, "dirs": [], "secret_seed": 1, "key": "00", "result_fd": 3}',
        b'{"task": {}, "settings": {}, "dirs": {}, "secret_seed": "x", "key": "00", "result_fd": 3}',
        b'{"task": 5, "settings": {}, "dirs": {}, "secret_seed": 1, "key": "00", "result_fd": 3}',
    ],
)
def test_a_document_that_is_not_a_job_is_a_job_error(document: bytes) -> None:
    with pytest.raises(JobError, match="not a harness job"):
        Job.from_json(document)


def test_a_job_must_name_exactly_the_harness_folders(task: Task) -> None:
    raw = new_job(task, SETTINGS, DIRS, KEY).to_dict()
    for dirs in ({k: v for k, v in DIRS.items() if k != "work"}, {**DIRS, "elsewhere": "/"}):
        with pytest.raises(JobError, match="a job names the folders"):
            Job.from_json(json.dumps({**raw, "dirs": dirs}).encode())


def test_the_secret_seed_is_drawn_per_job_unless_the_settings_fix_it(task: Task) -> None:
    drawn = {new_job(task, SETTINGS, DIRS, KEY).secret_seed for _ in range(4)}
    assert len(drawn) == 4  # 63 random bits each: equal draws mean no draw
    assert all(0 <= seed < 1 << 63 for seed in drawn)
    fixed = HarnessSettings(backend="cpu", secret_seed=1234)
    assert {new_job(task, fixed, DIRS, KEY).secret_seed for _ in range(3)} == {1234}


# -- before anything starts ---------------------------------------------------------------------


def test_the_screen_refuses_a_forbidden_candidate(task: Task, tmp_path: Path) -> None:
    cheat = Candidate(task.address, {"kernel.py": b"import torch\n\ndef add(x, y):\n    return torch.add(x, y)\n"})
    chosen, refused = screen_candidate(task, cheat, tmp_path)
    assert chosen is cheat
    assert refused is not None and refused.status == "CHEAT_DETECTED"
    assert not refused.compiled and any("torch.add" in e for e in refused.errors)


def test_the_screen_passes_the_baseline_when_no_candidate_is_given(task: Task, tmp_path: Path) -> None:
    chosen, refused = screen_candidate(task, None, tmp_path)
    assert refused is None
    assert chosen.files == {"kernel.py": (tmp_path / task.task_dir / "kernel.py").read_bytes()}


def test_a_refused_candidate_starts_no_child(task: Task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_child() -> None:
        raise AssertionError("a child was started for a candidate the screen refuses")

    monkeypatch.setattr(launch, "Child", no_child)
    cheat = Candidate(task.address, {"kernel.py": b"import torch\nadd = torch.add\n"})
    assert launch.run_harness(task, cheat, tmp_path, SETTINGS).status == "CHEAT_DETECTED"


def test_the_reference_is_laid_out_only_in_the_task_folder(task: Task, tmp_path: Path) -> None:
    candidate = Candidate(task.address, {"kernel.py": b"def add(x, y):\n    return x + y\n"})
    dirs = lay_out(task, candidate, tmp_path, tmp_path / "run")
    assert sorted(dirs) == ["baseline", "candidate", "task"]
    assert (dirs["task"] / "reference.py").read_text() == REFERENCE
    assert not (dirs["baseline"] / "reference.py").exists()
    assert not (dirs["candidate"] / "reference.py").exists()
    baseline = (tmp_path / task.task_dir / "kernel.py").read_bytes()
    assert (dirs["task"] / "kernel.py").read_bytes() == baseline
    assert (dirs["baseline"] / "kernel.py").read_bytes() == baseline
    assert (dirs["candidate"] / "kernel.py").read_bytes() == candidate.files["kernel.py"]


# -- what comes back ----------------------------------------------------------------------------


def test_no_frame_is_a_runtime_error_that_quotes_the_log(task: Task) -> None:
    result = read_result(b"", KEY, "--- stderr ---\nSegmentation fault", task, SETTINGS)
    assert result.status == "RUNTIME_ERROR" and not result.compiled
    assert result.errors == ("the child ended without a result", "--- stderr ---\nSegmentation fault")
    assert result.harness_fault == "the child ended without a result"  # no verdict: nobody's score


def test_no_frame_after_the_candidate_mark_is_the_candidates_runtime_error(task: Task) -> None:
    """The judge marked its descriptor before the candidate's code could run, then ended without a
    frame: the candidate's verdict (charged), not a fault of the machine."""
    result = read_result(CANDIDATE_MARK, KEY, "--- stderr ---\nKilled", task, SETTINGS)
    assert result.status == "RUNTIME_ERROR" and result.harness_fault == ""
    assert result.errors[0] == "the judge ended without a result while the candidate's code was running"


def test_the_marks_ahead_of_a_frame_are_not_part_of_it(task: Task) -> None:
    frame = sign_frame(KEY, _passed().to_json())
    assert read_result(CANDIDATE_MARK + frame, KEY, "", task, SETTINGS).status == "PASSED"
    assert split_marks(CANDIDATE_MARK + frame) == (frozenset({CANDIDATE_MARK}), frame)
    assert split_marks(b"~half a mark") == (frozenset(), b"~half a mark")  # not a mark: junk for the frame check


def test_a_signed_frame_can_never_claim_to_be_a_harness_fault(task: Task) -> None:
    """Only the parent marks a fault: a child that writes one into its frame still gave a verdict."""
    claimed = json.loads(_passed().to_json()) | {"status": "RUNTIME_ERROR", "harness_fault": "lost machine"}
    result = read_result(sign_frame(KEY, json.dumps(claimed)), KEY, "", task, SETTINGS)
    assert result.status == "RUNTIME_ERROR" and result.harness_fault == ""


@pytest.mark.parametrize(
    "frame",
    [
        sign_frame(b"another run's key".ljust(32), _passed().to_json()),  # signed with the wrong key
        b"junk a candidate wrote",  # no signature line at all
        sign_frame(KEY, _passed().to_json()) + b"\n" + sign_frame(KEY, _passed().to_json()),  # two frames
    ],
)
def test_a_frame_not_signed_with_the_run_key_is_a_cheat(task: Task, frame: bytes) -> None:
    result = read_result(frame, KEY, "", task, SETTINGS)
    assert result.status == "CHEAT_DETECTED"
    assert "tampered" in result.errors[0]
    assert result.harness_fault == ""  # a tampered channel is the candidate's doing: a verdict


@pytest.mark.parametrize("payload", ['{"status": "PASSED"}', "[]", "not json"])
def test_a_signed_frame_that_is_not_a_result_is_a_cheat(task: Task, payload: str) -> None:
    result = read_result(sign_frame(KEY, payload), KEY, "", task, SETTINGS)
    assert result.status == "CHEAT_DETECTED"
    assert "does not parse" in result.errors[0]


@pytest.mark.parametrize(
    "names",
    [
        (*ALL_CASES, "easy"),  # a case the task does not have
        ("small", "small", "main", "small~hidden0", "main~hidden0"),  # one case twice
        ("small", "main"),  # PASSED without the hidden copies
        (*ALL_CASES, "main~hidden1"),  # a hidden copy beyond the settings' hidden_seeds
    ],
)
def test_a_result_naming_other_cases_than_the_tasks_is_a_cheat(task: Task, names: tuple[str, ...]) -> None:
    result = read_result(sign_frame(KEY, _passed(names).to_json()), KEY, "", task, SETTINGS)
    assert result.status == "CHEAT_DETECTED"
    assert result.errors == ("the result's cases do not match the task's",)


def test_a_good_frame_is_the_childs_result(task: Task) -> None:
    sent = _passed()
    assert read_result(sign_frame(KEY, sent.to_json()), KEY, "ignored log", task, SETTINGS) == sent


def test_a_failed_run_may_report_fewer_cases(task: Task) -> None:
    incorrect = HarnessResult(
        status="INCORRECT",
        compiled=True,
        correct=False,
        cases=(CaseOutcome("small", correct=False, timed=False, error="z[3]: got 1, want 2"),),
    )
    assert read_result(sign_frame(KEY, incorrect.to_json()), KEY, "", task, SETTINGS) == incorrect
