from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from arena.cache.sqlite_store import SqliteStore
from arena.candidate.candidate import Candidate, baseline_candidate, exemplar_candidates, wrong_candidate
from arena.environment.environment import Environment, fingerprint_environment
from arena.errors import InvalidCandidate, UnknownTask
from arena.evaluation.evaluate import evaluate, merge_environment, settings_for_machine
from arena.evaluation.evaluation import Status
from arena.harness.result import CaseOutcome, HarnessResult, StageLog
from arena.harness.settings import HarnessSettings
from arena.task.load import load_task

ADDRESS = "tasks/triton2triton/add"
CPU = Environment(backend="cpu-interpreter", versions={"python": "3.11"})
CPU = replace(CPU, fingerprint=fingerprint_environment(CPU))
GPU = Environment(fingerprint="g" * 64, backend="cuda", gpu_name="NVIDIA H200", gpu_arch="sm_90")


def _samples(mean: float, seed: int) -> tuple[float, ...]:
    return tuple(float(v) for v in np.random.default_rng(seed).normal(mean, mean * 0.01, 60))


class FakeRunner:
    """Stands in for run_harness: records its calls, returns a 2x faster, correct result."""

    def __init__(self, status: str = "PASSED", raises: Exception | None = None) -> None:
        self.calls: list[tuple[object, HarnessSettings]] = []
        self.status = status
        self.raises = raises

    def __call__(self, task, candidate, repo_root, settings):  # type: ignore[no-untyped-def]
        self.calls.append((candidate, settings))
        if self.raises:
            raise self.raises
        ok = self.status == "PASSED"
        return HarnessResult(
            status=self.status,
            compiled=True,
            correct=ok,
            stages=(StageLog("compile", True, 0.5), StageLog("check", ok, 0.2, "" if ok else "z[3]: 1 != 2")),
            cases=(
                CaseOutcome("small", correct=ok, timed=False, error="" if ok else "z[3]: 1 != 2"),
                CaseOutcome(
                    "big",
                    correct=ok,
                    timed=True,
                    baseline_us=_samples(100.0, 1),
                    candidate_us=_samples(50.0, 2),
                    flops=1 << 24,
                    bytes=3 * 4 * (1 << 24),
                ),
            ),
            environment={
                "backend": "cuda",
                "gpu_name": "NVIDIA H200",
                "peak_bandwidth_gbs": 4800.0,
                "versions": {"torch": "2.11"},
                "clocks": {"sm_mhz": 1980},
                "clocks_under_load": {"sm_mhz": 1755},
                "flush_bytes": 268435456,
                "event_overhead_us": 2.912,
                "launch_match": "judge 1.921, worker 1.916 us (worker 1 of at most 4, matched)",
            },
            timings_available=True,
        )


DEFAULT_SETTINGS = HarnessSettings()


def _evaluate(repo: Path, candidate=None, store=None, runner=None, settings=DEFAULT_SETTINGS, environment=GPU):  # type: ignore[no-untyped-def]
    task = load_task(repo, ADDRESS)
    return evaluate(task, candidate, repo, settings, store, runner=runner or FakeRunner(), environment=environment)


def test_a_miss_runs_the_harness_scores_and_stores(add_repo: Path, tmp_path: Path) -> None:
    store, runner = SqliteStore(tmp_path / "s.sqlite"), FakeRunner()
    evaluation = _evaluate(add_repo, store=store, runner=runner)
    assert len(runner.calls) == 1
    assert evaluation.status is Status.PASSED and evaluation.compiled and evaluation.correct
    assert not evaluation.cached
    big = evaluation.cases[1]
    assert big.speedup == pytest.approx(2.0, rel=0.02) and not big.within_noise
    assert big.baseline is not None and big.baseline.median_us == pytest.approx(100.0, rel=0.01)
    assert evaluation.score.points == pytest.approx(120 + 100 * big.speedup)
    assert evaluation.score.geomean_speedup == pytest.approx(big.speedup)
    # 3 * 4 * 2**24 bytes at 4800 GB/s = 41.9 us ideal; measured ~50 us.
    assert big.sol_fraction == pytest.approx(3 * 4 * (1 << 24) / 4800e9 / 50e-6, rel=0.02)
    assert evaluation.environment.fingerprint == GPU.fingerprint
    assert evaluation.environment.clocks == {"sm_mhz": "1980", "under_load.sm_mhz": "1755"}
    assert evaluation.environment.measurement == {
        "flush_bytes": "268435456",
        "event_overhead_us": "2.912",
        "launch_match": "judge 1.921, worker 1.916 us (worker 1 of at most 4, matched)",
    }
    assert evaluation.environment.versions["torch"] == "2.11"
    assert len(evaluation.id) == 12 and len(evaluation.cache_key) == 64 and len(evaluation.harness_version) == 64
    assert store.get(evaluation.cache_key) == evaluation


