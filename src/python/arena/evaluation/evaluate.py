"""The evaluation pipeline: digests -> key -> (a stored evaluation | harness -> score -> store).

This is the only module outside the harness that starts it (arena.harness.launch.run_harness).
The store is anything with get/put/keep (arena.cache holds the real ones): this package defines
what an evaluation is and how it is keyed, the cache only keeps them.

A result is the candidate's only when the harness produced it: one the parent made because the
child left no signed result (killed from outside, a lost machine) raises HarnessFault, and is
neither stored nor returned as a verdict (harness_fault).
"""

from __future__ import annotations

import secrets
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol

from arena.candidate.candidate import Candidate, baseline_candidate, load_candidate
from arena.environment.environment import Environment, has_gpu
from arena.environment.probe import probe_environment
from arena.errors import InvalidCandidate, JobFailed, UnknownTask
from arena.evaluation.evaluation import Evaluation, Stage, Status
from arena.evaluation.key import cache_key, code_version
from arena.harness.job import select_cases
from arena.harness.result import HarnessResult
from arena.harness.settings import HarnessSettings
from arena.harness.version import harness_version
from arena.scoring.score import review_flags, score_case, score_evaluation
from arena.task.digest import task_digest
from arena.task.task import Task

Runner = Callable[[Task, "Candidate | None", Path, HarnessSettings], HarnessResult]
# Statuses not worth keeping: a timeout may be the machine's fault, not the candidate's.
_NOT_CACHED = frozenset({Status.TIMEOUT})
# How the child timed; launch_match: the kept worker's later launch against the judge's (matching.Workers.match).
MEASUREMENT_KEYS = ("flush_bytes", "event_overhead_us", "switch_us", "warm_inputs_bytes", "launch_match")


class HarnessFault(JobFailed):
    """The harness left no verdict (no signed result): the machine's fault, not the candidate's."""


class Store(Protocol):
    def get(self, key: str) -> Evaluation | None: ...
    def put(self, key: str, evaluation: Evaluation) -> None: ...
    def keep(self, candidate: Candidate) -> None:
        """Keep the candidate's files, so a stored evaluation can be run again (arena reproduce)."""

    def kept(self, digest: str, task: str) -> Candidate | None:
        """The kept candidate with `digest` (as one for `task`), or None."""


def _run_harness(task: Task, candidate: Candidate | None, repo_root: Path, settings: HarnessSettings) -> HarnessResult:
    from arena.harness.launch import run_harness  # the trusted parent side; imported only when used

    return run_harness(task, candidate, repo_root, settings)


def harness_fault(result: HarnessResult) -> str:
    """Why `result` is no verdict of the harness ("" when it is one): the parent made it because
    the child ended, or was killed, without writing a signed result (harness/launch.py Child.run,
    harness/job.py read_result for the docker and remote executors; a signed frame never sets it)."""
    return result.harness_fault


def new_evaluation_id() -> str:
    """12 hex characters: short to show, unique enough for one cache."""
    return secrets.token_hex(6)


def settings_for_machine(task: Task, settings: HarnessSettings, environment: Environment) -> HarnessSettings:
    """On a machine without a GPU, only the non-timed cases are checked (the interpreter is slow)."""
    if settings.cases or (has_gpu(environment) and settings.backend != "cpu"):
        return settings
    small = tuple(case.name for case in task.cases if not case.timed)
    return replace(settings, cases=small) if small else settings


def selected_cases(task: Task, settings: HarnessSettings) -> Task:
    """The task as the harness should see it: only the cases settings.cases names (all if empty).

    The digest and the cache key still come from the whole task and the settings; handing the
    harness the selection makes a CPU run check only the small cases however the harness reads
    settings.cases.
    """
    try:
        return select_cases(task, settings)
    except ValueError as error:
        raise UnknownTask(str(error)) from None


def evaluate(
    task: Task,
    candidate: Candidate | None,
    repo_root: Path,
    settings: HarnessSettings,
    store: Store | None = None,
    *,
    runner: Runner | None = None,
    environment: Environment | None = None,
) -> Evaluation:
    """Evaluate `candidate` (None: the baseline itself, a no-op) on `task`.

    `candidate` was accepted where it entered (load_candidate, accept_candidate): its paths and
    sizes are not checked again here. A stored evaluation returns marked cached; a broken or
    hostile candidate is an Evaluation with a failing status, never an exception. A harness that
    left no verdict raises HarnessFault (nothing is stored). `runner` replaces run_harness (an
    executor's run, or a fake in tests).
    """
    environment = environment or probe_environment()
    header = _header(task, repo_root, environment)
    try:
        digest = (candidate if candidate is not None else baseline_candidate(task, repo_root)).digest
    except InvalidCandidate as error:
        return _invalid(header, "", str(error))
    key = _key(task, digest, str(header["task_digest"]), environment, settings)
    if store is not None:
        if candidate is not None:
            store.keep(candidate)
        hit = store.get(key)
        if hit is not None:
            return replace(hit, cached=True)
    try:
        result = (runner or _run_harness)(selected_cases(task, settings), candidate, repo_root, settings)
    except InvalidCandidate as error:
        return _invalid(header, digest, str(error))
    fault = harness_fault(result)
    if fault:
        raise HarnessFault(f"the harness left no verdict on this candidate ({fault}); nothing was scored")
    evaluation = evaluation_from_result(result, candidate_digest=digest, cache_key=key, **header)
    if store is not None and evaluation.status not in _NOT_CACHED:
        store.put(key, evaluation)
    return evaluation


