"""`arena reproduce ID [--json FILE|-] [--backend B] [--timeout S] [--runner-state DIR] [--runner HOST:PORT]`:
run a stored evaluation again.

ID is any id the CLI or a runner returned: an evaluation id or cache key from the score cache
($ARENA_CACHE_DIR/scores.sqlite, else ~/.cache/arena/scores.sqlite), an evaluation id a runner
returned (its state folder, --runner-state, default ~/.local/state/arena/runner, `arena serve`'s
default --state: the job and the candidate it evaluated, or its score cache; arena.runner.folders),
or a JSON file written by `arena evaluate --json`.
With --runner HOST:PORT (or ARENA_RUNNER), the runner there runs the evaluation it returned again
(Reproduce: its own candidate, settings and measurement environment, past its score cache) and
this process only compares: no checkout, torch or measurement environment is needed here.
The task must be unchanged (same digest) and the candidate's files known (the runner's job, or
kept beside the cache: arena.cache.blobs). The new run bypasses the cache. It compares status,
compiled and correct; per case, correctness and the speedup (confidence intervals overlap, or
within the recorded noise floor); and the seed's points, which must follow from the stored
record's own cases and agree with the new run's within the speedups' noise. Exit 0: everything
agrees; 1: something differs; 2: cannot reproduce.
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import sys
from contextlib import closing
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from arena.cache.sqlite_store import SqliteStore
from arena.candidate.candidate import Candidate, baseline_candidate, candidate_from_json
from arena.cli.evaluate import add_json_flag, caller_error, open_store, task_timeout_s, write_json
from arena.cli.remote import add_runner_arguments, open_client, runner_address
from arena.environment.probe import probe_environment
from arena.errors import ArenaError, InvalidRequest, NotFound, UnknownTask
from arena.evaluation.evaluate import Store, evaluate, settings_for_machine
from arena.evaluation.evaluation import Evaluation
from arena.harness.settings import BACKENDS, HarnessSettings
from arena.runner.folders import runner_state as default_runner_state
from arena.scoring.records import CaseResult
from arena.scoring.score import POINTS_PER_SPEEDUP, score_evaluation
from arena.task.digest import task_digest
from arena.task.load import load_task
from arena.task.task import Task

HELP = "run a stored evaluation again and say whether the new result agrees with it"
RUNS_WITHOUT_CHECKOUT = True  # with --runner (or ARENA_RUNNER) the runner holds the task and the candidate
EXIT_DIFFERS = 1
HIDDEN_MARK = "~hidden"
RUNNER_JOBS, RUNNER_SCORES = "runner.sqlite", "scores.sqlite"
_POINTS_SLACK = 0.01  # points: rounding in a stored record


@dataclass(frozen=True)
class CaseComparison:
    name: str
    correct_then: bool | None  # None: the case is missing from that run
    correct_now: bool | None
    speedup_then: float = 0.0  # 0: not timed in that run
    speedup_now: float = 0.0
    verdict: str = "agrees"  # agrees | differs | not compared (timed in one run only, or missing)
    reason: str = ""


@dataclass(frozen=True)
class Reproduction:
    evaluation: str  # the stored evaluation's id
    rerun: str  # the new evaluation's id
    status_then: str
    status_now: str
    agrees: bool  # status, compiled, correct and every compared case agree
    cases: tuple[CaseComparison, ...]
    same_environment: bool  # the fingerprints match; speedups from another machine may differ
    errors_now: tuple[str, ...] = ()  # the re-run's own errors, to tell why it differs
    points_then: float = 0.0
    points_now: float = 0.0
    points_verdict: str = "agrees"  # agrees | differs
    points_reason: str = ""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("evaluation", metavar="ID", help="evaluation id or cache key, or an evaluation JSON file")
    add_json_flag(parser, "the comparison")
    parser.add_argument("--backend", choices=BACKENDS, default="auto", help="where to run (default: auto)")
    parser.add_argument("--timeout", type=float, metavar="S", help="default: the task's timeout, else the harness's")
    parser.add_argument(
        "--runner-state",
        type=Path,
        metavar="DIR",
        help="a runner's state folder, for the ids it returned (default: arena serve's, $XDG_STATE_HOME/arena/runner)",
    )
    add_runner_arguments(parser)  # ask that runner to run its own evaluation again (operators)


class NotReproducible(ArenaError):
    """The stored evaluation cannot be run again as it was (its task changed, its files are gone)."""


def run(args: argparse.Namespace) -> int:
    if runner_address(args):
        return reproduce_remotely(args)
    repo_root: Path = args.repo_root
    store = open_store()
    assert store is not None  # never disabled here
    runner_state = args.runner_state or default_runner_state()
    try:
        stored, from_runner = load_stored(store.path, args.evaluation, runner_state)
        task = current_task(stored, repo_root)
        if from_runner is not None and from_runner.digest != stored.candidate_digest:
            raise NotReproducible(f"the runner's job {args.evaluation} holds another candidate than its evaluation")
        candidate = from_runner or recover_candidate(stored, task, repo_root, store)
        if candidate is not None and candidate.digest == baseline_candidate(task, repo_root).digest:
            candidate = None
    except NotReproducible as error:
        return caller_error(str(error))
    environment = probe_environment()
    requested = HarnessSettings(backend=args.backend, timeout_s=task_timeout_s(task, args.timeout))
    settings = rerun_settings(stored, task, requested)
    rerun = evaluate(task, candidate, repo_root, settings_for_machine(task, settings, environment), None)
    return print_reproduction(args, compare_evaluations(stored, rerun))


def reproduce_remotely(args: argparse.Namespace) -> int:
    """The runner at --runner runs again an evaluation it returned (ID, or the id in an
    `arena evaluate --runner --json` file, which is then the stored record compared); nothing is
    measured here."""
    reference: str = args.evaluation
    from_file = reference.endswith(".json") and Path(reference).is_file()
    try:
        with open_client(args) as client:
            if from_file:
                stored = Evaluation.from_dict(json.loads(Path(reference).read_text(encoding="utf-8")))
            else:
                stored = client.get_evaluation(reference)
            rerun = client.reproduce(stored.id if from_file else reference)
    except (NotFound, InvalidRequest) as error:  # no such evaluation there, a free check, a changed task
        return caller_error(f"the runner cannot reproduce {reference}: {error}")
    return print_reproduction(args, compare_evaluations(stored, rerun))


def print_reproduction(args: argparse.Namespace, reproduction: Reproduction) -> int:
    """Print the comparison (and write its JSON); the exit code: 0 when it agrees."""
    out = sys.stderr if args.json == "-" else sys.stdout
    print(format_reproduction(reproduction), file=out)
    if args.json:
        write_json(args.json, asdict(reproduction))
    return 0 if reproduction.agrees else EXIT_DIFFERS


def current_task(stored: Evaluation, repo_root: Path) -> Task:
    """The stored evaluation's task as it is now; NotReproducible if it is gone or changed."""
    try:
        task = load_task(repo_root, stored.task)
    except UnknownTask:
        raise NotReproducible(f"the task {stored.task} of evaluation {stored.id} no longer exists") from None
    digest = task_digest(task, repo_root)
    if digest != stored.task_digest:
        raise NotReproducible(
            f"the task {stored.task} changed since evaluation {stored.id} (digest {stored.task_digest[:12]} "
            f"then, {digest[:12]} now): a re-run would measure another task, so it is refused"
        )
    return task


