"""A container's name records the process that started it; the ones whose process has ended are
found (arena.executors.leftovers)."""

from __future__ import annotations

import os
from dataclasses import replace

from arena.executors.leftovers import container_name, launcher_of, left_behind, this_process
from arena_testing.processes import ended_process


def test_a_name_records_its_launcher() -> None:
    here = this_process()
    assert here is not None and here.pid == os.getpid()
    name = container_name(here)
    assert launcher_of(name) == here and name != container_name(here)  # a random part each
    assert launcher_of("arena-0123456789abcdef") is None  # the names before, and others', are not read


def test_only_containers_of_ended_processes_are_left_behind() -> None:
    here = this_process()
    assert here is not None
    ended, started = ended_process()
    reused = replace(here, start=here.start + 1)  # our pid, as a process that started at another time had it
    names = {
        "ended": container_name(replace(here, pid=ended, start=started)),
        "reused pid": container_name(reused),
        "earlier boot": container_name(replace(here, boot="f" * 12 if here.boot != "f" * 12 else "e" * 12)),
        "alive": container_name(here),
        "another namespace": container_name(replace(here, namespace=here.namespace + 1, pid=ended)),
        "not ours": "arena-0123456789abcdef",
    }
    gone = left_behind(list(names.values()), here)
    assert gone == [names["ended"], names["reused pid"], names["earlier boot"]]
    assert left_behind(list(names.values()), None) == []  # no /proc to tell: nothing removed
