"""`arena compare A B [--json FILE|-] [--category C] [--no-cache] [--seed N]`

A paired comparison of two result sets over the tasks they share: the geomean of B's speedup over
A's with a bootstrap 95% interval, wins/ties/losses (a tie: within the task's noise floor), fast_p
of each and their difference, and the Wilcoxon signed-rank test on the log ratios. A and B are
each [NAME=]PATH[,PATH...]: suite files (`arena suite --json`, *.json) and submission folders, all
of one set; several paths are its repeated runs (docs/report.md). Exit 0 when compared, 2 when
an input cannot be read or the sets share no task.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from arena.cli.evaluate import add_json_flag, caller_error, write_json
from arena.cli.report import add_set_arguments, open_library, read_sets
from arena.report.compare import SetComparison, compare_sets
from arena.report.sources import SetInput, split_named_path
from arena.report.submissions import UnreadableInput, read_configuration
from arena.report.table import format_table

HELP = "compare two result sets task by task: geomean ratio with its interval, wins/ties/losses, a paired test"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    for side in ("A", "B"):
        parser.add_argument(
            side.lower(),
            metavar=side,
            help=f"set {side}: [NAME=]PATH[,PATH...], suite files (*.json) and submission folders",
        )
    add_json_flag(parser, "the comparison")
    add_set_arguments(parser)


def parse_set(text: str, fallback: str) -> SetInput:
    """A command-line set: suite files and submission folders, named NAME or after its first path."""
    name, paths = split_named_path(text)
    suites = tuple(Path(path) for path in paths.split(",") if not Path(path).is_dir())
    folders = tuple(Path(path) for path in paths.split(",") if Path(path).is_dir())
    for path in suites:
        if not path.is_file():
            raise UnreadableInput(f"{str(path)!r} is neither a suite file nor a submissions folder")
    if not name:
        first = Path(paths.split(",")[0])
        name = (read_configuration(first).get("name") if first.is_dir() else "") or first.resolve().stem or fallback
    return SetInput(name, suites, folders)


def format_comparison(c: SetComparison) -> str:
    rows = [
        (t.task, t.category, f"{t.runs_a}/{t.runs_b}", t.speedup_a, t.speedup_b, t.ratio,
         f"{t.noise_floor * 100:.2f}%", t.verdict)
        for t in c.tasks
    ]  # fmt: skip
    headers = ("task", "category", "runs A/B", "speedup A", "speedup B", "B / A", "noise floor", "verdict")
    test = c.signed_rank
    fast = "   ".join(
        f"fast_{key} A {c.fast_p_a[key] * 100:.0f}% B {c.fast_p_b[key] * 100:.0f}% "
        f"({c.fast_p_difference[key] * 100:+.0f} pts)"
        for key in c.fast_p_a
    )
    lines = [
        f"A = {c.a}   B = {c.b}",
        "",
        format_table(headers, rows),
        "",
        f"geomean speedup ratio B / A  {c.ratio:.3f}  [{c.ratio_ci_low:.3f}, {c.ratio_ci_high:.3f}] "
        f"({c.level * 100:.0f}% bootstrap over tasks and runs, {c.resamples} resamples)",
        f"B faster {c.b_faster}   ties {c.ties}   A faster {c.a_faster}   (ties: within the task's noise floor)",
        fast,
        f"Wilcoxon signed-rank on log ratios: W+ {test.statistic:g}, n {test.n}, two-sided p {test.p_value:.4g} "
        f"({test.method})",
    ]
    if c.only_a or c.only_b:
        lines.append(f"not compared (in one set only): A {', '.join(c.only_a) or '-'}; B {', '.join(c.only_b) or '-'}")
    return "\n".join(lines)


def comparison_document(comparison: SetComparison) -> Any:
    """asdict(comparison) with NaN written as null (JSON has no NaN)."""
    return _no_nan(asdict(comparison))


def _no_nan(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {key: _no_nan(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_no_nan(item) for item in value]
    return value


def run(args: argparse.Namespace) -> int:
    library = open_library(args.repo_root, args.no_cache)
    try:
        inputs = [parse_set(args.a, "A"), parse_set(args.b, "B")]
        if inputs[0].name == inputs[1].name:
            inputs = [SetInput(f"{entry.name} ({side})", entry.suite_files, entry.submission_folders)
                      for entry, side in zip(inputs, "AB")]  # fmt: skip
        a, b = read_sets(inputs, library, args.category)
    except UnreadableInput as error:
        return caller_error(str(error))
    comparison = compare_sets(a, b, args.seed)
    if not comparison.tasks:
        return caller_error(f"{a.name} ({len(a.runs)} runs) and {b.name} ({len(b.runs)} runs) share no task")
    report = sys.stderr if args.json == "-" else sys.stdout
    print(format_comparison(comparison), file=report)
    if args.json:
        write_json(args.json, comparison_document(comparison))
    return 0
