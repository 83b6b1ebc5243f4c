"""`arena report` from what `arena evaluate` stored and wrote (a stand-in harness, a GPU machine)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main as cli
from arena_testing.add_task import ADD_KERNEL

TASK = "tasks/triton2triton/add"
FASTER_KERNEL = ADD_KERNEL.format(op="+", block=512)


def arena(repo: Path, *args: str) -> int:
    return cli.main(["--repo-root", str(repo), *args])


def submissions(folder: Path, kernel: str, name: str = "", cost: float | None = None) -> Path:
    """A submissions folder holding the add task's candidate, with the agent's records when given."""
    (folder / "add").mkdir(parents=True)
    (folder / "add" / "kernel.py").write_text(kernel)
    if name:
        (folder / "agent.json").write_text(json.dumps({"name": name, "model": "test-model"}))
    if cost is not None:
        (folder / "add.agent.json").write_text(
            json.dumps({"cost_usd": cost, "input_tokens": 900, "output_tokens": 100})
        )
        (folder / "add.transcript.txt").write_text("read kernel.py; widened BLOCK to 512\n")
    return folder


@pytest.fixture
def evaluated(add_repo: Path, tmp_path: Path, fake_harness: list[Any], cache_dir: Path, gpu_machine: Any) -> Path:
    """The baseline and an agent's submission evaluated into the score cache; returns the submissions folder."""
    folder = submissions(tmp_path / "run1", FASTER_KERNEL, name="agent-x", cost=0.42)
    assert arena(add_repo, "evaluate", "--task", TASK) == 0
    assert arena(add_repo, "evaluate", "--task", TASK, "--candidate", str(folder / "add")) == 0
    return folder


def test_a_report_of_the_score_cache_alone(add_repo: Path, evaluated: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    out = tmp_path / "report.html"
    assert arena(add_repo, "report", "--out", str(out)) == 0
    assert "2 set(s), 2 run(s), with a comparison" in capsys.readouterr().out
    page = out.read_text()
    assert "baselines (score cache)" in page and "other candidates (score cache)" in page
    assert 'id="plot-speedup-triton2triton"' in page and 'class="comparison"' in page


def test_a_report_of_submissions_shows_the_agent_records(add_repo: Path, evaluated: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    assert arena(add_repo, "report", "--out", str(out), "--submissions", str(evaluated)) == 0
    page = out.read_text()
    assert "agent-x" in page and "model: test-model" in page
    assert "0.4200" in page and "1000" in page  # cost and tokens, per run and summed
    assert "widened BLOCK to 512" in page and "+++ candidate/kernel.py" in page
    assert 'id="plot-cost"' in page
    assert 'class="comparison"' not in page  # one set: nothing to compare


def test_suite_files_of_one_name_are_repeated_runs(add_repo: Path, evaluated: Path, tmp_path: Path) -> None:
    record = tmp_path / "e.json"
    assert (
        arena(add_repo, "evaluate", "--task", TASK, "--candidate", str(evaluated / "add"), "--json", str(record)) == 0
    )
    evaluation = json.loads(record.read_text())
    for run in ("r1", "r2"):
        (tmp_path / f"{run}.json").write_text(json.dumps({"evaluations": [dict(evaluation, label=TASK)], "failed": []}))
    out = tmp_path / "report.html"
    assert arena(add_repo, "report", "--out", str(out), "--suite", f"x={tmp_path / 'r1.json'}",
                 "--suite", f"x={tmp_path / 'r2.json'}", "--submissions", f"x={evaluated}", "--cache",
                 "--compare", "baselines (score cache)", "x") == 0  # fmt: skip
    page = out.read_text()
    assert ">2 of 2<" in page  # the second run of the task in set x
    assert "A = baselines (score cache), B = x" in page


def test_report_caller_errors_exit_2(add_repo: Path, evaluated: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    out = str(tmp_path / "r.html")
    assert arena(add_repo, "report", "--out", out, "--suite", str(tmp_path / "missing.json")) == 2
    assert "missing.json is not a suite file" in capsys.readouterr().err
    assert arena(add_repo, "report", "--out", out, "--compare", "a", "b") == 2
    assert "no set named 'a', 'b'" in capsys.readouterr().err
    assert arena(add_repo, "report", "--out", out, "--no-cache") == 2
    assert "nothing to report" in capsys.readouterr().err
    assert not Path(out).exists()
