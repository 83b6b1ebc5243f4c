import importlib.util
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main as cli
from arena.harness.result import HarnessResult

TASK = "tasks/triton2triton/add"


def _validate(repo: Path) -> int:
    return cli.main(["--repo-root", str(repo), "validate-task", "--task", TASK])


def _use_harness(monkeypatch: pytest.MonkeyPatch, runner: Any) -> list[Any]:
    """`runner(task, candidate, repo_root, settings)` in place of run_harness; returns the standby
    each call was given (validation runs through a local executor: a child started ahead)."""
    standbys: list[Any] = []

    def run_harness(task, candidate, repo_root, settings, standby=None, cpus=None):  # type: ignore[no-untyped-def]
        standbys.append(standby)
        return runner(task, candidate, repo_root, settings)

    monkeypatch.setattr("arena.harness.launch.run_harness", run_harness)
    return standbys


@pytest.fixture
def catching_runner(harness_result: Any) -> Any:
    """Like the fake harness, but a kernel computing x - y is INCORRECT, as the real one would find."""

    def runner(task, candidate, repo_root, settings) -> HarnessResult:  # type: ignore[no-untyped-def]
        if candidate is not None and b"x - y" in candidate.files.get("kernel.py", b""):
            return HarnessResult(status="INCORRECT", compiled=True, correct=False, errors=("output z differs",))
        return harness_result(task, candidate, repo_root, settings)

    return runner


