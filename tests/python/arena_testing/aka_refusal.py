"""Why the importer refuses one task of an AKA-shaped fixture checkout (its NotImportable text),
or the task it writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.importer.checkout import find_tasks
from arena.importer.importer import import_checkout, read_task
from arena.importer.outcome import NotImportable
from arena.task.load import load_task
from arena.task.task import Task


def imported(checkout: Path, out: Path, source: str, address: str) -> Task:
    """The task the import of `checkout` into `out` writes for `source` (AKA's path), loaded from
    `address` (a test failure, with the reason, if it is not imported there)."""
    outcomes = {o.source: o for o in import_checkout(checkout, out)}
    assert outcomes[source].address == address, outcomes[source].reason
    return load_task(out, address)


def refusal(checkout: Path, name: str) -> str:
    """The reason read_task refuses the task `name` of `checkout` (a test failure if it does not)."""
    return str(refused(checkout, name))


def refused(checkout: Path, name: str) -> NotImportable:
    """What read_task raises for the task `name` of `checkout`: its text the reason, its kind the group."""
    task = next(t for t in find_tasks(checkout) if t.name == name)
    with pytest.raises(NotImportable) as raised:
        read_task(task, checkout)
    return raised.value
