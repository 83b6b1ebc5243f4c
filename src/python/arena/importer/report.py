"""What an import did, for people (a table) and for programs (JSON): every task, imported or
not, and each loosened tolerance the import fitted or kept (arena.importer.fit), with why; the
tasks not imported grouped by their reason's kind (Outcome.kind: the stage and rule that refused a
triton2triton task, arena.importer.outcome; a hip2hip or torch2hip task's, arena.importer.hip_layout)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from arena.importer.outcome import Outcome

COLUMNS = ("SOURCE", "IMPORTED", "ADDRESS OR REASON")
OWN_REASON = "a reason of its own (its line above)"  # the table's group of a reason without a kind


def format_table(outcomes: Sequence[Outcome]) -> str:
    """One task a line: its name in the checkout, yes/no, the address written or why none was."""
    rows = [COLUMNS] + [
        (o.source, "yes" if o.imported else "no", o.address if o.imported else o.reason) for o in outcomes
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    lines = [f"{row[0].ljust(widths[0])}  {row[1].ljust(widths[1])}  {row[2]}".rstrip() for row in rows]
    lines += [f"tolerance of {o.source}: {fit.describe()}" for o in outcomes for fit in o.tolerances]
    groups = not_imported_by_kind(outcomes)
    if any(groups):  # a kind besides "": the groups, largest first
        lines.append("not imported, by reason:")
        ordered = sorted(groups.items(), key=lambda item: (not item[0], -len(item[1]), item[0]))
        lines += [f"{len(sources):5d}  {kind or OWN_REASON}" for kind, sources in ordered]
    lines.append(summary(outcomes))
    narrowed = [o for o in outcomes if o.imported and o.archs]
    for archs in sorted({o.archs for o in narrowed}):
        sources = [o.source for o in narrowed if o.archs == archs]
        lines.append(
            f"{len(sources)} declared for {', '.join(archs)} alone (their launch options): {', '.join(sources)}"
        )
    fits = [fit for o in outcomes for fit in o.tolerances]
    if fits:
        fitted, default = sum(fit.fitted is not None for fit in fits), sum(fit.default for fit in fits)
        to_default = f" ({default} to arena's default)" if default else ""
        kept = len(fits) - fitted
        lines.append(f"{len(fits)} loosened tolerance(s) measured: {fitted} fitted{to_default}, {kept} kept as AKA's")
    return "\n".join(lines) + "\n"


def summary(outcomes: Sequence[Outcome]) -> str:
    imported = sum(o.imported for o in outcomes)
    return f"{len(outcomes)} task(s): {imported} imported, {len(outcomes) - imported} not imported"


def not_imported_by_kind(outcomes: Sequence[Outcome]) -> dict[str, list[str]]:
    """The tasks not imported by their reason's kind ("" for a reason of its own), in task order."""
    groups: dict[str, list[str]] = {}
    for o in outcomes:
        if not o.imported:
            groups.setdefault(o.kind, []).append(o.source)
    return groups


def report_document(outcomes: Sequence[Outcome], checkout: Path, out: Path) -> dict[str, Any]:
    """The import as JSON: counts, then every task with its address or reason."""
    return {
        "checkout": str(checkout),
        "out": str(out),
        "tasks": len(outcomes),
        "imported": sum(o.imported for o in outcomes),
        "fitted": sum(fit.fitted is not None for o in outcomes for fit in o.tolerances),
        "not_imported_by_kind": not_imported_by_kind(outcomes),
        "outcomes": [o.to_dict() for o in outcomes],
    }
