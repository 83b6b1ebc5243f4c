"""The judge's pipe to its worker: frames round-trip, and whatever else arrives is refused cleanly."""

import os
import struct

import pytest
import torch

from arena.harness.frames import (
    HEADER_LIMIT,
    WorkerError,
    WorkerGone,
    pack_tensors,
    receive,
    send,
    unpack_tensors,
)


@pytest.fixture
def pipe():
    read, write = os.pipe()
    yield read, write
    for fd in (read, write):
        try:
            os.close(fd)
        except OSError:
            pass


def test_a_frame_round_trips_with_its_attachments(pipe):
    read, write = pipe
    send(write, {"op": "call", "n": 3}, [b"abc", b"", b"\x00\xff"])
    header, blobs = receive(read)
    assert header["op"] == "call" and header["n"] == 3
    assert blobs == [b"abc", b"", b"\x00\xff"]


def test_tensors_round_trip_bit_for_bit():
    tensors = [torch.randn(3, 5), torch.arange(7, dtype=torch.int64), torch.randn(4).to(torch.bfloat16), torch.zeros(0)]
    meta, blobs = pack_tensors(tensors)
    back = unpack_tensors(meta, blobs, torch.device("cpu"))
    for a, b in zip(tensors, back):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert torch.equal(
            a.view(-1).view(torch.uint8) if a.numel() else a, b.view(-1).view(torch.uint8) if b.numel() else b
        )


@pytest.mark.parametrize(
    "meta, blobs, message",
    [
        ([{"dtype": "complex64", "shape": [1]}], [b"12345678"], "malformed"),
        ([{"dtype": "float32", "shape": [2]}], [b"1234"], "with 4 bytes"),
        ([{"dtype": "float32", "shape": [-1]}], [b""], "malformed"),
        ("not a list", [], "does not match"),
    ],
)
def test_tensor_metadata_that_does_not_fit_is_refused(meta, blobs, message):
    with pytest.raises(WorkerError, match=message):
        unpack_tensors(meta, blobs, torch.device("cpu"))


def test_a_closed_pipe_is_a_gone_worker(pipe):
    read, write = pipe
    os.write(write, b"\x05\x00")
    os.close(write)
    with pytest.raises(WorkerGone):
        receive(read)


def test_an_oversized_header_is_refused_before_it_is_read(pipe):
    read, write = pipe
    os.write(write, struct.pack("<I", HEADER_LIMIT + 1))
    with pytest.raises(WorkerError, match="header of"):
        receive(read)


def test_junk_and_oversized_attachments_are_refused(pipe):
    read, write = pipe
    os.write(write, struct.pack("<I", 3) + b"{x]")
    with pytest.raises(WorkerError, match="not JSON"):
        receive(read)
    send(write, {"op": "x"}, [b"12345"])
    with pytest.raises(WorkerError, match="the limit is 4"):
        receive(read, blob_limit=4)
