"""Result sets from suite files, submission folders (with agent records) and the score cache."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from arena.candidate.candidate import baseline_candidate, exemplar_candidates
from arena.evaluation.evaluation import Evaluation
from arena.report.sources import SetInput, cache_sets, load_set, only_category, read_suite_file, set_inputs
from arena.report.submissions import TRANSCRIPT_CHARS, UnreadableInput, read_submissions
from arena_testing.add_task import ADD_KERNEL


def write_suite(path: Path, evaluations: list[Evaluation], failed: tuple[str, ...] = ()) -> Path:
    """A file shaped as `arena suite --json` writes it."""
    path.write_text(json.dumps({
        "category": "triton2triton",
        "candidates": "submissions",
        "evaluations": [dict(e.to_dict(), label=e.task) for e in evaluations],
        "failed": [{"label": label, "error": "the harness left no verdict"} for label in failed],
    }))  # fmt: skip
    return path


def write_submission(folder: Path, kernel: str, record: dict[str, object] | None = None, transcript: str = "") -> Path:
    (folder / "add").mkdir(parents=True, exist_ok=True)
    (folder / "add" / "kernel.py").write_text(kernel)
    if record is not None:
        (folder / "add.agent.json").write_text(json.dumps(record))
    if transcript:
        (folder / "add.transcript.jsonl").write_text(transcript)
    return folder


FASTER_KERNEL = ADD_KERNEL.format(op="+", block=512)


def test_set_inputs_merge_by_name_and_name_unnamed_inputs(tmp_path: Path) -> None:
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "agent.json").write_text(json.dumps({"name": "claude-opus", "model": "x", "budget": {"turns": 50}}))
    inputs = set_inputs(["a=one.json", "a=two.json", "runs/three.json"], [str(folder), f"a={folder}"])
    assert [entry.name for entry in inputs] == ["a", "three", "claude-opus"]
    assert inputs[0].suite_files == (Path("one.json"), Path("two.json")) and inputs[0].submission_folders == (folder,)
    with pytest.raises(UnreadableInput):
        set_inputs(["=x.json"], [])


def test_a_file_that_is_not_a_suite_file_is_refused_with_its_name(tmp_path: Path) -> None:
    bad = tmp_path / "evaluation.json"
    bad.write_text(json.dumps({"task": "x"}))
    with pytest.raises(UnreadableInput, match="evaluation.json is not a suite file"):
        read_suite_file(bad)


def test_submissions_lay_their_files_and_agent_records_over_the_suite_runs(add_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = write_submission(
        tmp_path / "run1",
        FASTER_KERNEL,
        {"cost_usd": 0.42, "input_tokens": 1200, "output_tokens": 800},
        transcript='{"role": "assistant", "text": "wider blocks"}\n',
    )
    [submission] = read_submissions(folder, [add_repo.task])
    assert submission.candidate is not None
    suite = write_suite(tmp_path / "run1.json", [add_repo.evaluation(submission.candidate.digest, 2.0, seed=1)],
                        failed=("tasks/triton2triton/other",))  # fmt: skip
    result = load_set(SetInput("agent", (suite,), (folder,)), add_repo.library())
    [run] = result.runs
    assert run.candidate == submission.candidate and run.source == str(suite)
    assert (run.agent.cost_usd, run.agent.tokens) == (0.42, 2000)
    assert run.agent.transcript_name == "add.transcript.jsonl" and "wider blocks" in run.agent.transcript
    assert run.category == "triton2triton" and not run.task_changed
    assert result.not_scored == ("tasks/triton2triton/other: the harness left no verdict",)


def test_a_submission_no_suite_file_holds_is_found_in_the_score_cache(add_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = write_submission(tmp_path / "run2", FASTER_KERNEL)
    [submission] = read_submissions(folder, [add_repo.task])
    assert submission.candidate is not None
    digest = submission.candidate.digest
    add_repo.store.put("old", add_repo.evaluation(digest, 1.5, seed=2, created_unix_ms=1, id="old"))
    add_repo.store.put("new", add_repo.evaluation(digest, 1.6, seed=3, created_unix_ms=2, id="new"))
    add_repo.store.put("other", add_repo.evaluation("another candidate", 9.0, seed=4, created_unix_ms=3))
    result = load_set(SetInput("agent", (), (folder,)), add_repo.library())
    [run] = result.runs
    assert run.evaluation.id == "new" and run.candidate == submission.candidate
    assert run.agent.cost_usd is None and run.agent.tokens is None  # nothing recorded: not zero


def test_submissions_without_an_evaluation_or_refused_are_listed_not_scored(add_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    unevaluated = write_submission(tmp_path / "a", FASTER_KERNEL)
    refused = tmp_path / "b"
    (refused / "add").mkdir(parents=True)
    (refused / "add" / "elsewhere.py").write_text("x = 1\n")  # outside the task's editable files
    result = load_set(SetInput("agent", (), (unevaluated, refused)), add_repo.library())
    assert result.runs == ()
    assert "no evaluation of" in result.not_scored[0]
    assert "refused" in result.not_scored[1] and "elsewhere.py" in result.not_scored[1]


def test_an_agent_record_is_checked(add_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = write_submission(tmp_path / "bad", FASTER_KERNEL, {"cost_usd": -1})
    with pytest.raises(UnreadableInput, match="cost_usd must be a non-negative number"):
        read_submissions(folder, [add_repo.task])
    folder = write_submission(tmp_path / "fraction", FASTER_KERNEL, {"input_tokens": 1.5})
    with pytest.raises(UnreadableInput, match="whole number"):
        read_submissions(folder, [add_repo.task])


def test_a_long_transcript_is_cut_and_says_so(add_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = write_submission(tmp_path / "long", FASTER_KERNEL, transcript="x" * (TRANSCRIPT_CHARS + 10))
    [submission] = read_submissions(folder, [add_repo.task])
    assert submission.agent.transcript_cut and len(submission.agent.transcript) == TRANSCRIPT_CHARS


def test_the_score_cache_as_sets_of_baselines_exemplars_and_other_candidates(add_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    baseline = baseline_candidate(add_repo.task, add_repo.root)
    [exemplar] = exemplar_candidates(add_repo.task, add_repo.root).values()
    store = add_repo.store
    store.put("b", add_repo.evaluation(baseline.digest, 1.0, seed=1))
    store.put("e", add_repo.evaluation(exemplar.digest, 3.0, seed=2))
    store.put("o", add_repo.evaluation("someone's candidate", 1.4, seed=3))
    store.put("stale", add_repo.evaluation("stale candidate", 5.0, seed=4, task_digest="the task before an edit"))
    sets = cache_sets(add_repo.library(), [add_repo.task.address])
    assert [s.name for s in sets] == [
        "baselines (score cache)",
        "exemplars (score cache)",
        "other candidates (score cache)",
    ]
    assert [len(s.runs) for s in sets] == [1, 1, 1]  # the stale evaluation is of another task
    assert sets[0].runs[0].candidate == baseline and sets[1].runs[0].candidate == exemplar
    assert sets[2].runs[0].candidate is None  # its files were never kept


def test_files_kept_beside_the_score_cache_give_a_run_its_candidate(add_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = write_submission(tmp_path / "kept", FASTER_KERNEL)
    [submission] = read_submissions(folder, [add_repo.task])
    assert submission.candidate is not None
    add_repo.store.keep(submission.candidate)  # as evaluate() does for every candidate it scores
    suite = write_suite(tmp_path / "s.json", [add_repo.evaluation(submission.candidate.digest, 2.0, seed=1)])
    [run] = load_set(SetInput("s", (suite,)), add_repo.library()).runs
    assert run.candidate == submission.candidate


def test_a_timed_evaluation_is_preferred_to_a_newer_untimed_one(add_repo) -> None:  # type: ignore[no-untyped-def]
    timed = add_repo.evaluation("c", 2.0, seed=1, created_unix_ms=1, id="timed")
    untimed = replace(timed, id="untimed", created_unix_ms=2, score=replace(timed.score, geomean_speedup=0.0))
    add_repo.store.put("timed", timed)
    add_repo.store.put("untimed", untimed)
    [stored] = add_repo.library().stored(add_repo.task.address)
    assert stored.id == "timed"


def test_runs_of_a_changed_task_are_marked(add_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    suite = write_suite(tmp_path / "s.json", [add_repo.evaluation("c", 2.0, seed=1, task_digest="before")])
    result = load_set(SetInput("s", (suite,)), add_repo.library())
    assert result.runs[0].task_changed
    assert only_category(result, "hip2hip").runs == () and only_category(result, "").runs == result.runs
