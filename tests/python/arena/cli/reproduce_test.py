"""`arena reproduce`: real re-runs on CPU (Triton's interpreter), refusals, and the speedup verdicts."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main as cli
from arena.cli.reproduce import compare_case, compare_evaluations
from arena.evaluation.evaluation import Evaluation, Status
from arena.harness.result import HarnessResult
from arena.scoring.records import CaseResult
from arena.scoring.score import score_evaluation

TASK = "tasks/triton2triton/add"


def task_file(repo: Path, name: str) -> str:
    """A file of the vector-add task (the cli conftest's): exemplars/wide/kernel.py is correct and
    faster, wrong/kernel.py subtracts."""
    return (repo / "tasks" / "triton2triton" / "add" / name).read_text()


def faked(monkeypatch: pytest.MonkeyPatch, change: Any) -> None:
    """Wrap the fake harness the `fake_harness` fixture installed: change(result, task, settings)."""
    import arena.evaluation.evaluate as evaluate_module

    fake = evaluate_module._run_harness

    def runner(task, candidate, repo_root, settings):  # type: ignore[no-untyped-def]
        return change(fake(task, candidate, repo_root, settings), task, repo_root, settings)

    monkeypatch.setattr(evaluate_module, "_run_harness", runner)


@pytest.fixture(autouse=True)
def same_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """reproduce probes the machine too; it must see what the evaluate fixtures show."""
    import arena.evaluation.evaluate as evaluate_module

    monkeypatch.setattr("arena.cli.reproduce.probe_environment", lambda: evaluate_module.probe_environment())


def evaluate(repo: Path, tmp_path: Path, kernel: str | None, *extra: str) -> dict[str, Any]:
    args = ["--repo-root", str(repo), "evaluate", "--task", TASK, "--json", str(tmp_path / "e.json"), *extra]
    if kernel is not None:
        folder = tmp_path / "candidate"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        (folder / "kernel.py").write_text(kernel)
        args += ["--candidate", str(folder)]
    assert cli.main(args) == 0
    return json.loads((tmp_path / "e.json").read_text())


def reproduce(repo: Path, tmp_path: Path, reference: str, *extra: str) -> tuple[int, dict[str, Any]]:
    out = tmp_path / "r.json"
    out.unlink(missing_ok=True)
    code = cli.main(["--repo-root", str(repo), "reproduce", reference, "--json", str(out), *extra])
    return code, json.loads(out.read_text()) if out.exists() else {}


def test_a_real_cpu_run_reproduces_from_the_cache(
    add_repo: Path, cache_dir: Path, cpu_machine: Any, tmp_path: Path
) -> None:
    """The stored candidate (kept beside the cache) runs again in Triton's interpreter and agrees."""
    stored = evaluate(add_repo, tmp_path, task_file(add_repo, "exemplars/wide/kernel.py"), "--backend", "cpu")
    assert stored["status"] == "PASSED", stored["errors"]
    code, report = reproduce(add_repo, tmp_path, stored["id"], "--backend", "cpu")
    assert code == 0 and report["agrees"], report
    assert report["evaluation"] == stored["id"] and report["rerun"] != stored["id"]
    small = next(case for case in report["cases"] if case["name"] == "small")
    assert small["correct_then"] is True and small["correct_now"] is True and small["verdict"] == "agrees"
    assert report["same_environment"]


def test_a_real_wrong_candidate_reproduces_as_incorrect(
    add_repo: Path, cache_dir: Path, cpu_machine: Any, tmp_path: Path
) -> None:
    stored = evaluate(add_repo, tmp_path, task_file(add_repo, "wrong/kernel.py"), "--backend", "cpu")
    assert stored["status"] == "INCORRECT"
    code, report = reproduce(add_repo, tmp_path, stored["cache_key"], "--backend", "cpu")
    assert code == 0 and report["status_now"] == "INCORRECT"
    assert all(case["correct_now"] is False for case in report["cases"] if case["name"] == "small")


def test_a_different_outcome_is_reported_and_exits_1(
    add_repo: Path,
    cache_dir: Path,
    cpu_machine: Any,
    fake_harness: list[Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stored = evaluate(add_repo, tmp_path, task_file(add_repo, "exemplars/wide/kernel.py"))

    def now_wrong(result: HarnessResult, *_: Any) -> HarnessResult:
        cases = tuple(replace(case, correct=False) for case in result.cases)
        return replace(result, status="INCORRECT", correct=False, cases=cases)

    faked(monkeypatch, now_wrong)
    code, report = reproduce(add_repo, tmp_path, stored["id"])
    assert code == 1 and not report["agrees"]
    assert report["status_then"] == "PASSED" and report["status_now"] == "INCORRECT"
    assert {case["verdict"] for case in report["cases"]} == {"differs"}


def test_timed_speedups_agree_within_their_intervals_and_differ_outside(
    add_repo: Path,
    cache_dir: Path,
    gpu_machine: Any,
    fake_harness: list[Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("arena.cli.reproduce.probe_environment", lambda: gpu_machine)
    stored = evaluate(add_repo, tmp_path, task_file(add_repo, "exemplars/wide/kernel.py"))  # the fake: 2x faster
    big = next(case for case in stored["cases"] if case["name"] == "big")
    assert big["speedup"] == pytest.approx(2.0, rel=0.05)
    code, report = reproduce(add_repo, tmp_path, stored["id"])
    assert code == 0 and report["agrees"]
    assert next(c for c in report["cases"] if c["name"] == "big")["verdict"] == "agrees"

    def now_slower(result: HarnessResult, *_: Any) -> HarnessResult:
        # The candidate lost its speedup: its times are the baseline's.
        cases = tuple(replace(case, candidate_us=case.baseline_us) for case in result.cases)
        return replace(result, cases=cases)

    faked(monkeypatch, now_slower)
    code, report = reproduce(add_repo, tmp_path, stored["id"])
    assert code == 1 and not report["agrees"]
    verdict = next(c for c in report["cases"] if c["name"] == "big")
    assert verdict["verdict"] == "differs" and verdict["speedup_now"] == pytest.approx(1.0, rel=0.05)


def test_a_changed_task_is_refused(
    add_repo: Path,
    cache_dir: Path,
    cpu_machine: Any,
    fake_harness: list[Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    stored = evaluate(add_repo, tmp_path, task_file(add_repo, "exemplars/wide/kernel.py"))
    reference = add_repo / "tasks" / "triton2triton" / "add" / "reference.py"
    reference.write_text(reference.read_text() + "# changed\n")
    calls = len(fake_harness)
    code, _ = reproduce(add_repo, tmp_path, stored["id"])
    assert code == 2 and "changed since" in capsys.readouterr().err
    assert len(fake_harness) == calls  # nothing ran


def test_a_candidate_whose_files_were_not_kept_is_refused(
    add_repo: Path,
    cache_dir: Path,
    cpu_machine: Any,
    fake_harness: list[Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    stored = evaluate(add_repo, tmp_path, task_file(add_repo, "exemplars/wide/kernel.py"))
    shutil.rmtree(cache_dir / "blobs")
    code, _ = reproduce(add_repo, tmp_path, stored["id"])
    assert code == 2 and "not kept" in capsys.readouterr().err


def test_the_baseline_needs_no_kept_files_and_a_json_file_works_too(
    add_repo: Path, cache_dir: Path, cpu_machine: Any, fake_harness: list[Any], tmp_path: Path
) -> None:
    evaluate(add_repo, tmp_path, None)
    shutil.copy(tmp_path / "e.json", tmp_path / "stored.json")
    code, report = reproduce(add_repo, tmp_path, str(tmp_path / "stored.json"))
    assert code == 0 and report["agrees"]
    assert fake_harness[-1][0] is None  # re-run as the baseline


def test_an_unknown_id_is_refused(add_repo: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--repo-root", str(add_repo), "reproduce", "0123456789ab"]) == 2
    assert "no evaluation '0123456789ab'" in capsys.readouterr().err


def case(speedup: float, low: float, high: float, correct: bool = True) -> CaseResult:
    return CaseResult("c", correct, True, speedup=speedup, speedup_ci_low=low, speedup_ci_high=high)


def test_the_case_verdicts() -> None:
    assert compare_case("c", case(2.0, 1.9, 2.1), case(2.15, 2.05, 2.25), 0.0).verdict == "agrees"
    assert compare_case("c", case(2.0, 1.95, 2.05), case(2.2, 2.15, 2.25), 0.0).verdict == "differs"
    assert compare_case("c", case(2.0, 1.95, 2.05), case(2.2, 2.15, 2.25), 0.2).verdict == "agrees"  # noise
    assert compare_case("c", case(2.0, 1.9, 2.1), case(2.0, 1.9, 2.1, correct=False), 0.0).verdict == "differs"
    assert compare_case("c", case(2.0, 1.9, 2.1), case(0.0, 0.0, 0.0), 0.0).verdict == "not compared"
    assert compare_case("c", None, case(2.0, 1.9, 2.1), 0.0).verdict == "not compared"


def scored(
    status: Status, compiled: bool, correct: bool, *cases: CaseResult, points: float | None = None
) -> Evaluation:
    """An evaluation whose points follow from its cases, unless `points` says otherwise."""
    score = score_evaluation(compiled, correct, cases)
    if points is not None:
        score = replace(score, points=points)
    return Evaluation("a", TASK, "t", "c", status, compiled, correct, cases=cases, score=score)


def test_an_evaluation_agrees_only_when_status_compiled_and_correct_agree() -> None:
    base = scored(Status.PASSED, True, True, case(2.0, 1.9, 2.1))
    assert compare_evaluations(base, replace(base, id="b")).agrees
    assert not compare_evaluations(base, replace(base, id="b", status=Status.RUNTIME_ERROR, correct=False)).agrees
    wrong = scored(Status.INCORRECT, True, False, case(2.0, 1.9, 2.1))
    assert not compare_evaluations(wrong, replace(wrong, id="b", compiled=False)).agrees


def test_points_must_follow_from_the_record_and_agree_within_the_speedups_noise() -> None:
    base = scored(Status.PASSED, True, True, case(2.0, 1.9, 2.1))
    assert base.score.points == pytest.approx(320.0)
    forged = replace(base, score=replace(base.score, points=99999.0))
    verdict = compare_evaluations(forged, replace(base, id="b"))
    assert not verdict.agrees and verdict.points_verdict == "differs" and "claims 99999.00" in verdict.points_reason
    # Intervals that overlap allow the points their speedups differ by; a gap beyond them differs.
    near = scored(Status.PASSED, True, True, case(2.08, 1.98, 2.18))
    assert compare_evaluations(base, replace(near, id="b")).points_verdict == "agrees"
    far = scored(Status.PASSED, True, True, case(2.0, 1.9, 2.1), case(3.0, 2.9, 3.1))
    mixed = compare_evaluations(base, replace(far, id="b"))
    assert mixed.points_verdict == "differs" and not mixed.agrees


def test_a_forged_json_record_differs_and_exits_1(
    add_repo: Path, cache_dir: Path, cpu_machine: Any, fake_harness: list[Any], tmp_path: Path
) -> None:
    stored = evaluate(add_repo, tmp_path, None)
    stored["score"]["points"] = 99999.0
    (tmp_path / "forged.json").write_text(json.dumps(stored))
    code, report = reproduce(add_repo, tmp_path, str(tmp_path / "forged.json"))
    assert code == 1 and not report["agrees"] and report["points_verdict"] == "differs"
    assert report["points_then"] == 99999.0


def test_an_id_a_runner_returned_reproduces_from_its_state_folder(
    add_repo: Path, cache_dir: Path, cpu_machine: Any, fake_harness: list[Any], tmp_path: Path
) -> None:
    """The runner's job row holds the evaluation and the candidate it evaluated: reproduce finds both
    by the id the runner returned, and re-runs that candidate."""
    from arena.candidate.candidate import Candidate, candidate_to_json
    from arena.runner.database import Database

    kernel = task_file(add_repo, "exemplars/wide/kernel.py")
    stored = evaluate(add_repo, tmp_path, kernel)
    shutil.rmtree(cache_dir)  # nothing in the CLI's cache: only the runner knows this evaluation
    state = tmp_path / "runner-state"
    candidate = Candidate(TASK, {"kernel.py": kernel.encode()})
    database = Database(state / "runner.sqlite")
    with database.transaction() as conn:
        conn.execute(
            "INSERT INTO jobs (id, agent, attempt, task, candidate, state, evaluation, created_ms) "
            "VALUES (?, 'agent-1', '', ?, ?, 'done', ?, 0)",
            ("job-0123", TASK, candidate_to_json(candidate), json.dumps(stored)),
        )
    database.close()
    calls = len(fake_harness)
    code, report = reproduce(add_repo, tmp_path, "job-0123", "--runner-state", str(state))
    assert code == 0 and report["agrees"], report
    assert report["evaluation"] == stored["id"] and len(fake_harness) == calls + 1
    assert fake_harness[-1][0] is not None and fake_harness[-1][0].digest == candidate.digest
    code, report = reproduce(add_repo, tmp_path, stored["id"], "--runner-state", str(state))  # its own id too
    assert code == 0 and report["agrees"]
