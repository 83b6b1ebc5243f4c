"""GPU memory and events the judge owns and lends to its candidate worker (legacy CUDA/HIP IPC).

The judge allocates one block with the runtime's own malloc (not torch's caching allocator, whose
blocks are parts of larger allocations), exports a handle, and the worker maps it; both see it
as uint8 tensors through __cuda_array_interface__, without a copy. Events are interprocess events
(no timing: only an order between the two processes' streams); the judge's own timing events
stay in the judge. The calls go through ctypes to the runtime library torch already loaded
(libcudart on NVIDIA, libamdhip64 on AMD): the two APIs have the same shapes, with a different
prefix, so one code path serves both. Measured on the H200 (bench/ipc_probe.py): both kinds of
handle open in a worker inside bubblewrap with its own PID namespace.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence, TypedDict

if TYPE_CHECKING:  # imported where used, after the runtime is chosen
    import torch

HANDLE_BYTES = 64
# A GPU's large page. A block is allocated in whole ones, so that the worker's mapping of it can use
# them too: on the H200 a process that opened a block of another size ran a matmul 1.85x slower on
# it than the allocating process (bench/results/2026-12-04.md, session 23).
LARGE_PAGE = 2 << 20
_EVENT_DISABLE_TIMING, _EVENT_INTERPROCESS = 0x02, 0x04
_LAZY_PEER_ACCESS = 0x01


class Place(TypedDict):
    """Where one tensor lies in a block, as the judge tells the worker (JSON)."""

    offset: int  # bytes from the block's start, a multiple of 256
    dtype: str  # torch's name without the prefix: float16, int32, ...
    shape: list[int]
    nbytes: int


class _Handle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_ubyte * HANDLE_BYTES)]  # not c_char: that stops at a zero byte


class SharingError(RuntimeError):
    """The GPU runtime refused an IPC call (or cannot be found in this process)."""


@dataclass(frozen=True)
class Runtime:
    library: ctypes.CDLL
    prefix: str  # cuda | hip

    def call(self, name: str, *args: Any) -> None:
        code = getattr(self.library, self.prefix + name)(*args)
        if code != 0:
            raise SharingError(f"{self.prefix}{name} failed with error {code}")


def runtime() -> Runtime:
    """The CUDA or HIP runtime library this process's torch loaded."""
    import torch

    torch.zeros(1, device="cuda")  # the runtime is loaded and the context made
    prefix, stem = ("hip", "libamdhip64.so") if torch.version.hip else ("cuda", "libcudart.so")
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if stem in line.rsplit("/", 1)[-1]}
    if not paths:
        raise SharingError(f"{stem} is not loaded in this process; GPU sharing needs torch's runtime")
    return Runtime(ctypes.CDLL(sorted(paths)[0]), prefix)


class _Raw:
    def __init__(self, pointer: int, nbytes: int) -> None:
        self.__cuda_array_interface__ = {
            "shape": (nbytes,),
            "typestr": "|u1",
            "data": (pointer, False),
            "version": 3,
        }


def as_bytes(pointer: int, nbytes: int) -> torch.Tensor:
    """A uint8 torch tensor over device memory at `pointer` (no copy; the memory is not torch's)."""
    import torch

    return torch.as_tensor(_Raw(pointer, nbytes), device="cuda")


