"""Every noun survives to_pb -> bytes -> from_pb unchanged (fields the proto lacks aside)."""

from __future__ import annotations

import pytest

from arena.api import convert
from arena.candidate.candidate import Candidate
from arena.environment.environment import Environment
from arena.errors import InvalidCandidate, InvalidRequest
from arena.evaluation.evaluation import Evaluation, Stage, Status
from arena.runner.records import Attempt, LeaderboardRow, Progress, TaskView, Usage
from arena.scoring.records import CaseResult, Score, Timing
from arena.task.task import Case, TensorSpec, Tolerance
from arena.v1 import task_pb2


def through_bytes(message):
    """A copy of `message` parsed back from its wire bytes."""
    copy = type(message)()
    copy.ParseFromString(message.SerializeToString())
    return copy


def full_evaluation() -> Evaluation:
    timing = Timing(median_us=10.5, mean_us=11.0, min_us=9.0, iqr_us=0.5, ci_low_us=10, ci_high_us=11, samples=40)
    return Evaluation(
        id="abc123",
        task="tasks/triton2triton/softmax:softmax",
        task_digest="t" * 64,
        candidate_digest="c" * 64,
        status=Status.INCORRECT,
        compiled=True,
        correct=False,
        stages=(Stage("compile", True, 0.25, "ok"), Stage("check", False, 1.5, "mismatch at [3, 4]")),
        cases=(
            CaseResult("small", False, False, error="y[3, 4]: got 1.0, want 2.0", hidden=True),
            CaseResult("big", True, True, 2.0, baseline=timing, candidate=timing, speedup=1.0, within_noise=True),
        ),
        score=Score(points=20.0, speedup=0.0, reward=-1.0, fast_p={"1.0": False, "2.0": False}, noise_floor=0.02),
        environment=Environment(
            "f" * 64,
            "cuda",
            "H200",
            "sm_90",
            "580",
            "",
            {"torch": "2.11"},
            {"sm_mhz": "1980"},
            {"event_overhead_us": "2.912"},
        ),
        harness_version="h" * 64,
        errors=("review: speedup within noise",),
        cache_key="k" * 64,
        cached=True,
        created_unix_ms=1_795_000_000_123,
    )


def test_evaluation_round_trip() -> None:
    evaluation = full_evaluation()
    message = through_bytes(convert.evaluation_to_pb(evaluation))
    assert message.status == 3 and message.created_unix_ms == 1_795_000_000_123
    assert convert.evaluation_from_pb(message) == evaluation


def test_a_minimal_evaluation_round_trips() -> None:
    evaluation = Evaluation("x", "t", "", "", Status.PASSED, True, True)
    assert convert.evaluation_from_pb(through_bytes(convert.evaluation_to_pb(evaluation))) == evaluation


def test_candidate_round_trip_and_digest() -> None:
    candidate = Candidate("tasks/a/b:b", {"kernel.py": b"\x00binary\xff", "sub/x.h": b"#define X"})
    message = through_bytes(convert.candidate_to_pb(candidate))
    assert message.digest == candidate.digest
    assert convert.candidate_from_pb(message) == candidate


def test_a_path_named_twice_is_an_invalid_candidate() -> None:
    message = convert.candidate_to_pb(Candidate("t", {"kernel.py": b"a"}))
    message.files.add(path="kernel.py", content=b"b")
    with pytest.raises(InvalidCandidate, match="twice"):
        convert.candidate_from_pb(message)


