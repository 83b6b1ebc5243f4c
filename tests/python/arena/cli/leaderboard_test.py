"""`arena leaderboard`'s table: accounting columns, blank where no attempt recorded usage."""

from __future__ import annotations

from arena.cli.leaderboard import COLUMNS, format_leaderboard
from arena.runner.records import LeaderboardRow

RECORDED = LeaderboardRow("alice", "hip2hip", 2, 1.0, 0.5, 1.5, 1.4, 170.0, mean_checks=4.5, mean_evaluations=2.5,
                          mean_input_tokens=123456.0, mean_output_tokens=7890.0, mean_cached_tokens=100000.0,
                          mean_cost_usd=1.5, mean_turns=12.0, mean_tool_calls=30.5, mean_wall_s=1800.0)  # fmt: skip
UNRECORDED = LeaderboardRow("bob", "hip2hip", 1, 0.0, 0.0, 0.0, 0.0, 0.0, mean_checks=1.0, mean_evaluations=3.0)


def cells(text: str) -> list[list[str]]:
    """The table's lines cut at its column starts (taken from the header)."""
    header, *rows = text.splitlines()[:-1]
    starts = [header.index(column.upper()) for column in COLUMNS]
    bounds = list(zip(starts, starts[1:] + [None]))
    return [[line[begin:end].strip() for begin, end in bounds] for line in [header, *rows]]


def test_the_table_shows_the_means_of_recorded_usage_and_blanks_where_none_was() -> None:
    header, alice, bob = cells(format_leaderboard((RECORDED, UNRECORDED)))
    assert header[9:] == ["CHECKS", "EVALS", "TOK-IN", "TOK-OUT", "TOK-CACHED", "COST", "TURNS", "TOOLS", "WALL"]
    assert alice[9:] == ["4.5", "2.5", "123,456", "7,890", "100,000", "$1.50", "12.0", "30.5", "1800s"]
    assert bob[9:] == ["1.0", "3.0", "", "", "", "", "", "", ""]
