"""What fresh inputs for every timed call cost a whole evaluation (issue #12: within 20%).

    python3 bench/fresh_inputs_cost.py SUITE.json [SUITE.json ...]

Reads the JSON of `arena suite ... --json` (or of `arena evaluate ... --json`) and, per
evaluation, the time stage's log: each timed case's chunk phases, of which "draw" (the judge's
and the worker's fresh input sets, placed at random) and "validate" (every timed call's outputs
against that call's own reference) are what fresh inputs add; the references cost nothing (they
are the baseline's timed outputs). The evaluation's wall is the sum of its stages. Prints a row
per evaluation and the total: the share of the wall fresh inputs took, and the wall with them
over the wall without them.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

_PHASE = re.compile(r"\b(draw|validate) ([0-9]+(?:\.[0-9]+)?)")


def fresh_seconds(time_log: str) -> float:
    """Seconds of drawing and validating over every timed case of one time-stage log."""
    return sum(float(seconds) for _, seconds in _PHASE.findall(time_log))


def rows(suite: dict) -> list[tuple[str, float, float]]:
    """(task, evaluation wall s, fresh-input s) of every evaluation that reached its time stage."""
    found = []
    evaluations = suite.get("evaluations") or ([suite] if "stages" in suite else [])  # a suite, or one evaluation
    for evaluation in evaluations:
        stages = evaluation.get("stages", [])
        logs = [stage.get("log", "") for stage in stages if stage.get("name") == "time"]
        if not logs:
            continue
        wall = sum(float(stage.get("seconds") or 0.0) for stage in stages)
        found.append((str(evaluation.get("task", "?")), wall, fresh_seconds(logs[0])))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suites", nargs="+", type=Path)
    found = [row for path in parser.parse_args().suites for row in rows(json.loads(path.read_text()))]
    if not found:
        raise SystemExit("no evaluation with a time stage in these files")
    print(f"{'task':60s} {'wall s':>7s} {'fresh s':>7s} {'share':>6s}")
    for task, wall, fresh in found:
        print(f"{task:60s} {wall:7.2f} {fresh:7.2f} {fresh / wall:6.1%}")
    wall, fresh = sum(row[1] for row in found), sum(row[2] for row in found)
    print(
        f"{len(found)} evaluations: {wall:.1f} s, of which fresh inputs {fresh:.1f} s ({fresh / wall:.1%}); "
        f"with them over without: {wall / (wall - fresh):.3f}"
    )


if __name__ == "__main__":
    main()
