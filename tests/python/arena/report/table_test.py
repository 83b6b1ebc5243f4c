from arena.evaluation.evaluation import Evaluation, Status
from arena.report.table import format_evaluation, format_suite, format_table
from arena.scoring.records import CaseResult, Score, Timing
from arena.scoring.stats import SuiteSummary


def _evaluation(**changes: object) -> Evaluation:
    fields: dict[str, object] = dict(
        id="abc",
        task="tasks/t/add:add",
        task_digest="t",
        candidate_digest="c",
        status=Status.PASSED,
        compiled=True,
        correct=True,
        cache_key="k" * 64,
        cases=(
            CaseResult("small", True, False),
            CaseResult(
                "big",
                True,
                True,
                baseline=Timing(100.0, 100.0, 99.0, 1.0, 99.5, 100.5, 50),
                candidate=Timing(50.0, 50.0, 49.0, 1.0, 49.5, 50.5, 50),
                speedup=2.0,
                speedup_ci_low=1.98,
                speedup_ci_high=2.02,
                sol_fraction=0.42,
            ),
        ),
        score=Score(
            points=320.0,
            speedup=2.0,
            geomean_speedup=2.0,
            reward=0.693,
            fast_p={"1.0": True, "1.2": True, "2.0": False},
            noise_floor=0.004,
        ),
    )
    fields.update(changes)
    return Evaluation(**fields)  # type: ignore[arg-type]


def test_format_table_aligns_numbers_right_and_text_left() -> None:
    text = format_table(("name", "n"), [("a", 1), ("long", 100)])
    assert text.splitlines() == ["name    n", "----  ---", "a       1", "long  100"]


def test_evaluation_report_shows_status_cases_score_and_errors() -> None:
    text = format_evaluation(_evaluation(errors=("review: case 'big' speedup 12.00x exceeds 10x",)))
    assert "status     PASSED" in text
    assert "2.000 [1.980, 2.020]" in text and "0.42" in text
    assert "100.00" in text and "50.00" in text
    assert "noise floor 0.40%" in text and "fast_1.2=yes" in text and "fast_2.0=no" in text
    assert "320.0 points" in text and "reward +0.6930" in text
    assert "  - review: case 'big'" in text


def test_a_no_op_is_marked_as_noise_and_untimed_runs_say_why() -> None:
    noisy = _evaluation(
        cases=(
            CaseResult("big", True, True, speedup=1.003, speedup_ci_low=0.99, speedup_ci_high=1.01, within_noise=True),
        )
    )
    assert "1.003 [0.990, 1.010] ~" in format_evaluation(noisy)
    untimed = _evaluation(status=Status.NEEDS_DEVICE, correct=False, score=Score(points=20.0))
    assert "needs a GPU" in format_evaluation(untimed)
    assert "(cached)" in format_evaluation(_evaluation(cached=True))


def test_suite_table() -> None:
    summary = SuiteSummary(
        tasks=2, correct=1, timed=1, geomean_speedup=1.414, fast_p={"1.0": 0.5, "1.2": 0.5, "2.0": 0.0}
    )
    failed = _evaluation(status=Status.INCORRECT, correct=False, score=Score(points=20.0))
    text = format_suite([("a", _evaluation()), ("b", failed)], summary)
    lines = text.splitlines()
    assert lines[0].split() == ["task", "status", "compiled", "correct", "speedup", "points", "cached"]
    assert lines[2].split() == ["a", "PASSED", "yes", "yes", "2.000", "320.0"]
    assert lines[3].split() == ["b", "INCORRECT", "yes", "no", "-", "20.0"]
    assert "1/2 correct   geomean speedup 1.414   fast_1.0 50%  fast_1.2 50%  fast_2.0 0%" in text


def test_a_suite_with_nothing_timed_shows_no_geomean() -> None:
    summary = SuiteSummary(tasks=1, correct=1, timed=0, geomean_speedup=1.0, fast_p={"1.0": 0.0})
    assert "geomean speedup - (nothing timed)" in format_suite([("a", _evaluation())], summary)


def test_a_suite_shows_an_evaluation_no_gpu_checked_as_unchecked_not_incorrect() -> None:
    summary = SuiteSummary(tasks=2, correct=1, timed=0, geomean_speedup=1.0, fast_p={"1.0": 0.0})
    unchecked = _evaluation(status=Status.NEEDS_DEVICE, correct=False, cases=(), score=Score(points=20.0))
    text = format_suite([("a", _evaluation()), ("h", unchecked)], summary)
    assert text.splitlines()[3].split() == ["h", "NEEDS_DEVICE", "yes", "unchecked", "-", "20.0"]
    assert "1/2 correct, 1 unchecked" in text
    assert "correct unchecked" in format_evaluation(unchecked)