def load_stored(store_path: Path, reference: str, runner_state: Path) -> tuple[Evaluation, Candidate | None]:
    """The evaluation named by a JSON file, by id or cache key in the CLI's score cache, or by an id
    a runner returned (its job, with the candidate it evaluated, or its score cache)."""
    if reference.endswith(".json") and Path(reference).is_file():
        return Evaluation.from_dict(json.loads(Path(reference).read_text(encoding="utf-8"))), None
    for path in (store_path, runner_state / RUNNER_SCORES):
        found = SqliteStore(path).find(reference) if path.is_file() else None
        if found is not None:
            return found, None
    job = runner_job(runner_state / RUNNER_JOBS, reference)
    if job is not None:
        return job
    shown = reference if len(reference) <= 80 else reference[:80] + "..."
    raise NotReproducible(
        f"no evaluation {shown!r} in the score cache {store_path} nor in the runner state {runner_state}"
    )


def runner_job(path: Path, reference: str) -> tuple[Evaluation, Candidate] | None:
    """A finished job of the runner whose state file is `path`, by its id or its evaluation's id:
    (the evaluation, the candidate it evaluated). Read-only: the runner may be running."""
    if not path.is_file():
        return None
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            row = db.execute(
                "SELECT state, evaluation, candidate FROM jobs WHERE id = ? OR "
                "(evaluation != '' AND json_extract(evaluation, '$.id') = ?) LIMIT 1",
                (reference, reference),
            ).fetchone()
    except sqlite3.Error as error:
        raise NotReproducible(f"the runner state {path} cannot be read: {error}") from None
    if row is None:
        return None
    state, evaluation, candidate = row
    if state != "done" or not evaluation:
        raise NotReproducible(f"the runner's evaluation {reference} is {state}: there is no result to reproduce")
    return Evaluation.from_dict(json.loads(evaluation)), candidate_from_json(candidate)


def recover_candidate(stored: Evaluation, task: Task, repo_root: Path, store: Store) -> Candidate | None:
    """The stored run's candidate (None: the baseline); NotReproducible if its files were not kept."""
    if (baseline_candidate(task, repo_root)).digest == stored.candidate_digest:
        return None
    kept = store.kept(stored.candidate_digest, task.address)
    if kept is None:
        raise NotReproducible(
            f"the files of candidate {stored.candidate_digest[:12]} (evaluation {stored.id}) were not kept "
            "beside the score cache; evaluate it again instead"
        )
    return kept


