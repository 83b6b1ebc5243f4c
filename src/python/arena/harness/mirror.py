"""A block the worker allocates and the judge maps for the run (settings.mirror_lent, off by
default): an experiment in making the two processes' memory alike.

The worker maps the judge's blocks (its output slots and the lent pool, lent.py) and the judge maps
none of the worker's. On an H100 a process that had mapped a peer's block read a gather 0.3-0.4%
slower on its own tensors than one that mapped nothing (bench/lent_memory_probe.py, session 40),
and the no-ops that lean furthest below 1.00 are gathers and scatters over large caches (session
43). With a block of the worker's mapped, the judge's own reads meet what the worker's meet, if that
is the cause. The block is asked for after the matching and before the empty procedure is measured:
only harness code runs in the worker then, so the handle is the harness's; the judge never reads or
writes the block.
"""

from __future__ import annotations

from typing import Any, Protocol

from arena.harness.candidate_worker import CandidateFailed
from arena.harness.placement import POOL_BYTES
from arena.harness.shared_gpu import SharedBlock, SharingError, runtime

# Left free on the device beside the block: the cases' own pools and slots come after it.
ROOM_BYTES = 4 << 30


class Lender(Protocol):
    """What Mirror.of needs of a worker (candidate_worker.CandidateWorker)."""

    def request(self, op: str, header: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[bytearray]]: ...


class Mirror:
    """The worker's block, mapped in the judge until close()."""

    def __init__(self, block: SharedBlock) -> None:
        self.block = block

    @classmethod
    def of(cls, worker: Lender, free_bytes: int, nbytes: int = POOL_BYTES) -> tuple[Mirror | None, str]:
        """A block of `nbytes` (a lent pool's default size) the worker allocates, mapped here, and
        the setup log's line; None where the device has too little free memory (`free_bytes`) or the
        worker could not lend it (the run goes on as without the setting)."""
        if free_bytes < nbytes + ROOM_BYTES:
            return None, f"no block of the worker's mapped: {free_bytes >> 20} MiB free"
        try:
            header, _ = worker.request("mirror", {"nbytes": nbytes})
            block = SharedBlock.open(runtime(), bytes.fromhex(str(header["handle"])), int(header["nbytes"]))
        except (CandidateFailed, SharingError, KeyError, ValueError) as error:
            return None, f"no block of the worker's mapped: {error}"
        return cls(block), f"a block of the worker's mapped ({block.nbytes >> 20} MiB)"

    def close(self) -> None:
        """Unmapped, before the worker (which frees it) ends."""
        try:
            self.block.close()
        except SharingError:  # the worker already gone: its memory went with it
            pass
