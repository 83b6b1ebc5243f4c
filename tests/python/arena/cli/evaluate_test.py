import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main as cli

TASK = "tasks/triton2triton/add"


def _arena(repo: Path, *args: str) -> int:
    return cli.main(["--repo-root", str(repo), "evaluate", "--task", TASK, *args])


def test_baseline_no_op_report_json_and_cache(
    add_repo: Path,
    tmp_path: Path,
    fake_harness: list[Any],
    cache_dir: Path,
    cpu_machine: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out_file = tmp_path / "e.json"
    assert _arena(add_repo, "--json", str(out_file)) == 0
    report = capsys.readouterr().out
    assert "status     PASSED" in report and "small" in report and "120.0 points" in report
    assert "timing needs a GPU" in report
    saved = json.loads(out_file.read_text())
    assert saved["task"] == "tasks/triton2triton/add:add" and saved["correct"] is True
    assert [case["name"] for case in saved["cases"]] == ["small"]
    assert fake_harness[0][0] is None and fake_harness[0][1].cases == ("small",)
    assert (cache_dir / "scores.sqlite").is_file()
    assert _arena(add_repo) == 0
    assert "(cached)" in capsys.readouterr().out
    assert len(fake_harness) == 1


def test_candidate_folder_on_a_gpu_with_json_on_stdout(
    add_repo: Path,
    fake_harness: list[Any],
    cache_dir: Path,
    gpu_machine: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    candidate = add_repo / TASK / "exemplars" / "wide"
    assert _arena(add_repo, "--candidate", str(candidate), "--json", "-") == 0
    captured = capsys.readouterr()
    evaluation = json.loads(captured.out)
    assert evaluation["status"] == "PASSED"
    assert evaluation["speedup"] == pytest.approx(2.0, rel=0.02)
    assert "speedup [95% CI]" in captured.err and "geomean" in captured.err
    assert fake_harness[0][1].cases == ()  # a GPU runs every case


def test_no_cache_runs_every_time_and_writes_nothing(
    add_repo: Path, fake_harness: list[Any], cache_dir: Path, cpu_machine: Any
) -> None:
    assert _arena(add_repo, "--no-cache") == 0
    assert _arena(add_repo, "--no-cache", "--check-only", "--backend", "cpu", "--timeout", "30") == 0
    assert len(fake_harness) == 2 and not cache_dir.exists()
    settings = fake_harness[1][1]
    assert (settings.check_only, settings.backend, settings.timeout_s) == (True, "cpu", 30.0)


def test_match_launches_reaches_the_harness_and_is_bounded(
    add_repo: Path, fake_harness: list[Any], cache_dir: Path, gpu_machine: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _arena(add_repo, "--no-cache", "--match-launches", "0") == 0
    assert _arena(add_repo, "--no-cache") == 0
    assert [run[1].match_launches for run in fake_harness] == [0, 3]
    with pytest.raises(SystemExit, match="^2$"):  # argparse's exit for a caller's error
        _arena(add_repo, "--no-cache", "--match-launches", "9")
    assert "--match-launches" in capsys.readouterr().err
    assert len(fake_harness) == 2


@pytest.mark.parametrize("flag", ["--mirror-lent", "--baseline-worker"])
def test_an_experiments_flag_reaches_the_harness_off_by_default(
    add_repo: Path, fake_harness: list[Any], cache_dir: Path, gpu_machine: Any, flag: str
) -> None:
    assert _arena(add_repo, "--no-cache", flag) == 0
    assert _arena(add_repo, "--no-cache") == 0
    field = flag.removeprefix("--").replace("-", "_")
    assert [getattr(run[1], field) for run in fake_harness] == [True, False]


def test_the_default_store_is_in_the_xdg_cache_outside_the_repository(
    add_repo: Path, fake_harness: list[Any], cpu_machine: Any, private_xdg: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARENA_CACHE_DIR", raising=False)
    assert _arena(add_repo) == 0
    assert (private_xdg / "cache" / "arena" / "scores.sqlite").is_file()  # $XDG_CACHE_HOME/arena
    assert not (add_repo / ".arena").exists()


def test_a_candidate_outside_the_allow_list_ran_and_is_invalid(
    add_repo: Path,
    tmp_path: Path,
    fake_harness: list[Any],
    cache_dir: Path,
    cpu_machine: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    candidate = tmp_path / "cand"
    (candidate).mkdir()
    (candidate / "reference.py").write_text("def add(x, y):\n    return x\n")
    assert _arena(add_repo, "--candidate", str(candidate)) == 0
    report = capsys.readouterr().out
    assert "INVALID_CANDIDATE" in report and "reference.py" in report
    assert fake_harness == []


def test_caller_errors_exit_2(
    add_repo: Path,
    tmp_path: Path,
    fake_harness: list[Any],
    cache_dir: Path,
    cpu_machine: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["--repo-root", str(add_repo), "evaluate", "--task", "tasks/triton2triton/nope"]) == 2
    assert "no task at" in capsys.readouterr().err
    assert _arena(add_repo, "--candidate", str(tmp_path / "missing")) == 2
    assert "does not exist" in capsys.readouterr().err
    assert fake_harness == []


def test_the_child_starts_before_the_machine_is_probed_and_is_closed(
    add_repo: Path, fake_harness: list[Any], cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The harness child's `import torch` overlaps the probe and the key: it is started first, used
    for the one job (again=False: no second child) and closed when the command ends."""
    from arena.cli import evaluate as evaluate_cli
    from arena.harness import launch

    launch.Standby.events = events = []  # type: ignore[attr-defined]  # conftest.NoChild's
    probe = evaluate_cli.probe_environment

    def probed():  # type: ignore[no-untyped-def]
        events.append("probe")
        return probe()

    monkeypatch.setattr(evaluate_cli, "probe_environment", probed)
    monkeypatch.setattr("arena.evaluation.evaluate.probe_environment", probed)
    assert _arena(add_repo, "--no-cache") == 0
    assert events[:3] == ["made again=False", "warm", "probe"] and events[-1] == "close"
    assert len(fake_harness) == 1


def test_json_is_written_whole_with_the_files_mode_and_through_what_is_not_a_file(tmp_path: Path) -> None:
    from arena.cli.evaluate import write_json

    kept = tmp_path / "kept.json"
    kept.write_text("old")
    kept.chmod(0o640)
    write_json(str(kept), {"a": 1})
    assert json.loads(kept.read_text()) == {"a": 1} and kept.stat().st_mode & 0o777 == 0o640
    new = tmp_path / "new.json"
    write_json(str(new), [1])
    assert json.loads(new.read_text()) == [1] and new.stat().st_mode & 0o777 == 0o644
    target = tmp_path / "target.json"
    (tmp_path / "link.json").symlink_to(target)
    write_json(str(tmp_path / "link.json"), {"b": 2})  # through the link, which stays one
    assert (tmp_path / "link.json").is_symlink() and json.loads(target.read_text()) == {"b": 2}
    pipe = tmp_path / "pipe.json"  # not a plain file (as /dev/stdout): written to, never replaced
    os.mkfifo(pipe)
    read: list[str] = []
    reader = threading.Thread(target=lambda: read.append(pipe.read_text()))
    reader.start()
    write_json(str(pipe), {"c": 3})
    reader.join(10)
    assert json.loads(read[0]) == {"c": 3} and pipe.is_fifo()
    names = ["kept.json", "link.json", "new.json", "pipe.json", "target.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == names  # no partial file left
