"""Checks a (strawman baseline) and b (timed cases under 2 us) on fixture timings, written as
`arena suite --exemplars --json` writes them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main as cli
from arena.evaluation.evaluation import Evaluation, Status
from arena.scoring.records import CaseResult, Timing
from arena.task.load import load_task
from arena.validation.timings import check_timings, read_timings
from arena_testing.add_task import ADD_FILES, write_add_task

TASK = "tasks/triton2triton/add"
ADDRESS = f"{TASK}:add"


def _timing(us: float) -> Timing:
    return Timing(median_us=us, mean_us=us, min_us=us, iqr_us=0.0, ci_low_us=us, ci_high_us=us, samples=100)


def _suite(times: dict[str, tuple[float, float]], candidates: str = "exemplars", hidden_us: float = 50.0) -> dict:
    """A suite's JSON: per timed case (baseline us, exemplar us), plus a hidden copy and an untimed case."""
    cases = [
        CaseResult(name, True, True, baseline=_timing(b), candidate=_timing(c), speedup=b / c)
        for name, (b, c) in times.items()
    ]
    cases.append(
        CaseResult("big~hidden0", True, True, baseline=_timing(hidden_us), candidate=_timing(1.0), hidden=True)
    )
    cases.append(CaseResult("small", True, False))
    evaluation = Evaluation(
        id="e1", task=ADDRESS, task_digest="t", candidate_digest="c", status=Status.PASSED, compiled=True,
        correct=True, cases=tuple(cases),
    )  # fmt: skip
    label = f"{ADDRESS} [exemplars/wide]" if candidates == "exemplars" else ADDRESS
    return {"candidates": candidates, "evaluations": [dict(evaluation.to_dict(), label=label)]}


def _check(repo: Path, *documents: dict[str, Any]) -> Any:
    paths = []
    for index, document in enumerate(documents):
        paths.append(repo / f"timings{index}.json")
        paths[-1].write_text(json.dumps(document))
    return check_timings(load_task(repo, TASK), read_timings(paths), repo)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_add_task(tmp_path)


def test_a_good_task_passes(repo: Path) -> None:
    findings = _check(repo, _suite({"big": (120.0, 60.0), "wide": (40.0, 20.0)}))
    assert findings.failures == []
    assert "every timed case takes at least 2 us" in findings.passed
    assert "exemplar exemplars/wide is at most 2.00x the baseline (<= 10x)" in findings.passed


def test_a_strawman_baseline_is_caught_unless_the_exemplar_says_why(repo: Path) -> None:
    findings = _check(repo, _suite({"big": (300.0, 20.0), "wide": (40.0, 20.0)}))
    assert len(findings.failures) == 1
    assert "exemplar exemplars/wide beats the baseline by more than 10x ('big' 15.0x)" in findings.failures[0]
    assert "strawman" in findings.failures[0]
    kernel = repo / TASK / "exemplars" / "wide" / "kernel.py"
    kernel.write_text(
        '"""Wide blocks.\n\nHeadroom: the baseline is O(N^2) by design; this is O(N).\n"""\n' + ADD_FILES["kernel.py"]
    )
    findings = _check(repo, _suite({"big": (300.0, 20.0)}))
    assert findings.failures == []
    assert any(line.endswith("the baseline is O(N^2) by design; this is O(N).") for line in findings.passed)


@pytest.mark.parametrize("who", ["baseline", "exemplar"])
def test_a_timed_case_under_2_us_is_caught(repo: Path, who: str) -> None:
    times = (1.5, 1.0) if who == "baseline" else (12.0, 1.5)
    findings = _check(repo, _suite({"big": (120.0, 60.0), "tiny": times}))
    assert len(findings.failures) == 1
    expected = "the baseline takes 1.50 us, exemplar exemplars/wide takes 1.00 us"
    if who == "exemplar":
        expected = "exemplar exemplars/wide takes 1.50 us"
    assert f"timed case 'tiny': {expected}, under 2 us" in findings.failures[0]


def test_baseline_timings_from_a_no_op_suite_are_checked_too(repo: Path) -> None:
    findings = _check(repo, _suite({"tiny": (1.5, 1.5)}, candidates="baselines"))
    assert [line[:40] for line in findings.failures] == ["timed case 'tiny': the baseline takes 1."]
    assert not any("exemplar" in line for line in findings.passed)  # a baseline is no exemplar


def test_a_task_without_timings_is_noted_not_failed(repo: Path) -> None:
    findings = _check(repo, {"candidates": "exemplars", "evaluations": []})
    assert findings.failures == [] and "no timings" in findings.notes[0]


def test_validate_task_quality_reads_the_files_and_fails_on_a_finding(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def quality(document: dict[str, Any]) -> int:
        (repo / "suite.json").write_text(json.dumps(document))
        return cli.main(
            ["--repo-root", str(repo), "validate-task", "--quality", "--timings", str(repo / "suite.json"), "--all"]
        )

    assert quality(_suite({"big": (120.0, 60.0)})) == 0
    assert f"{ADDRESS}: valid" in capsys.readouterr().out
    assert quality(_suite({"big": (1.5, 1.0)})) == 1
    assert "FAIL  timed case 'big': the baseline takes 1.50 us" in capsys.readouterr().out
    assert cli.main(["--repo-root", str(repo), "validate-task", "--quality", "--all"]) == 2
    (repo / "suite.json").write_text("not json")
    assert (
        cli.main(
            ["--repo-root", str(repo), "validate-task", "--quality", "--timings", str(repo / "suite.json"), "--all"]
        )
        == 2
    )