def stored_evaluation(
    task: Task,
    candidate: Candidate,
    repo_root: Path,
    settings: HarnessSettings,
    store: Store | None,
    environment: Environment | None = None,
    digest_of_task: str = "",
) -> Evaluation | None:
    """What evaluate() would answer from `store` alone (marked cached), or None: no harness runs,
    so a runner can answer a cached score without waiting for a device. `digest_of_task`: the
    task's digest when the caller holds it (a runner's tasks do not change while it runs)."""
    if store is None:
        return None
    environment = environment or probe_environment()
    key = _key(task, candidate.digest, digest_of_task or task_digest(task, repo_root), environment, settings)
    store.keep(candidate)
    hit = store.get(key)
    return replace(hit, cached=True) if hit is not None else None


def _key(
    task: Task, candidate_digest: str, digest_of_task: str, environment: Environment, settings: HarnessSettings
) -> str:
    return cache_key(digest_of_task, candidate_digest, environment.fingerprint, code_version(), settings, task.address)


def evaluate_directory(
    task: Task,
    directory: Path,
    repo_root: Path,
    settings: HarnessSettings,
    store: Store | None = None,
    *,
    runner: Runner | None = None,
    environment: Environment | None = None,
) -> Evaluation:
    """evaluate() on the candidate in `directory`; one that breaks the allow-list is INVALID_CANDIDATE."""
    try:
        candidate = load_candidate(task, directory)
    except InvalidCandidate as error:
        header = _header(task, repo_root, environment or probe_environment())
        return _invalid(header, "", str(error))
    return evaluate(task, candidate, repo_root, settings, store, runner=runner, environment=environment)


def _header(task: Task, repo_root: Path, environment: Environment) -> dict[str, Any]:
    """The fields every evaluation of `task` here and now shares, whatever its outcome."""
    return dict(
        id=new_evaluation_id(),
        task=task.address,
        task_digest=task_digest(task, repo_root),
        environment=environment,
        harness_version=harness_version(),
        created_unix_ms=int(time.time() * 1000),
    )


def _invalid(header: Mapping[str, Any], digest: str, message: str) -> Evaluation:
    return Evaluation(
        **header,
        candidate_digest=digest,
        status=Status.INVALID_CANDIDATE,
        compiled=False,
        correct=False,
        score=score_evaluation(False, False, ()),
        errors=(message,),
    )


def _status(name: str) -> Status:
    try:
        return Status(name)
    except ValueError:
        return Status.RUNTIME_ERROR


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def merge_environment(parent: Environment, child: Mapping[str, object]) -> Environment:
    """The child's report over the parent's probe; the fingerprint stays the parent's (the key's)."""
    text = {
        name: str(child.get(name) or getattr(parent, name)) for name in ("backend", "gpu_name", "gpu_arch", "driver")
    }
    versions = {**parent.versions, **{k: str(v) for k, v in _mapping(child.get("versions")).items()}}
    clocks = {
        **{k: str(v) for k, v in _mapping(child.get("clocks")).items()},
        **{f"under_load.{k}": str(v) for k, v in _mapping(child.get("clocks_under_load")).items()},
    }
    measurement = {k: str(child[k]) for k in MEASUREMENT_KEYS if k in child}
    return replace(parent, **text, versions=versions, clocks=clocks, measurement=measurement)


def evaluation_from_result(result: HarnessResult, *, environment: Environment, **header: Any) -> Evaluation:
    """Score the harness's raw outcomes into an Evaluation (statistics computed here, in the parent)."""
    scored = [score_case(outcome, result.environment) for outcome in result.cases]
    cases = tuple(case for case, _ in scored)
    status = _status(result.status)
    correct = result.correct and status is Status.PASSED
    return Evaluation(
        **header,
        status=status,
        compiled=result.compiled,
        correct=correct,
        stages=tuple(Stage(s.name, s.ok, s.seconds, s.log) for s in result.stages),
        cases=cases,
        score=score_evaluation(result.compiled, correct, cases, [floor for _, floor in scored]),
        environment=merge_environment(environment, result.environment),
        errors=tuple(result.errors) + review_flags(cases),
    )
