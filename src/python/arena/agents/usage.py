"""The Usage record agents' adapters total, re-exported: the record itself is the runner's."""

from arena.runner.records import Usage

__all__ = ["Usage"]
