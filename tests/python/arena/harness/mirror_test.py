"""mirror.Mirror on the CPU: what the judge asks its worker for, and when it goes on without a
block (the mapping itself needs a GPU: gpu_test.py)."""

from __future__ import annotations

from typing import Any

import pytest

from arena.harness import mirror
from arena.harness.candidate_worker import CandidateFailed
from arena.harness.mirror import ROOM_BYTES, Mirror
from arena.harness.placement import POOL_BYTES
from arena.harness.shared_gpu import SharingError


class _Lender:
    def __init__(self, reply: dict[str, Any] | Exception) -> None:
        self.reply = reply
        self.asked: list[tuple[str, dict[str, Any] | None]] = []

    def request(self, op: str, header: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[bytearray]]:
        self.asked.append((op, header))
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply, []


class _Block:
    opened: list[tuple[Any, bytes, int]] = []

    def __init__(self, handle: bytes, nbytes: int, fails: bool = False) -> None:
        self.handle, self.nbytes, self.fails, self.closed = handle, nbytes, fails, False

    @classmethod
    def open(cls, rt: Any, handle: bytes, nbytes: int) -> _Block:
        cls.opened.append((rt, handle, nbytes))
        if handle == b"\xff" * 64:
            raise SharingError("cudaIpcOpenMemHandle failed with error 1")
        return cls(handle, nbytes)

    def close(self) -> None:
        self.closed = True
        if self.fails:
            raise SharingError("cudaIpcCloseMemHandle failed with error 4")


@pytest.fixture(autouse=True)
def _no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    _Block.opened = []
    monkeypatch.setattr(mirror, "SharedBlock", _Block)
    monkeypatch.setattr(mirror, "runtime", lambda: "the runtime")


def test_the_worker_is_asked_for_a_pools_size_and_its_handle_is_mapped() -> None:
    lender = _Lender({"handle": "ab" * 64, "nbytes": POOL_BYTES})
    made, line = Mirror.of(lender, free_bytes=80 << 30)
    assert lender.asked == [("mirror", {"nbytes": POOL_BYTES})]
    assert _Block.opened == [("the runtime", b"\xab" * 64, POOL_BYTES)]
    assert made is not None and made.block.handle == b"\xab" * 64
    assert line == "a block of the worker's mapped (2048 MiB)"


def test_without_room_on_the_device_nothing_is_asked() -> None:
    lender = _Lender({"handle": "ab" * 64, "nbytes": POOL_BYTES})
    made, line = Mirror.of(lender, free_bytes=POOL_BYTES + ROOM_BYTES - 1)
    assert made is None and lender.asked == [] and _Block.opened == []
    assert line.startswith("no block of the worker's mapped:") and "MiB free" in line


@pytest.mark.parametrize(
    "reply, why",
    [
        (CandidateFailed("RuntimeError: CUDA out of memory", "RuntimeError", ""), "out of memory"),
        ({"nbytes": POOL_BYTES}, "handle"),  # no handle in the reply
        ({"handle": "not hex", "nbytes": POOL_BYTES}, "non-hexadecimal"),
        ({"handle": "ff" * 64, "nbytes": POOL_BYTES}, "cudaIpcOpenMemHandle failed"),
    ],
)
def test_a_block_the_worker_cannot_lend_leaves_the_run_as_without_it(reply: Any, why: str) -> None:
    made, line = Mirror.of(_Lender(reply), free_bytes=80 << 30)
    assert made is None
    assert line.startswith("no block of the worker's mapped:") and why in line, line


def test_close_unmaps_and_a_worker_already_gone_is_no_error() -> None:
    kept, gone = _Block(b"\x01" * 64, 1 << 20), _Block(b"\x02" * 64, 1 << 20, fails=True)
    Mirror(kept).close()  # type: ignore[arg-type]
    # A worker already gone took its memory with it: the SharingError of the unmapping is no error.
    Mirror(gone).close()  # type: ignore[arg-type]
    assert kept.closed and gone.closed


def test_the_run_lets_the_workers_block_go_before_the_worker_ends() -> None:
    """Run.close: the judge unmaps the block before the worker, which frees it, is ended."""
    from arena.harness.run import Run

    ended: list[str] = []

    class _Ending:
        def __init__(self, name: str) -> None:
            self.name = name

        def close(self) -> None:
            ended.append(self.name)

    run = Run.__new__(Run)
    run.mirror, run.workers = _Ending("the block"), _Ending("the worker")  # type: ignore[assignment]
    run.apart = None  # no baseline of its own worker
    run.close()
    assert ended == ["the block", "the worker"]
    run.mirror, ended[:] = None, []
    run.close()  # without the setting: the worker alone
    assert ended == ["the worker"]
