"""A lent block is allocated in whole large pages (shared_gpu.SharedBlock.allocate), on the CPU
through a stand-in runtime that records what the judge asks the GPU's runtime for."""

from __future__ import annotations

import ctypes
from typing import Any, cast

import pytest

from arena.harness import shared_gpu
from arena.harness.shared_gpu import LARGE_PAGE, Runtime, SharedBlock

MiB = 1 << 20


class RecordingLibrary:
    """cudaMalloc and cudaIpcGetMemHandle as ctypes calls them: the sizes asked for are kept."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def cudaMalloc(self, pointer: Any, size: ctypes.c_size_t) -> int:  # noqa: N802 - the runtime's name
        self.sizes.append(size.value)
        ctypes.cast(pointer, ctypes.POINTER(ctypes.c_void_p))[0] = 0x7F0000000000
        return 0

    def cudaIpcGetMemHandle(self, handle: Any, pointer: Any) -> int:  # noqa: N802
        return 0


@pytest.fixture
def library(monkeypatch: pytest.MonkeyPatch) -> RecordingLibrary:
    monkeypatch.setattr(shared_gpu, "as_bytes", lambda pointer, nbytes: ("bytes at", pointer, nbytes))
    return RecordingLibrary()


@pytest.mark.parametrize(
    ("asked", "allocated"),
    [
        (1, LARGE_PAGE),
        (LARGE_PAGE, LARGE_PAGE),
        (LARGE_PAGE + 1, 2 * LARGE_PAGE),
        # A lent pool as the histogram's bytes-256 case sized it: ten sets of 128 MiB + 4 KiB.
        (2 * 10 * (128 * MiB + 4096 + 2 * MiB), 2602 * MiB),
        (0, LARGE_PAGE),
    ],
)
def test_a_block_is_allocated_in_whole_large_pages(library: RecordingLibrary, asked: int, allocated: int) -> None:
    block = SharedBlock.allocate(Runtime(cast(ctypes.CDLL, library), "cuda"), asked)
    assert library.sizes == [allocated]
    assert block.nbytes == asked  # what the judge lays out and lends: the size it asked for
    assert block.bytes == ("bytes at", 0x7F0000000000, asked)


def test_a_block_may_be_allocated_as_asked(library: RecordingLibrary) -> None:
    """The probe's comparison (bench/lent_memory_probe.py --unrounded) needs the other size too."""
    SharedBlock.allocate(Runtime(cast(ctypes.CDLL, library), "cuda"), 4096 * MiB + 4096, whole_pages=False)
    assert library.sizes == [4096 * MiB + 4096]
