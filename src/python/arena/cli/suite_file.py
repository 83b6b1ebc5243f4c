"""The JSON file of `arena suite --json FILE`: the document written after every evaluation, and the
evaluations a `--resume` keeps from it (the same candidate of an unchanged task, measured by the
same harness in the same environment as this run's)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

from arena.candidate.candidate import Candidate
from arena.evaluation.evaluation import Evaluation
from arena.report.table import task_outcome
from arena.scoring.stats import SuiteSummary, summarize_suite
from arena.task.digest import task_digest
from arena.task.task import Task


def candidates_kind(exemplars: bool, submissions: object) -> str:
    return "exemplars" if exemplars else "submissions" if submissions else "baselines"


def summary_of(done: Iterable[tuple[str, Evaluation]]) -> SuiteSummary:
    return summarize_suite([task_outcome(evaluation) for _, evaluation in done])


def suite_document(
    category: str | None,
    kind: str,
    done: list[tuple[str, Evaluation]],
    failed: list[tuple[str, str]],
    complete: bool,
) -> dict[str, Any]:
    """The suite's JSON: every evaluation that finished, the summary over them, the runner's failures;
    `complete` False while the suite runs and when it was cut short."""
    summary = summary_of(done)
    return {
        "category": category,
        "candidates": kind,
        "complete": complete,
        "evaluations": [dict(evaluation.to_dict(), label=label) for label, evaluation in done],
        "summary": {
            "tasks": summary.tasks,
            "correct": summary.correct,
            "timed": summary.timed,
            # None, not the 1.0 a geomean of untimed tasks would read, when nothing was timed.
            "geomean_speedup": summary.geomean_speedup if summary.timed else None,
            "nothing_timed": not summary.timed,
            "fast_p": summary.fast_p,
        },
        "failed": [{"label": label, "error": error} for label, error in failed],
        "created_unix_ms": int(time.time() * 1000),
    }


class NotResumable(ValueError):
    """The file cannot be resumed from: not a suite's JSON, or one of other candidates."""


def kept_evaluations(
    path: Path,
    kind: str,
    wanted: Mapping[str, tuple[Task, Candidate]],
    repo_root: Path,
    harness: str,
    fingerprint: str,
) -> dict[str, Evaluation]:
    """By label, the evaluations the suite's file at `path` holds that still answer for a candidate
    `wanted` (label -> its task and candidate): the same candidate's files, the task's digest as
    now, the harness version `harness` and the environment `fingerprint` of this run. Nothing when
    there is no file yet; NotResumable when it is not a suite's JSON of `kind` candidates."""
    if not path.exists():
        return {}
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(document, dict) or not isinstance(document.get("evaluations"), list):
            raise NotResumable("it holds no suite's evaluations")
        if document.get("candidates") != kind:
            raise NotResumable(f"it holds the {document.get('candidates')!r} of a suite, not its {kind!r}")
        found = {raw["label"]: Evaluation.from_dict(raw) for raw in document["evaluations"]}
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise NotResumable(f"cannot resume from {path}: {error}") from None
    kept = {}
    for label, evaluation in found.items():
        if label not in wanted:
            continue
        task, candidate = wanted[label]
        same = (
            evaluation.candidate_digest == candidate.digest
            and evaluation.task_digest == task_digest(task, repo_root)
            and evaluation.harness_version == harness
            and evaluation.environment.fingerprint == fingerprint
        )
        if same:
            kept[label] = evaluation
    return kept
