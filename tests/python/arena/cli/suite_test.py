import importlib.util
import json
import os
import re
import shutil
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from arena.cache.sqlite_store import SqliteStore
from arena.cli import main as cli
from arena.runner.runner import Runner
from arena_testing.waiting import wait_until


def _suite(repo: Path, *args: str) -> int:
    return cli.main(["--repo-root", str(repo), "suite", "--category", "triton2triton", *args])


def test_baselines_without_a_gpu_exit_0_and_say_what_needs_one(
    add_repo: Path,
    tmp_path: Path,
    fake_harness: list[Any],
    cache_dir: Path,
    cpu_machine: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out_file = tmp_path / "suite.json"
    assert _suite(add_repo, "--json", str(out_file)) == 0
    out = capsys.readouterr().out
    assert "1 triton2triton task(s)" in out
    assert "[1] tasks/triton2triton/add:add  PASSED  untimed" in out
    assert "1/1 correct" in out and "fast_1.0 0%" in out
    assert "1 of 1 evaluation(s) need a GPU" in out
    saved = json.loads(out_file.read_text())
    assert saved["candidates"] == "baselines" and saved["summary"]["tasks"] == 1
    # Correct but untimed (a CPU machine): no geomean of 1.0 that reads as a measured no-op.
    assert saved["summary"]["geomean_speedup"] is None and saved["summary"]["nothing_timed"] is True
    assert saved["evaluations"][0]["label"] == "tasks/triton2triton/add:add"
    assert fake_harness[0][0] is None


def test_exemplars_on_a_gpu_are_timed_and_summarized(
    add_repo: Path,
    fake_harness: list[Any],
    cache_dir: Path,
    gpu_machine: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _suite(add_repo, "--exemplars") == 0
    out = capsys.readouterr().out
    assert "tasks/triton2triton/add:add [exemplars/wide]  PASSED  speedup 2.0" in out
    assert "fast_1.0 100%" in out and "fast_2.0" in out and "need a GPU" not in out


def test_a_task_for_another_gpu_family_is_named_apart_from_what_needs_a_gpu(
    add_repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    fake_harness: list[Any],
    cache_dir: Path,
    gpu_machine: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from arena.harness.result import HarnessResult, StageLog
    from arena.task.archs import NOT_HERE

    why = NOT_HERE + "the task is declared for gfx942, no NVIDIA GPU; this GPU is sm_90"

    def refused(task, candidate, repo_root, settings, standby=None, cpus=None):  # type: ignore[no-untyped-def]
        return HarnessResult(
            status="NEEDS_DEVICE", compiled=False, correct=False, stages=(StageLog("setup", False, 0.1, why),),
            cases=(), errors=(why,), timings_available=True,
        )  # fmt: skip

    monkeypatch.setattr("arena.harness.launch.run_harness", refused)  # in place of fake_harness's
    assert _suite(add_repo) == 0
    out = capsys.readouterr().out
    assert f"NEEDS_DEVICE  untimed  ({why})" in out
    assert "1 of 1 evaluation(s) are of tasks declared for other GPUs" in out and "need a GPU" not in out


def test_submissions_missing_and_present(
    add_repo: Path,
    tmp_path: Path,
    fake_harness: list[Any],
    cache_dir: Path,
    cpu_machine: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    submissions = tmp_path / "subs"
    submissions.mkdir()
    assert _suite(add_repo, "--submissions", str(submissions)) == 0
    out = capsys.readouterr().out
    assert "INVALID_CANDIDATE" in out  # no folder for the task: a failure, not a crash
    # The progress line says why (a suite cut short by a time limit writes no JSON).
    assert re.search(r"INVALID_CANDIDATE  untimed  \(.+\)", out), out
    (submissions / "add").mkdir()
    (submissions / "add" / "kernel.py").write_text("def add(x, y):\n    return x + y\n")
    assert _suite(add_repo, "--submissions", str(submissions), "--tasks", "tasks/triton2triton/add") == 0
    assert "add:add  PASSED" in capsys.readouterr().out
    assert len(fake_harness) == 1


def test_caller_errors_exit_2(
    add_repo: Path,
    tmp_path: Path,
    fake_harness: list[Any],
    cache_dir: Path,
    cpu_machine: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _suite(add_repo, "--tasks", "tasks/triton2triton/nope") == 2
    assert "not triton2triton tasks" in capsys.readouterr().err
    assert _suite(add_repo, "--devices", "0,x") == 2
    assert "--devices: device lane 'x'" in capsys.readouterr().err
    assert _suite(add_repo, "--devices", "0", "--runner", "127.0.0.1:1") == 2
    assert "a --runner has its own" in capsys.readouterr().err
    assert _suite(add_repo, "--submissions", str(tmp_path / "missing")) == 2
    assert fake_harness == []


def test_an_empty_category_is_fine(
    add_repo: Path, cache_dir: Path, cpu_machine: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["--repo-root", str(add_repo), "suite", "--category", "hip2hip", "--json", "-"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["summary"] == {
        "tasks": 0,
        "correct": 0,
        "timed": 0,
        "geomean_speedup": None,
        "nothing_timed": True,
        "fast_p": {"1.0": 0.0, "1.2": 0.0, "2.0": 0.0},
    }
    assert "0 hip2hip task(s)" in captured.err


def _twin(repo: Path) -> None:
    """A second task, tasks/triton2triton/twin: add under another name, its small case one longer.

    (The digest leaves the name out, so an exact copy would share add's cache entries.)
    """
    target = repo / "tasks" / "triton2triton" / "twin"
    shutil.copytree(repo / "tasks" / "triton2triton" / "add", target)
    build = target / "BUILD"
    assert "name='add'" in build.read_text() and "'N': 1000" in build.read_text()
    build.write_text(build.read_text().replace("name='add'", "name='twin'").replace("'N': 1000", "'N': 1001"))


def _cached(repo: Path, out_file: Path) -> dict[str, bool]:
    """Run the suite; {label: cached} from its JSON."""
    assert _suite(repo, "--json", str(out_file)) == 0
    return {item["label"]: item["cached"] for item in json.loads(out_file.read_text())["evaluations"]}


ADD = "tasks/triton2triton/add:add"
TWIN = "tasks/triton2triton/twin:twin"


@pytest.mark.skipif(
    importlib.util.find_spec("arena.harness.launch") is None, reason="the harness (run_harness) is not there"
)
def test_a_second_run_is_answered_from_the_cache_and_a_changed_task_alone_runs_again(
    add_repo: Path,
    tmp_path: Path,
    cache_dir: Path,
    cpu_machine: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The real harness (Triton's interpreter on CPU) through the in-process runner."""
    from arena.harness import launch

    harness_runs: list[str] = []
    real_run_harness = launch.run_harness

    def counted(task, *args, **options):  # type: ignore[no-untyped-def]
        harness_runs.append(task.address)
        return real_run_harness(task, *args, **options)

    monkeypatch.setattr(launch, "run_harness", counted)  # looked up there when a lane runs a job
    _twin(add_repo)
    out_file = tmp_path / "suite.json"
    assert _cached(add_repo, out_file) == {ADD: False, TWIN: False}
    assert "2/2 correct" in capsys.readouterr().out
    assert sorted(harness_runs) == [ADD, TWIN]
    assert _cached(add_repo, out_file) == {ADD: True, TWIN: True}
    assert sorted(harness_runs) == [ADD, TWIN]  # no harness run for the second
    out = capsys.readouterr().out
    assert f"[1] {ADD}  PASSED  untimed (cached)" in out and f"[2] {TWIN}  PASSED  untimed (cached)" in out
    # A changed case in twin's BUILD changes its digest: only twin runs again.
    build = add_repo / "tasks" / "triton2triton" / "twin" / "BUILD"
    build.write_text(build.read_text().replace("'N': 1001", "'N': 999"))
    assert _cached(add_repo, out_file) == {ADD: True, TWIN: False}
    assert _cached(add_repo, out_file) == {ADD: True, TWIN: True}
    assert sorted(harness_runs) == [ADD, TWIN, TWIN]


def test_a_changed_baseline_file_is_evaluated_again_and_nothing_else(
    add_repo: Path, tmp_path: Path, fake_harness: list[Any], cache_dir: Path, cpu_machine: Any
) -> None:
    _twin(add_repo)
    out_file = tmp_path / "suite.json"
    assert _cached(add_repo, out_file) == {ADD: False, TWIN: False}
    assert _cached(add_repo, out_file) == {ADD: True, TWIN: True}
    assert len(fake_harness) == 2
    kernel = add_repo / "tasks" / "triton2triton" / "add" / "kernel.py"
    kernel.write_text(kernel.read_text().replace("BLOCK=128", "BLOCK=256"))
    assert _cached(add_repo, out_file) == {ADD: False, TWIN: True}
    assert len(fake_harness) == 3 and fake_harness[2][0] is None  # the baseline, as the no-op


def test_the_suite_evaluates_through_an_in_process_runner_without_grpc(
    add_repo: Path,
    tmp_path: Path,
    fake_harness: list[Any],
    cache_dir: Path,
    cpu_machine: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _twin(add_repo)
    jobs: list[tuple[str, str, str]] = []
    run_job = Runner._run_job

    def counted(runner: Runner, job: Any, lane: str) -> Any:
        jobs.append((job.candidate.task, job.attempt, lane))
        return run_job(runner, job, lane)

    monkeypatch.setattr(Runner, "_run_job", counted)
    monkeypatch.delenv("ARENA_RUNNER", raising=False)
    monkeypatch.setenv("ARENA_DEVICES", "0")  # --devices cpu below chooses instead
    # Neither grpc nor the client may be imported on this path (the GPU machine has neither).
    monkeypatch.setitem(sys.modules, "grpc", None)
    monkeypatch.setitem(sys.modules, "arena.client.client", None)
    assert _suite(add_repo, "--json", "-", "--devices", "cpu") == 0
    evaluations = json.loads(capsys.readouterr().out)["evaluations"]
    assert sorted(jobs) == [(ADD, "", "cpu"), (TWIN, "", "cpu")]  # one operator job per task, no attempt
    assert len(fake_harness) == 2
    # The ids are the score cache's (what `arena reproduce` finds), not the runner's job ids.
    store = SqliteStore(cache_dir / "scores.sqlite")
    assert [store.get(item["cache_key"]).id for item in evaluations] == [item["id"] for item in evaluations]  # type: ignore[union-attr]
    monkeypatch.setenv("ARENA_DEVICES", "cpu")
    assert _suite(add_repo, "--no-cache", "--devices", "all") == 0  # all: ARENA_DEVICES or discovered
    assert len(jobs) == 4 and len(fake_harness) == 4 and jobs[-1][2] == "cpu"


def test_a_remote_runner_over_grpc(
    add_repo: Path,
    tmp_path: Path,
    fake_harness: list[Any],
    cache_dir: Path,
    cpu_machine: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("arena.v1.runner_pb2", reason="the generated arena.v1 modules (Pants codegen)")
    from arena.api.embedded import start_embedded_runner
    from arena.runner.runner import open_runner

    seen: list[str] = []
    run_job = Runner._run_job

    def counted(runner: Runner, job: Any, lane: str) -> Any:
        seen.append(job.agent)
        return run_job(runner, job, lane)

    monkeypatch.setattr(Runner, "_run_job", counted)
    remote = start_embedded_runner(
        add_repo, open_runner(add_repo, tmp_path / "remote", lanes=("cpu",), store_path=tmp_path / "remote.sqlite")
    )
    try:
        assert _suite(add_repo, "--runner", remote.address, "--token", remote.token) == 0
        assert f"[1] {ADD}  PASSED" in capsys.readouterr().out
        monkeypatch.setenv("ARENA_RUNNER", remote.address)
        monkeypatch.setenv("ARENA_TOKEN", remote.token)
        assert _suite(add_repo) == 0
        # The same candidate again is the same job there: answered without a second run.
        assert f"[1] {ADD}  PASSED" in capsys.readouterr().out
    finally:
        remote.stop()
    assert seen == ["local"] and len(fake_harness) == 1
    assert not (cache_dir / "scores.sqlite").exists()  # the remote runner's cache, not this one's


def test_a_harness_fault_is_not_scored_and_the_suite_goes_on(
    add_repo: Path,
    tmp_path: Path,
    fake_harness: list[Any],
    cache_dir: Path,
    gpu_machine: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The child killed from outside on every run of the exemplar: after its retries the job is
    reported as failed, left out of the summary and the JSON's evaluations, and the exit is 1."""
    import arena.harness.launch as launch
    from arena.harness.job import failure

    def killed(task, candidate, repo_root, settings, standby=None, cpus=None):  # type: ignore[no-untyped-def]
        fake_harness.append((candidate, settings))
        return failure("RUNTIME_ERROR", "the child was killed by SIGKILL without a result", fault=True)

    monkeypatch.setattr(launch, "run_harness", killed)
    out_file = tmp_path / "suite.json"
    assert _suite(add_repo, "--exemplars", "--json", str(out_file)) == 1
    out = capsys.readouterr().out
    assert "[exemplars/wide]  FAILED, not scored: the harness left no verdict" in out
    assert "1 evaluation(s) failed in the runner and were not scored" in out
    saved = json.loads(out_file.read_text())
    assert [e["label"] for e in saved["failed"]] == ["tasks/triton2triton/add:add [exemplars/wide]"]
    assert saved["evaluations"] == [] and saved["summary"]["tasks"] == 0
    assert len(fake_harness) == 3  # the runner's retries, then no score


def test_a_suite_of_named_tasks_needs_no_category_and_refuses_unknown_ones(
    add_repo: Path, cache_dir: Path, cpu_machine: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    main = cli.main
    assert main(["--repo-root", str(add_repo), "suite", "--tasks", "tasks/triton2triton/add", "--json"]) == 0
    captured = capsys.readouterr()
    assert "1 named task(s)" in captured.err and json.loads(captured.out)["summary"]["tasks"] == 1
    assert main(["--repo-root", str(add_repo), "suite", "--tasks", "tasks/hip2hip/nope"]) == 2
    assert "not tasks: tasks/hip2hip/nope:nope" in capsys.readouterr().err
    assert main(["--repo-root", str(add_repo), "suite"]) == 2  # neither a category nor tasks


def _two_exemplars(tmp_path: Path) -> Path:
    from arena_testing.add_task import ADD_FILES, ADD_KERNEL, write_add_task

    files = {**ADD_FILES, "exemplars/narrow/kernel.py": ADD_KERNEL.format(op="+", block=256)}
    return write_add_task(tmp_path / "two", files, exemplars=["exemplars/wide", "exemplars/narrow"])


def test_the_json_is_rewritten_after_every_evaluation(
    tmp_path: Path,
    fake_harness: list[Any],
    cache_dir: Path,
    gpu_machine: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While the second evaluation runs, the file already holds the first, marked incomplete: a
    suite killed outright (SIGKILL, a machine taken back) keeps what it finished."""
    import arena.harness.launch as launch

    out_file = tmp_path / "suite.json"
    seen_while_running: list[dict[str, Any]] = []
    stand_in = launch.run_harness  # fake_harness's: it records the call

    def harness(task, candidate, repo_root, settings, standby=None, cpus=None):  # type: ignore[no-untyped-def]
        if len(fake_harness) == 1:  # the lane takes this job as the suite reads the first one's result
            wait_until(out_file.exists, "the suite's file after its first evaluation")
            seen_while_running.append(json.loads(out_file.read_text()))
        return stand_in(task, candidate, repo_root, settings)

    monkeypatch.setattr(launch, "run_harness", harness)
    assert _suite(_two_exemplars(tmp_path), "--exemplars", "--json", str(out_file)) == 0
    (partial,) = seen_while_running
    assert partial["complete"] is False and [e["label"] for e in partial["evaluations"]] == [
        "tasks/triton2triton/add:add [exemplars/wide]"
    ]
    final = json.loads(out_file.read_text())
    assert final["complete"] is True and len(final["evaluations"]) == 2
    assert not list(tmp_path.glob(".suite.json.*"))  # no partial file left beside it


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_suite_cut_short_by_a_signal_reports_and_keeps_what_finished(
    signum: int,
    tmp_path: Path,
    fake_harness: list[Any],
    cache_dir: Path,
    gpu_machine: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """timeout(1) sends SIGTERM, a terminal SIGINT: the suite stops waiting, prints the table of
    what finished, writes it as JSON marked incomplete and exits 128 + the signal."""
    import arena.harness.launch as launch

    release = threading.Event()
    stand_in = launch.run_harness  # fake_harness's: it records the call
    out_file = tmp_path / "suite.json"

    def harness(task, candidate, repo_root, settings, standby=None, cpus=None):  # type: ignore[no-untyped-def]
        if len(fake_harness) == 1:  # the second evaluation is under way, the first reported, when the signal comes
            wait_until(out_file.exists, "the suite's file after its first evaluation")
            os.kill(os.getpid(), signum)
            release.wait(30)
        return stand_in(task, candidate, repo_root, settings)

    monkeypatch.setattr(launch, "run_harness", harness)
    before = signal.getsignal(signum)
    try:
        code = _suite(_two_exemplars(tmp_path), "--exemplars", "--json", str(out_file))
    finally:
        release.set()
    assert code == 128 + signum
    assert signal.getsignal(signum) == before  # the suite's handler is gone with it
    out = capsys.readouterr().out
    assert "[exemplars/wide]  PASSED  speedup 2.0" in out and "1/1 correct" in out
    assert f"interrupted by {signal.Signals(signum).name}: 1 of 2 evaluation(s) finished" in out
    saved = json.loads(out_file.read_text())
    assert saved["complete"] is False and saved["summary"]["tasks"] == 1
    assert [e["label"] for e in saved["evaluations"]] == ["tasks/triton2triton/add:add [exemplars/wide]"]


def test_resume_keeps_what_still_answers_and_evaluates_the_rest(
    tmp_path: Path,
    fake_harness: list[Any],
    cache_dir: Path,
    gpu_machine: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A suite's file resumed (--no-cache: fresh measurements, as on a GPU lent for minutes): an
    exemplar unchanged since is kept, one whose files changed is evaluated again, and an entry of
    another harness version is not trusted."""
    repo = _two_exemplars(tmp_path)
    out_file = tmp_path / "suite.json"
    assert _suite(repo, "--exemplars", "--no-cache", "--json", str(out_file)) == 0
    assert len(fake_harness) == 2
    capsys.readouterr()
    narrow = repo / "tasks" / "triton2triton" / "add" / "exemplars" / "narrow" / "kernel.py"
    narrow.write_text(narrow.read_text() + "\n# changed\n")
    assert _suite(repo, "--exemplars", "--no-cache", "--json", str(out_file), "--resume") == 0
    out = capsys.readouterr().out
    assert len(fake_harness) == 3  # the changed one alone
    assert re.search(
        rf"\[1\] tasks/triton2triton/add:add \[exemplars/wide\]  PASSED  speedup 2\.\d+  \(kept from {re.escape(str(out_file))}\)",
        out,
    )
    assert "[2] tasks/triton2triton/add:add [exemplars/narrow]  PASSED" in out
    saved = json.loads(out_file.read_text())
    assert saved["complete"] is True
    assert [e["label"] for e in saved["evaluations"]] == [
        "tasks/triton2triton/add:add [exemplars/wide]",
        "tasks/triton2triton/add:add [exemplars/narrow]",
    ]
    for entry in saved["evaluations"]:
        entry["harness_version"] = "another harness"
    out_file.write_text(json.dumps(saved))
    assert _suite(repo, "--exemplars", "--no-cache", "--json", str(out_file), "--resume") == 0
    assert len(fake_harness) == 5 and "kept from" not in capsys.readouterr().out


def test_resume_refuses_what_it_cannot_resume_from(
    tmp_path: Path, add_repo: Path, cache_dir: Path, cpu_machine: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "suite.json"
    assert _suite(add_repo, "--resume") == 2
    assert "--resume needs --json FILE" in capsys.readouterr().err
    assert _suite(add_repo, "--resume", "--json", str(out_file), "--runner", "localhost:1") == 2
    assert "a --runner answers what it scored" in capsys.readouterr().err
    out_file.write_text("{not json")
    assert _suite(add_repo, "--resume", "--json", str(out_file)) == 2
    assert f"cannot resume from {out_file}" in capsys.readouterr().err
    out_file.write_text(json.dumps({"candidates": "exemplars", "evaluations": []}))
    assert _suite(add_repo, "--resume", "--json", str(out_file)) == 2  # the baselines asked
    assert "holds the 'exemplars' of a suite, not its 'baselines'" in capsys.readouterr().err
    assert out_file.read_text() == json.dumps({"candidates": "exemplars", "evaluations": []})  # untouched
