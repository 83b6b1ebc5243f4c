"""Result sets from what the arena writes: suite JSON files (`arena suite --json`), submission
folders (their evaluations looked up in the score cache) and the score cache itself.

A set is named on the command line as NAME=PATH; the same NAME given again adds repeated runs to
the same set. Each run gets the evidence that can be found for it: its candidate's files (from a
submission folder, the task's exemplars or baseline, or the files kept beside the score cache),
the agent's record, and whether its task changed since.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Sequence

from arena.cache.sqlite_store import SqliteStore
from arena.candidate.candidate import Candidate, baseline_candidate, exemplar_candidates
from arena.errors import InvalidCandidate
from arena.evaluation.evaluation import Evaluation
from arena.report.runs import ResultSet, Run
from arena.report.submissions import (
    Submission,
    UnreadableInput,
    read_configuration,
    read_submissions,
)
from arena.task.digest import task_digest
from arena.task.task import Task

CACHE_SOURCE = "score cache"


@dataclass(frozen=True)
class SetInput:
    """What one result set is read from, as the command line named it."""

    name: str
    suite_files: tuple[Path, ...] = ()
    submission_folders: tuple[Path, ...] = ()


def split_named_path(text: str) -> tuple[str, str]:
    """ "NAME=PATH" -> (NAME, PATH); a bare PATH -> ("", PATH)."""
    name, equals, path = text.partition("=")
    if not equals:
        return "", text
    if not name or not path:
        raise UnreadableInput(f"{text!r}: expected NAME=PATH or PATH")
    return name, path


def set_inputs(suite_files: Sequence[str], submission_folders: Sequence[str]) -> list[SetInput]:
    """One SetInput per distinct name, in the order first named. An unnamed suite file is named
    after its file (without .json); an unnamed folder after its agent.json "name", else the folder."""
    merged: dict[str, SetInput] = {}
    for text in suite_files:
        name, path = split_named_path(text)
        entry = merged.setdefault(name or Path(path).stem, SetInput(name or Path(path).stem))
        merged[entry.name] = replace(entry, suite_files=entry.suite_files + (Path(path),))
    for text in submission_folders:
        name, path = split_named_path(text)
        name = name or read_configuration(Path(path)).get("name") or Path(path).resolve().name
        entry = merged.setdefault(name, SetInput(name))
        merged[name] = replace(entry, submission_folders=entry.submission_folders + (Path(path),))
    return list(merged.values())


def read_suite_file(path: Path) -> tuple[list[tuple[str, Evaluation]], list[str]]:
    """((label, evaluation) per evaluation, "label: error" per job the runner failed) of one suite file."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        raws = document["evaluations"]
        evaluations = [(str(raw.get("label") or raw["task"]), Evaluation.from_dict(raw)) for raw in raws]
        failed = [f"{entry['label']}: {entry['error']}" for entry in document.get("failed", ())]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise UnreadableInput(f"{path} is not a suite file written by `arena suite --json`: {error}") from None
    return evaluations, failed


class Library:
    """The checkout's tasks and the score cache: where categories, digests and candidate files come from."""

    def __init__(self, tasks: Sequence[Task], repo_root: Path, store: SqliteStore | None) -> None:
        self.tasks = {task.address: task for task in tasks}
        self.repo_root = repo_root
        self.store = store
        self._digests: dict[str, str] = {}
        self._known: dict[str, dict[str, Candidate]] = {}
        self._baselines: dict[str, Candidate | None] = {}

    def category(self, address: str) -> str:
        """The task's category; for a task no longer declared, the folder after tasks/ in its address."""
        task = self.tasks.get(address)
        if task is not None:
            return task.category.value
        parts = address.split("/")
        return parts[1] if len(parts) > 2 else ""

    def current_digest(self, address: str) -> str:
        """The task's digest as it is now ("" when it is no longer declared)."""
        if address not in self._digests:
            task = self.tasks.get(address)
            self._digests[address] = task_digest(task, self.repo_root) if task is not None else ""
        return self._digests[address]

    def baseline(self, address: str) -> Candidate | None:
        """The task's baseline files as they are now (None: the task is gone or has no editable files)."""
        if address not in self._baselines:
            task = self.tasks.get(address)
            try:
                self._baselines[address] = baseline_candidate(task, self.repo_root) if task is not None else None
            except InvalidCandidate:
                self._baselines[address] = None
        return self._baselines[address]

    def known_candidates(self, address: str) -> dict[str, Candidate]:
        """The task's baseline and exemplars, by candidate digest."""
        if address not in self._known:
            task, baseline = self.tasks.get(address), self.baseline(address)
            known = {baseline.digest: baseline} if baseline is not None else {}
            if task is not None:
                try:
                    known.update({c.digest: c for c in exemplar_candidates(task, self.repo_root).values()})
                except InvalidCandidate:  # a broken exemplar folder: its runs show no files
                    pass
            self._known[address] = known
        return self._known[address]

    def find_candidate(self, evaluation: Evaluation) -> Candidate | None:
        """The evaluated candidate's files: the task's own (baseline, exemplars), else kept beside the cache."""
        known = self.known_candidates(evaluation.task).get(evaluation.candidate_digest)
        if known is not None or self.store is None or not evaluation.candidate_digest:
            return known
        return self.store.kept(evaluation.candidate_digest, evaluation.task)

    def run(self, evaluation: Evaluation, label: str, source: str) -> Run:
        current = self.current_digest(evaluation.task)
        return Run(
            evaluation=evaluation,
            category=self.category(evaluation.task),
            label=label,
            source=source,
            candidate=self.find_candidate(evaluation),
            task_changed=bool(current) and current != evaluation.task_digest,
        )

    def stored(self, address: str, candidate_digest: str = "") -> list[Evaluation]:
        """The score cache's evaluations of the task as it is now: the newest per candidate (a timed
        one before an untimed one), optionally only of one candidate."""
        if self.store is None:
            return []
        current = self.current_digest(address)
        newest: dict[str, Evaluation] = {}
        for evaluation in self.store.list_by_task(address):  # oldest first
            if evaluation.task_digest != current or candidate_digest not in ("", evaluation.candidate_digest):
                continue
            held = newest.get(evaluation.candidate_digest)
            if held is None or _timed(evaluation) or not _timed(held):
                newest[evaluation.candidate_digest] = evaluation
        return list(newest.values())