def test_a_good_task_is_valid(
    add_repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    cpu_machine: Any,
    catching_runner: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    calls: list[Any] = []

    def run_harness(*a: Any) -> Any:
        calls.append(a[3])  # the settings
        return catching_runner(*a)

    standbys = _use_harness(monkeypatch, run_harness)
    assert _validate(add_repo) == 0
    out = capsys.readouterr().out
    assert "reference agrees with float64 on case 'small'" in out
    assert "ok    baseline evaluates correct" in out
    assert "ok    exemplar exemplars/wide evaluates correct" in out
    assert "wrong candidate is caught by the correctness check (INCORRECT)" in out
    assert "valid" in out and "FAIL" not in out
    # Baseline, one exemplar, the wrong one: all check-only, small cases only (no GPU here).
    assert len(calls) == 3 and all(s.check_only and s.cases == ("small",) for s in calls)
    # Declared cases only (no hidden copies), each evaluation's child started while the one before ran.
    assert all(s.hidden_seeds == 0 for s in calls)
    assert len(standbys) == 3 and all(b is not None and b is standbys[0] for b in standbys)


def test_a_wrong_candidate_that_passes_fails_validation(
    add_repo: Path, fake_harness: list[Any], cpu_machine: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _validate(add_repo) == 1
    out = capsys.readouterr().out
    assert "FAIL  the wrong candidate evaluates correct" in out and "INVALID (1 failure(s))" in out


def test_an_imprecise_reference_fails_validation(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    cpu_machine: Any,
    catching_runner: Any,
    write_add: Any,
    add_files: dict[str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Adding 1e4 in float32 rounds x + y to ~1e-3: far outside the float32 tolerance (1e-5).
    sloppy = "def add(x, y):\n    return (x + y + 1e4) - 1e4\n"
    repo = write_add(tmp_path / "repo", files={**add_files, "reference.py": sloppy})
    _use_harness(monkeypatch, catching_runner)
    assert _validate(repo) == 1
    out = capsys.readouterr().out
    assert "FAIL  reference on case 'small' does not meet the task's tolerance" in out
    assert "float32 against float64" in out


def test_a_broken_declaration_fails(tmp_path: Path, write_add: Any, capsys: pytest.CaptureFixture[str]) -> None:
    repo = write_add(tmp_path / "repo", cases=[])
    assert _validate(repo) == 1
    assert "FAIL  the declaration does not load" in capsys.readouterr().out


def test_an_exemplar_that_fails_is_reported(
    add_repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    cpu_machine: Any,
    catching_runner: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def runner(task, candidate, repo_root, settings):  # type: ignore[no-untyped-def]
        if candidate is not None and b"1024" in candidate.files["kernel.py"]:
            return HarnessResult(status="COMPILE_ERROR", compiled=False, correct=False, errors=("bad BLOCK",))
        return catching_runner(task, candidate, repo_root, settings)

    _use_harness(monkeypatch, runner)
    assert _validate(add_repo) == 1
    assert (
        "FAIL  exemplar exemplars/wide does not evaluate correct: COMPILE_ERROR: bad BLOCK" in capsys.readouterr().out
    )


def test_a_wrong_candidate_stopped_before_the_check_proves_nothing(
    add_repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    cpu_machine: Any,
    harness_result: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def runner(task, candidate, repo_root, settings):  # type: ignore[no-untyped-def]
        if candidate is not None and b"x - y" in candidate.files["kernel.py"]:
            return HarnessResult(status="COMPILE_ERROR", compiled=False, correct=False, errors=("syntax",))
        return harness_result(task, candidate, repo_root, settings)

    _use_harness(monkeypatch, runner)
    assert _validate(add_repo) == 1
    assert "FAIL  the wrong candidate fails before its numbers are checked" in capsys.readouterr().out


def test_needs_device_is_accepted_on_a_machine_without_a_gpu(
    add_repo: Path, monkeypatch: pytest.MonkeyPatch, cpu_machine: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    _use_harness(monkeypatch, lambda *a: HarnessResult(status="NEEDS_DEVICE", compiled=True, correct=False))
    assert _validate(add_repo) == 0
    out = capsys.readouterr().out
    assert "note  baseline: compiled; checking needs a GPU (NEEDS_DEVICE)" in out
    assert "wrong candidate: cannot be checked on this machine" in out


@pytest.mark.skipif(
    importlib.util.find_spec("arena.harness.launch") is None,
    reason="arena.harness.launch (run_harness) is not written yet",
)
def test_the_real_harness_validates_the_add_task(add_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _validate(add_repo) == 0, capsys.readouterr().out


def test_changed_tasks_are_validated_and_recorded_until_they_change_again(
    add_repo: Path, monkeypatch: pytest.MonkeyPatch, cpu_machine: Any, catching_runner: Any, capsys: Any
) -> None:
    from arena.validation.record import read_record

    calls = _use_harness(monkeypatch, catching_runner)

    def validate_changed(*extra: str) -> int:
        return cli.main(["--repo-root", str(add_repo), "validate-task", "--all", "--changed", *extra])

    assert validate_changed("--record") == 0
    assert len(calls) == 3 and "recorded 1 task(s)" in capsys.readouterr().out
    assert list(read_record(add_repo)) == [TASK]
    assert validate_changed() == 0
    assert len(calls) == 3 and "nothing to validate" in capsys.readouterr().out
    (add_repo / TASK / "kernel.py").write_text((add_repo / TASK / "kernel.py").read_text() + "\n# changed\n")
    assert validate_changed() == 0
    assert len(calls) == 6  # validated again, in full


def test_a_failing_task_is_not_recorded(
    add_repo: Path, fake_harness: list[Any], cpu_machine: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from arena.validation.record import read_record

    # The fake harness finds every candidate correct, the wrong one too: invalid.
    assert cli.main(["--repo-root", str(add_repo), "validate-task", "--task", TASK, "--record"]) == 1
    assert read_record(add_repo) == {} and "recorded 0 task(s)" in capsys.readouterr().out


def test_the_fast_tier_checks_every_task_in_one_process(add_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--repo-root", str(add_repo), "validate-task", "--fast", "--all"]) == 0
    out = capsys.readouterr().out
    assert "ok    baseline correct on case 'small'" in out and f"{TASK}:add: valid" in out