def test_the_same_inputs_hit_the_cache(add_repo: Path, tmp_path: Path) -> None:
    store, runner = SqliteStore(tmp_path / "s.sqlite"), FakeRunner()
    first = _evaluate(add_repo, store=store, runner=runner)
    second = _evaluate(add_repo, store=store, runner=runner)
    assert len(runner.calls) == 1
    assert second.cached and second == replace(first, cached=True)


def test_a_changed_task_misses(add_repo: Path, tmp_path: Path) -> None:
    store, runner = SqliteStore(tmp_path / "s.sqlite"), FakeRunner()
    first = _evaluate(add_repo, store=store, runner=runner)
    reference = add_repo / ADDRESS / "reference.py"
    reference.write_text(reference.read_text() + "# changed\n")
    second = _evaluate(add_repo, store=store, runner=runner)
    assert len(runner.calls) == 2 and not second.cached
    assert second.task_digest != first.task_digest and second.cache_key != first.cache_key


def test_changed_settings_or_machine_miss(add_repo: Path, tmp_path: Path) -> None:
    store, runner = SqliteStore(tmp_path / "s.sqlite"), FakeRunner()
    _evaluate(add_repo, store=store, runner=runner)
    _evaluate(add_repo, store=store, runner=runner, settings=HarnessSettings(trials=5))
    _evaluate(add_repo, store=store, runner=runner, environment=replace(GPU, fingerprint="x" * 64))
    assert len(runner.calls) == 3


def test_a_no_op_has_the_baseline_digest_and_passes_none(add_repo: Path) -> None:
    runner = FakeRunner()
    evaluation = _evaluate(add_repo, runner=runner)
    task = load_task(add_repo, ADDRESS)
    assert evaluation.candidate_digest == (baseline_candidate(task, add_repo)).digest
    assert runner.calls[0][0] is None