def test_task_view_round_trip() -> None:
    view = TaskView(
        address="tasks/triton2triton/softmax:softmax",
        name="softmax",
        category="triton2triton",
        digest="d" * 64,
        task_dir="tasks/triton2triton/softmax",
        description="Row-wise softmax.",
        signature="softmax(x: [M, N] $dtype) -> [M, N] $dtype",
        entry="kernel.py:softmax",
        editable_files=("kernel.py",),
        baseline_files={"kernel.py": b"def softmax(x): ..."},
        inputs=(TensorSpec("x", ("M", 128), "$dtype"),),
        outputs=(TensorSpec("y", ("M", 128), "float32"), TensorSpec("x", ("M", 128), "$dtype", inplace=True)),
        cases=(
            # sm_scale: a float case value, which Case.dims holds beside the ints (task/task.py)
            Case("small", {"M": 7, "sm_scale": 0.125}, "float32", 1),  # type: ignore[dict-item]
            Case("big", {"M": 4096, "sm_scale": 0.0625}, "float16", 3, True, 2.0),  # type: ignore[dict-item]
        ),
        forbidden=("torch.softmax",),
        budget_seconds=3600,
        iterations=3,
        archs=("sm_90", "gfx942"),
        tolerances={"float16": Tolerance(1e-3, 2e-3), "int32": Tolerance(0.0, 0.0)},
        scalars={"eps": 1e-5, "groups": 4, "n": "N", "causal": True, "sm_scale": "sm_scale"},
        reference_platform="AMD Instinct MI300X (gfx942) with ROCm 7.1.1",
        points_compiled=20.0,
        points_correct=100.0,
        points_per_speedup=100.0,
        scoring_rule="compiles 20, correct +100, then +100 x speedup",
    )
    back = convert.task_view_from_pb(through_bytes(convert.task_view_to_pb(view)))
    assert back == view
    # An integer scalar stays an integer (a HIP launcher takes it as int64_t, a float as double),
    # a flag a bool; a float case value (a dim only scalars name) stays a float, an int dim an int.
    assert [type(back.scalars[name]) for name in ("eps", "groups", "n", "causal")] == [float, int, str, bool]
    assert [type(back.cases[1].dims[d]) for d in ("M", "sm_scale")] == [int, float]


def test_a_scalar_without_a_value_is_refused() -> None:
    message = task_pb2.Task(address="tasks/x/y:y")
    message.scalars["eps"].CopyFrom(task_pb2.Scalar())  # present, but neither number nor dim
    with pytest.raises(InvalidRequest, match="no value"):
        convert.task_view_from_pb(message)


def test_a_scalar_that_is_no_number_flag_or_dim_is_refused() -> None:
    with pytest.raises(TypeError, match="a number, a flag or a dim name"):
        convert.scalar_to_pb([1, 2])  # type: ignore[arg-type]


def test_attempt_progress_and_leaderboard_round_trips() -> None:
    attempt = Attempt("a1", "tasks/x/y:y", "alice", 1_795_000_000_000, 2, True, "e1")
    assert convert.attempt_from_pb(through_bytes(convert.attempt_to_pb(attempt))) == attempt
    for progress in (Progress("queued", "e1", 4), Progress("done", "e1", evaluation=full_evaluation())):
        assert convert.progress_from_pb(through_bytes(convert.progress_to_pb(progress))) == progress
    row = LeaderboardRow("alice", "hip2hip", 3, 1.0, 2 / 3, 1.5, 1.4, 250.0)
    assert convert.leaderboard_row_from_pb(through_bytes(convert.leaderboard_row_to_pb(row))) == row


def test_finalized_attempts_usage_and_accounting_round_trip() -> None:
    attempt = Attempt(
        "a1", "tasks/x/y:y", "alice", 1_795_000_000_000, 3, True, "e1", finalized=True, checks_used=2, checks_left=28
    )
    assert convert.attempt_from_pb(through_bytes(convert.attempt_to_pb(attempt))) == attempt
    for usage in (Usage(1, 2, 3, 0.75, 4, 5, 6.5), Usage(input_tokens=10, cost_usd=None), Usage(cost_usd=0.0)):
        assert convert.usage_from_pb(through_bytes(convert.usage_to_pb(usage))) == usage
    row = LeaderboardRow("alice", "hip2hip", 3, 1.0, 2 / 3, 1.5, 1.4, 250.0, mean_checks=4.5, mean_evaluations=2.0,
                         mean_input_tokens=0.0, mean_cost_usd=1.25, mean_wall_s=300.0)  # fmt: skip
    back = convert.leaderboard_row_from_pb(through_bytes(convert.leaderboard_row_to_pb(row)))
    assert back == row and back.mean_input_tokens == 0.0 and back.mean_output_tokens is None  # a zero is no blank