class SharedBlock:
    """Device memory exported by the judge (`SharedBlock.allocate`) or mapped by the worker (`open`)."""

    def __init__(self, rt: Runtime, pointer: int, nbytes: int, handle: bytes, owned: bool) -> None:
        self.rt, self.pointer, self.nbytes, self.handle, self.owned = rt, pointer, nbytes, handle, owned
        self.bytes = as_bytes(pointer, nbytes)

    @classmethod
    def allocate(cls, rt: Runtime, nbytes: int, whole_pages: bool = True) -> SharedBlock:
        """`nbytes` of device memory and its handle; the allocation itself rounded up to whole
        LARGE_PAGEs unless `whole_pages` is False (bench/lent_memory_probe.py compares the two)."""
        pointer = ctypes.c_void_p()
        allocated = -(-max(nbytes, 1) // LARGE_PAGE) * LARGE_PAGE if whole_pages else max(nbytes, 1)
        rt.call("Malloc", ctypes.byref(pointer), ctypes.c_size_t(allocated))
        handle = _Handle()
        rt.call("IpcGetMemHandle", ctypes.byref(handle), pointer)
        return cls(rt, int(pointer.value or 0), nbytes, bytes(handle.reserved), True)

    @classmethod
    def open(cls, rt: Runtime, handle: bytes, nbytes: int) -> SharedBlock:
        pointer = ctypes.c_void_p()
        rt.call("IpcOpenMemHandle", ctypes.byref(pointer), _handle(handle), ctypes.c_uint(_LAZY_PEER_ACCESS))
        return cls(rt, int(pointer.value or 0), nbytes, handle, False)

    def close(self) -> None:
        import torch

        torch.cuda.synchronize()
        del self.bytes
        self.rt.call("Free" if self.owned else "IpcCloseMemHandle", ctypes.c_void_p(self.pointer))


class SharedEvent:
    """An interprocess event: one side records it on its stream, the other waits on it."""

    def __init__(self, rt: Runtime, event: ctypes.c_void_p, handle: bytes) -> None:
        self.rt, self.event, self.handle = rt, event, handle

    @classmethod
    def create(cls, rt: Runtime) -> SharedEvent:
        event = ctypes.c_void_p()
        rt.call("EventCreateWithFlags", ctypes.byref(event), ctypes.c_uint(_EVENT_DISABLE_TIMING | _EVENT_INTERPROCESS))
        handle = _Handle()
        rt.call("IpcGetEventHandle", ctypes.byref(handle), event)
        return cls(rt, event, bytes(handle.reserved))

    @classmethod
    def open(cls, rt: Runtime, handle: bytes) -> SharedEvent:
        event = ctypes.c_void_p()
        rt.call("IpcOpenEventHandle", ctypes.byref(event), _handle(handle))
        return cls(rt, event, handle)

    def record(self) -> None:
        """Recorded on the current torch stream."""
        self.rt.call("EventRecord", self.event, _current_stream())

    def wait(self) -> None:
        """The current torch stream waits for the event's latest recording."""
        self.rt.call("StreamWaitEvent", _current_stream(), self.event, ctypes.c_uint(0))


def _handle(data: bytes) -> _Handle:
    if len(data) != HANDLE_BYTES:
        raise SharingError(f"an IPC handle of {len(data)} bytes (expected {HANDLE_BYTES})")
    return _Handle.from_buffer_copy(data)


def _current_stream() -> ctypes.c_void_p:
    import torch

    return ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)


def slot_places(tensors: Sequence[torch.Tensor], count: int) -> list[list[Place]]:
    """Where `count` slots, each holding one tensor like each of `tensors`, lie in one block:
    (offset, dtype, shape, nbytes) of each, every offset a multiple of 256."""
    places, offset = [], 0
    for _ in range(count):
        row = []
        for t in tensors:
            row.append(place_of(t, offset))
            offset += -(-t.nbytes // 256) * 256
        places.append(row)
    return places


def place_of(tensor: torch.Tensor, offset: int) -> Place:
    """Where a tensor like `tensor` lies in a block at `offset`, as typed_view reads it back."""
    return {
        "offset": offset,
        "dtype": str(tensor.dtype).removeprefix("torch."),
        "shape": list(tensor.shape),
        "nbytes": tensor.nbytes,
    }


def typed_view(data: torch.Tensor, place: Place) -> torch.Tensor:
    """The tensor at `place` in the bytes `data` (a block's `bytes`)."""
    import torch

    start = place["offset"]
    return data[start : start + place["nbytes"]].view(getattr(torch, place["dtype"])).view(place["shape"])
