"""`arena report --out FILE [--suite [NAME=]FILE]... [--submissions [NAME=]DIR]... [--cache] [--no-cache]
[--category C] [--compare A B]`

Writes one self-contained HTML file (plotly.js inline; it opens with no network): per result set
and category the scores, geomean speedup, fast_p, the seed's points, cost and tokens where
recorded; per run the speedup and its interval, speed-of-light fraction and status; plots; a
paired comparison of two sets; and each run's evidence (diff against the baseline, evaluation
record, transcript, reproducibility keys). A set is one agent configuration or submission set:
suite files (`arena suite --json`) and submission folders given the same NAME are its repeated
runs. With neither, the score cache's own evaluations are reported (docs/report.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from arena.cli.evaluate import caller_error, open_store
from arena.report.compare import SetComparison, compare_sets
from arena.report.runs import ResultSet
from arena.report.sources import Library, SetInput, cache_sets, load_set, only_category, set_inputs
from arena.report.submissions import UnreadableInput
from arena.task.load import load_tasks
from arena.task.task import CATEGORIES

HELP = "write a self-contained HTML report of result sets: scores, plots, a comparison and each run's evidence"


def add_set_arguments(parser: argparse.ArgumentParser) -> None:
    """Options `arena report` and `arena compare` share."""
    parser.add_argument("--category", choices=CATEGORIES, default="", help="only this category's tasks")
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="do not read the score cache (submission folders then need a suite file of theirs)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the comparison's bootstrap (default: 0)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, type=Path, metavar="FILE", help="the HTML file to write")
    parser.add_argument(
        "--suite",
        action="append",
        default=[],
        metavar="[NAME=]FILE",
        help="a suite file written by `arena suite --json` (default name: the file's name); repeatable",
    )
    parser.add_argument(
        "--submissions",
        action="append",
        default=[],
        metavar="[NAME=]DIR",
        help="a submissions folder, its evaluations from its suite file of the same NAME or the score cache "
        "(default name: agent.json's name, else the folder's); repeatable",
    )
    parser.add_argument(
        "--cache",
        action="store_true",
        help="also the score cache's sets: baselines, exemplars, other candidates (the default with no other input)",
    )
    parser.add_argument(
        "--compare", nargs=2, metavar=("A", "B"), help="compare these two sets (default: the two, when there are two)"
    )
    add_set_arguments(parser)


def open_library(repo_root: Path, no_cache: bool) -> Library:
    """The checkout's tasks and the score cache `arena evaluate` and `arena suite` write."""
    return Library(load_tasks(repo_root), repo_root, open_store(no_cache))


def read_sets(inputs: list[SetInput], library: Library, category: str) -> list[ResultSet]:
    return [only_category(load_set(entry, library), category) for entry in inputs]


def chosen_comparison(sets: list[ResultSet], names: list[str] | None, seed: int) -> SetComparison | None:
    """The comparison asked for by name, else of the two sets when there are exactly two."""
    if names is None:
        return compare_sets(sets[0], sets[1], seed) if len(sets) == 2 else None
    by_name = {result_set.name: result_set for result_set in sets}
    unknown = [name for name in names if name not in by_name]
    if unknown:
        raise UnreadableInput(f"no set named {', '.join(map(repr, unknown))}; the sets: {', '.join(by_name)}")
    return compare_sets(by_name[names[0]], by_name[names[1]], seed)


def run(args: argparse.Namespace) -> int:
    # Imported here: plotly is needed only to render; every other command runs where it is not
    # installed (the GPU machine runs the harness as plain Python).
    from arena.report.page import render_report

    library = open_library(args.repo_root, args.no_cache)
    try:
        sets = read_sets(set_inputs(args.suite, args.submissions), library, args.category)
        if args.cache or not (args.suite or args.submissions):
            addresses = [a for a in library.tasks if not args.category or library.category(a) == args.category]
            sets += cache_sets(library, addresses)
        if not any(result_set.runs for result_set in sets):
            return caller_error("nothing to report: no evaluation in the inputs" + _cache_hint(library))
        comparison = chosen_comparison(sets, args.compare, args.seed)
    except UnreadableInput as error:
        return caller_error(str(error))
    args.out.write_text(render_report(sets, library, comparison), encoding="utf-8")
    runs = sum(len(result_set.runs) for result_set in sets)
    print(f"wrote {args.out}: {len(sets)} set(s), {runs} run(s)" + (", with a comparison" if comparison else ""))
    return 0


def _cache_hint(library: Library) -> str:
    if library.store is None:
        return " (the score cache was not read: --no-cache)"
    return f" (score cache: {library.store.path})"