def rerun_settings(stored: Evaluation, task: Task, settings: HarnessSettings) -> HarnessSettings:
    """The same declared cases as the stored run (its hidden copies are drawn afresh)."""
    declared = {case.name for case in task.cases}
    names = tuple(c.name for c in stored.cases if HIDDEN_MARK not in c.name and c.name in declared)
    if not names or set(names) == declared:
        return settings
    return replace(settings, cases=names)


def compare_evaluations(then: Evaluation, now: Evaluation) -> Reproduction:
    noise = max(then.score.noise_floor, now.score.noise_floor)
    before = {case.name: case for case in then.cases}
    after = {case.name: case for case in now.cases}
    cases = tuple(compare_case(name, before.get(name), after.get(name), noise) for name in sorted({*before, *after}))
    same = (then.status, then.compiled, then.correct) == (now.status, now.compiled, now.correct)
    points_verdict, points_reason = compare_points(then, now, cases, noise)
    return Reproduction(
        evaluation=then.id,
        rerun=now.id,
        status_then=then.status.value,
        status_now=now.status.value,
        agrees=same and points_verdict == "agrees" and all(case.verdict != "differs" for case in cases),
        cases=cases,
        same_environment=then.environment.fingerprint == now.environment.fingerprint,
        errors_now=now.errors,
        points_then=then.score.points,
        points_now=now.score.points,
        points_verdict=points_verdict,
        points_reason=points_reason,
    )


def compare_points(
    then: Evaluation, now: Evaluation, cases: tuple[CaseComparison, ...], noise: float
) -> tuple[str, str]:
    """The seed's points: the stored ones must be what its own cases give (a record edited to
    claim more points than its cases earned differs), and the new ones within what the speedups'
    noise allows (100 points per unit of speedup)."""
    for run, label in ((then, "stored"), (now, "re-run")):
        expected = score_evaluation(run.compiled, run.correct, run.cases).points
        if not math.isfinite(run.score.points) or abs(run.score.points - expected) > _POINTS_SLACK:
            claimed = f"the {label} record claims {run.score.points:.2f} points"
            return "differs", f"{claimed}; its own cases give {expected:.2f}"
    spread = [abs(c.speedup_now - c.speedup_then) for c in cases if c.verdict == "agrees" and c.speedup_then]
    allowed = POINTS_PER_SPEEDUP * max([noise * max(then.score.speedup, now.score.speedup), *spread]) + _POINTS_SLACK
    gap = abs(now.score.points - then.score.points)
    if gap > allowed:
        return "differs", f"{then.score.points:.2f} points then, {now.score.points:.2f} now (allowed {allowed:.2f})"
    return "agrees", f"within {allowed:.2f} points"


def compare_case(name: str, then: CaseResult | None, now: CaseResult | None, noise: float) -> CaseComparison:
    if then is None or now is None:
        return CaseComparison(
            name,
            then.correct if then else None,
            now.correct if now else None,
            verdict="not compared",
            reason="run in one evaluation only",
        )
    base = CaseComparison(name, then.correct, now.correct, then.speedup, now.speedup)
    if then.correct != now.correct:
        return _with(base, "differs", "correctness differs")
    if not (then.speedup and now.speedup):
        return _with(base, "agrees" if not (then.speedup or now.speedup) else "not compared", "not timed in both")
    overlap = then.speedup_ci_low <= now.speedup_ci_high and now.speedup_ci_low <= then.speedup_ci_high
    close = abs(now.speedup - then.speedup) <= noise * then.speedup
    if overlap or close:
        return _with(base, "agrees", "intervals overlap" if overlap else "within the noise floor")
    return _with(
        base,
        "differs",
        f"[{then.speedup_ci_low:.3f}, {then.speedup_ci_high:.3f}] then, "
        f"[{now.speedup_ci_low:.3f}, {now.speedup_ci_high:.3f}] now",
    )


def _with(case: CaseComparison, verdict: str, reason: str) -> CaseComparison:
    return replace(case, verdict=verdict, reason=reason)


def format_reproduction(r: Reproduction) -> str:
    lines = [
        f"evaluation {r.evaluation} re-run as {r.rerun}: {r.status_then} then, {r.status_now} now: "
        + ("AGREES" if r.agrees else "DIFFERS"),
        f"  points {r.points_then:.2f} -> {r.points_now:.2f}  {r.points_verdict} ({r.points_reason})",
    ]
    if not r.same_environment:
        lines.append("(another environment than the stored run's: speedups may legitimately differ)")
    for c in r.cases:
        speed = f"  speedup {c.speedup_then:.3f} -> {c.speedup_now:.3f}" if c.speedup_then or c.speedup_now else ""
        lines.append(f"  {c.name:<24} correct {c.correct_then} -> {c.correct_now}{speed}  {c.verdict} ({c.reason})")
    if not r.agrees:
        lines += [f"  re-run error: {error.splitlines()[0] if error else ''}" for error in r.errors_now[:5]]
    return "\n".join(lines)