def _timed(evaluation: Evaluation) -> bool:
    return evaluation.score.geomean_speedup > 0


def load_set(entry: SetInput, library: Library) -> ResultSet:
    """The runs of one set: its suite files' evaluations, with its submission folders' files and
    records laid over the evaluations of the same candidates; a submission no suite file holds is
    looked up in the score cache."""
    runs: list[Run] = []
    not_scored: list[str] = []
    for path in entry.suite_files:
        evaluations, failed = read_suite_file(path)
        runs += [library.run(evaluation, label, str(path)) for label, evaluation in evaluations]
        not_scored += failed
    configuration: dict[str, str] = {}
    matched: set[int] = set()
    for folder in entry.submission_folders:
        configuration.update(read_configuration(folder))
        for submission in read_submissions(folder, list(library.tasks.values())):
            note = _attach(submission, folder, runs, matched, library)
            if note:
                not_scored.append(note)
    sources = tuple(str(path) for path in (*entry.suite_files, *entry.submission_folders))
    return ResultSet(entry.name, tuple(runs), configuration, sources, tuple(not_scored))


def _attach(submission: Submission, folder: Path, runs: list[Run], matched: set[int], library: Library) -> str:
    """Lay the submission over the first unmatched run of its candidate, else add the score cache's
    evaluation of it as a run; returns a note when it has no evaluation ("" otherwise)."""
    address = submission.task.address
    if submission.candidate is None:
        return f"{address}: the submission folder was refused ({submission.refused})"
    digest = submission.candidate.digest
    for index, run in enumerate(runs):
        if index not in matched and run.task == address and run.evaluation.candidate_digest == digest:
            matched.add(index)
            runs[index] = replace(run, candidate=submission.candidate, agent=submission.agent)
            return ""
    stored = library.stored(address, digest)
    if not stored:
        return f"{address}: no evaluation of {folder / submission.task.name} in the score cache"
    run = library.run(stored[-1], address, f"{folder} ({CACHE_SOURCE})")
    matched.add(len(runs))
    runs.append(replace(run, candidate=submission.candidate, agent=submission.agent))
    return ""


def cache_sets(library: Library, addresses: Iterable[str]) -> list[ResultSet]:
    """The score cache as sets: the baselines' no-op runs, the exemplars, and every other candidate
    (the cache does not record who made a candidate). Only non-empty sets."""
    groups: dict[str, list[Run]] = {"baselines": [], "exemplars": [], "other candidates": []}
    for address in addresses:
        held = library.baseline(address)
        baseline = held.digest if held is not None else ""
        exemplars = set(library.known_candidates(address)) - {baseline}
        for evaluation in library.stored(address):
            digest = evaluation.candidate_digest
            group = "baselines" if digest == baseline else "exemplars" if digest in exemplars else "other candidates"
            groups[group].append(library.run(evaluation, address, CACHE_SOURCE))
    source = str(library.store.path) if library.store is not None else CACHE_SOURCE
    return [
        ResultSet(f"{name} ({CACHE_SOURCE})", tuple(runs), sources=(source,)) for name, runs in groups.items() if runs
    ]


def only_category(result_set: ResultSet, category: str) -> ResultSet:
    """The set's runs of one category ("": all of them)."""
    if not category:
        return result_set
    return replace(result_set, runs=tuple(run for run in result_set.runs if run.category == category))
