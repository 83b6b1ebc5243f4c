import json

import pytest

from arena.environment.environment import Environment
from arena.evaluation.evaluation import Evaluation, Stage, Status, contradiction
from arena.scoring.records import CaseResult, Score, Timing


def _evaluation() -> Evaluation:
    return Evaluation(
        id="abc123",
        task="tasks/triton2triton/add:add",
        task_digest="t" * 64,
        candidate_digest="c" * 64,
        status=Status.PASSED,
        compiled=True,
        correct=True,
        stages=(Stage("compile", True, 1.5, "ok"),),
        cases=(
            CaseResult("small", True, False),
            CaseResult(
                "big",
                True,
                True,
                weight=2.0,
                baseline=Timing(10.0, 10.1, 9.9, 0.2, 9.95, 10.05, 100, 0.01),
                candidate=Timing(5.0, 5.1, 4.9, 0.1, 4.95, 5.05, 98),
                speedup=2.0,
                speedup_ci_low=1.98,
                speedup_ci_high=2.02,
                sol_fraction=0.4,
            ),
        ),
        score=Score(
            points=320.0,
            speedup=2.0,
            geomean_speedup=2.0,
            reward=0.69,
            fast_p={"1.0": True},
            noise_floor=0.01,
        ),
        environment=Environment(
            "f" * 64, "cuda", "NVIDIA H200", "sm_90", "580", "", {"torch": "2.11"}, {"sm_mhz": "1980"}
        ),
        harness_version="h" * 64,
        errors=("review: something",),
        cache_key="k" * 64,
        created_unix_ms=1700000000000,
    )


def test_to_dict_is_json_with_the_documented_keys() -> None:
    out = json.loads(json.dumps(_evaluation().to_dict()))
    for key in (
        "task",
        "task_digest",
        "candidate_digest",
        "compiled",
        "correct",
        "speedup",
        "score",
        "cases",
        "environment",
        "errors",
        "status",
        "id",
        "cache_key",
        "cached",
        "created_unix_ms",
    ):
        assert key in out, key
    assert out["status"] == "PASSED"
    assert out["speedup"] == 2.0 and out["points"] == 320.0
    assert out["score"]["fast_p"] == {"1.0": True}
    assert out["cases"][1]["baseline"]["median_us"] == 10.0
    assert out["cases"][0]["baseline"] is None
    assert out["environment"]["versions"] == {"torch": "2.11"}


def test_from_dict_inverts_to_dict() -> None:
    evaluation = _evaluation()
    assert Evaluation.from_dict(json.loads(json.dumps(evaluation.to_dict()))) == evaluation


def test_from_dict_ignores_unknown_keys_and_fills_defaults() -> None:
    raw = {
        "id": "x",
        "task": "t",
        "task_digest": "d",
        "candidate_digest": "c",
        "status": "NEEDS_DEVICE",
        "compiled": True,
        "correct": False,
        "future_field": 1,
    }
    evaluation = Evaluation.from_dict(raw)
    assert evaluation.status is Status.NEEDS_DEVICE
    assert evaluation.cases == () and evaluation.score == Score()


def test_status_names_match_the_proto() -> None:
    assert [s.value for s in Status] == [
        "STATUS_UNSPECIFIED",
        "PASSED",
        "COMPILE_ERROR",
        "INCORRECT",
        "RUNTIME_ERROR",
        "TIMEOUT",
        "CHEAT_DETECTED",
        "INVALID_CANDIDATE",
        "NEEDS_DEVICE",
    ]


@pytest.mark.parametrize(
    ("status", "compiled", "correct"),
    [
        (Status.PASSED, True, False),  # passed but not correct
        (Status.INCORRECT, True, True),  # correct but not passed
        (Status.PASSED, False, True),  # correct but not compiled
        (Status.COMPILE_ERROR, True, False),
        (Status.INVALID_CANDIDATE, True, False),
    ],
)
def test_an_evaluation_whose_status_contradicts_its_flags_cannot_be_built(status, compiled, correct) -> None:
    assert contradiction(status, compiled, correct)
    with pytest.raises(ValueError, match="evaluation e1"):
        Evaluation(
            id="e1", task="t", task_digest="d", candidate_digest="c", status=status, compiled=compiled, correct=correct
        )


def test_consistent_flags_are_accepted() -> None:
    for status, compiled, correct in [
        (Status.PASSED, True, True),
        (Status.INCORRECT, True, False),
        (Status.COMPILE_ERROR, False, False),
        (Status.TIMEOUT, False, False),
        (Status.CHEAT_DETECTED, True, False),
        (Status.NEEDS_DEVICE, True, False),
    ]:
        assert contradiction(status, compiled, correct) == ""
