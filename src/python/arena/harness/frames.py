"""Messages between the judge and its candidate worker: framed JSON with binary attachments.

A frame is 4 bytes of header length, the JSON header, then the attachments whose lengths the
header lists under "blobs". Both directions are checked against limits: what comes back from the
worker is untrusted data (the candidate runs there and may write anything on any descriptor), so
a frame that is too large, truncated or malformed is a WorkerError, never an exception from
deep inside json or torch. Tensors travel as (dtype, shape) in the header and their raw bytes.
"""

from __future__ import annotations

import json
import math
import os
import struct
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:  # imported where used: the worker reads frames before it imports torch
    import torch

HEADER_LIMIT = 1 << 20
BLOB_LIMIT = 8 << 30
# The dtypes a task can declare (arena.task): anything else in a reply is refused.
DTYPES = ("float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool")
_SIZES = {"float64": 8, "int64": 8, "float32": 4, "int32": 4, "float16": 2, "bfloat16": 2, "int16": 2}


class WorkerError(RuntimeError):
    """The worker broke the protocol: it died (WorkerGone) or sent something malformed."""


class WorkerGone(WorkerError):
    """The worker's end of the pipe closed: it exited or was killed."""


def send(fd: int, header: dict[str, Any], blobs: Sequence[bytes | memoryview] = ()) -> None:
    header = dict(header, blobs=[len(b) for b in blobs])
    data = json.dumps(header).encode()
    _write_all(fd, struct.pack("<I", len(data)) + data)
    for blob in blobs:
        _write_all(fd, blob)


def receive(fd: int, blob_limit: int = BLOB_LIMIT) -> tuple[dict[str, Any], list[bytearray]]:
    (size,) = struct.unpack("<I", _read_exactly(fd, 4))
    if size > HEADER_LIMIT:
        raise WorkerError(f"a message header of {size} bytes (the limit is {HEADER_LIMIT})")
    try:
        header = json.loads(bytes(_read_exactly(fd, size)))
    except ValueError as error:
        raise WorkerError(f"a message header that is not JSON: {error}") from None
    if not isinstance(header, dict):
        raise WorkerError("a message header that is not a JSON object")
    sizes = header.get("blobs", [])
    if not isinstance(sizes, list) or not all(isinstance(s, int) and s >= 0 for s in sizes):
        raise WorkerError("a message whose attachment sizes are not a list of counts")
    if sum(sizes) > blob_limit:
        raise WorkerError(f"a message with {sum(sizes)} bytes attached (the limit is {blob_limit})")
    return header, [_read_exactly(fd, s) for s in sizes]


def pack_tensors(tensors: Sequence[torch.Tensor]) -> tuple[list[dict[str, Any]], list[memoryview]]:
    """(metadata, raw bytes) of each tensor, copied to the host once: the bytes are a view of that
    copy, written to the pipe as they are."""
    import torch

    meta, blobs = [], []
    for tensor in tensors:
        host = tensor.detach().contiguous().cpu()
        meta.append({"dtype": str(host.dtype).removeprefix("torch."), "shape": list(host.shape)})
        blobs.append(memoryview(host.reshape(-1).view(torch.uint8).numpy()) if host.numel() else memoryview(b""))
    return meta, blobs


def unpack_tensors(meta: object, blobs: Sequence[bytes | bytearray], device: torch.device | str) -> list[torch.Tensor]:
    """The tensors of pack_tensors, on `device`; WorkerError when the metadata does not fit."""
    import torch

    if not isinstance(meta, list) or len(meta) != len(blobs):
        raise WorkerError("tensor metadata does not match the attachments")
    tensors = []
    for item, blob in zip(meta, blobs):
        dtype, shape = (item.get("dtype"), item.get("shape")) if isinstance(item, dict) else (None, None)
        if dtype not in DTYPES or not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
            raise WorkerError(f"malformed tensor metadata: {str(item)[:200]}")
        if math.prod(shape) * _SIZES.get(dtype, 1) != len(blob):
            raise WorkerError(f"a {dtype} tensor of shape {shape} with {len(blob)} bytes")
        # A received blob is a bytearray of its own: the tensor takes its memory as it is.
        own = blob if isinstance(blob, bytearray) else bytearray(blob)
        flat = torch.frombuffer(own, dtype=torch.uint8) if blob else torch.empty(0, dtype=torch.uint8)
        tensors.append(flat.view(getattr(torch, dtype)).reshape(shape).to(device))
    return tensors


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exactly(fd: int, size: int) -> bytearray:
    """`size` bytes read straight into one buffer (an output of 128 MiB is not joined from pieces)."""
    data = bytearray(size)
    view, done = memoryview(data), 0
    while done < size:
        got = os.readv(fd, [view[done:]])
        if not got:
            raise WorkerGone("the worker closed its end (it exited or was killed)")
        done += got
    return data
