"""What an import did, for people (a table) and for programs (JSON)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from arena.importer.outcome import Outcome

COLUMNS = ("SOURCE", "IMPORTED", "ADDRESS OR REASON")


def format_table(outcomes: Sequence[Outcome]) -> str:
    """One task a line: its name in the checkout, yes/no, the address written or why none was."""
    rows = [COLUMNS] + [
        (o.source, "yes" if o.imported else "no", o.address if o.imported else o.reason) for o in outcomes
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    lines = [f"{row[0].ljust(widths[0])}  {row[1].ljust(widths[1])}  {row[2]}".rstrip() for row in rows]
    return "\n".join(lines) + "\n" + summary(outcomes) + "\n"


def summary(outcomes: Sequence[Outcome]) -> str:
    imported = sum(o.imported for o in outcomes)
    return f"{len(outcomes)} task(s): {imported} imported, {len(outcomes) - imported} not imported"


def report_document(outcomes: Sequence[Outcome], checkout: Path, out: Path) -> dict[str, Any]:
    """The import as JSON: counts, then every task with its address or reason."""
    return {
        "checkout": str(checkout),
        "out": str(out),
        "tasks": len(outcomes),
        "imported": sum(o.imported for o in outcomes),
        "outcomes": [o.to_dict() for o in outcomes],
    }