def test_a_change_to_the_scoring_code_misses(add_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The key covers the code that turns samples into a score, not only the harness: copy the
    # arena package, change one line of scoring, and the same evaluation is computed again.
    import shutil

    import arena
    from arena.evaluation import evaluate as evaluate_module
    from arena.evaluation import key

    copy = tmp_path / "arena"
    shutil.copytree(Path(arena.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    store, runner = SqliteStore(tmp_path / "s.sqlite"), FakeRunner()
    monkeypatch.setattr(evaluate_module, "code_version", lambda: key.code_version.__wrapped__(copy))
    first = _evaluate(add_repo, store=store, runner=runner)
    assert _evaluate(add_repo, store=store, runner=runner).cached and len(runner.calls) == 1
    stats = copy / "scoring" / "stats.py"
    stats.write_text(stats.read_text() + "\nOUTLIER_FENCE = 3.0\n")
    again = _evaluate(add_repo, store=store, runner=runner)
    assert not again.cached and len(runner.calls) == 2 and again.cache_key != first.cache_key


def test_invalid_candidate_from_the_harness_becomes_a_status(add_repo: Path) -> None:
    runner = FakeRunner(raises=InvalidCandidate("kernel.py is not UTF-8"))
    evaluation = _evaluate(add_repo, candidate=Candidate(ADDRESS, {"kernel.py": b"\xff"}), runner=runner)
    assert evaluation.status is Status.INVALID_CANDIDATE and evaluation.errors == ("kernel.py is not UTF-8",)


def test_an_incorrect_candidate_scores_compile_points_only(add_repo: Path) -> None:
    evaluation = _evaluate(add_repo, runner=FakeRunner(status="INCORRECT"))
    assert evaluation.status is Status.INCORRECT and evaluation.compiled and not evaluation.correct
    assert evaluation.score.points == 20.0 and evaluation.score.reward < 0
    assert evaluation.cases[0].error == "z[3]: 1 != 2"


def test_timeouts_are_not_cached(add_repo: Path, tmp_path: Path) -> None:
    store, runner = SqliteStore(tmp_path / "s.sqlite"), FakeRunner(status="TIMEOUT")
    _evaluate(add_repo, store=store, runner=runner)
    _evaluate(add_repo, store=store, runner=runner)
    assert len(runner.calls) == 2


def test_an_unknown_harness_status_is_a_runtime_error(add_repo: Path) -> None:
    assert _evaluate(add_repo, runner=FakeRunner(status="EXPLODED")).status is Status.RUNTIME_ERROR


def test_settings_for_machine_checks_only_small_cases_without_a_gpu(add_repo: Path) -> None:
    task = load_task(add_repo, ADDRESS)
    assert settings_for_machine(task, HarnessSettings(), CPU).cases == ("small",)
    assert settings_for_machine(task, HarnessSettings(), GPU).cases == ()
    assert settings_for_machine(task, HarnessSettings(backend="cpu"), GPU).cases == ("small",)
    assert settings_for_machine(task, HarnessSettings(cases=("big",)), CPU).cases == ("big",)


def test_the_harness_sees_only_the_selected_cases(add_repo: Path) -> None:
    seen = []
    runner = FakeRunner()

    def recording(task, candidate, repo_root, settings):  # type: ignore[no-untyped-def]
        seen.append(tuple(case.name for case in task.cases))
        return runner(task, candidate, repo_root, settings)

    small = _evaluate(add_repo, runner=recording, settings=HarnessSettings(cases=("small",)))
    everything = _evaluate(add_repo, runner=recording)
    assert seen == [("small",), ("small", "big")]
    assert small.task_digest == everything.task_digest  # the digest is the whole task's
    assert small.cache_key != everything.cache_key
    with pytest.raises(UnknownTask):
        _evaluate(add_repo, runner=recording, settings=HarnessSettings(cases=("nope",)))


def test_merge_environment_keeps_the_parent_fingerprint() -> None:
    merged = merge_environment(CPU, {"backend": "cpu-interpreter", "versions": {"triton": "3.7"}, "clocks": {}})
    assert merged.fingerprint == CPU.fingerprint
    assert merged.versions == {"python": "3.11", "triton": "3.7"}


def test_the_real_harness_on_the_cpu_interpreter(add_repo: Path, tmp_path: Path) -> None:
    """The whole pipeline through run_harness: baseline, exemplar and wrong candidate, small case only."""
    task = load_task(add_repo, ADDRESS)
    settings = settings_for_machine(task, HarnessSettings(backend="cpu", check_only=True, timeout_s=300), CPU)
    store = SqliteStore(tmp_path / "s.sqlite")
    baseline = evaluate(task, None, add_repo, settings, store)
    assert baseline.status is Status.PASSED and baseline.correct, baseline.errors
    assert {case.name for case in baseline.cases} >= {"small"}
    assert "big" not in {case.name for case in baseline.cases}
    assert baseline.score.points == 120.0
    assert evaluate(task, None, add_repo, settings, store).cached
    exemplar = evaluate(task, exemplar_candidates(task, add_repo)["exemplars/wide"], add_repo, settings)
    assert exemplar.correct, exemplar.errors
    wrong = evaluate(task, wrong_candidate(task, add_repo), add_repo, settings)
    assert wrong.status is Status.INCORRECT and not wrong.correct
