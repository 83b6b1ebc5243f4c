"""Error messages quote at most a short prefix of what they echo: a megabyte-long bad input gets
its usual status code and a message of bounded size."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import grpc
import pytest

from arena.runner.quoting import MESSAGE_BYTES, QUOTE_CHARS, cut, quote
from arena_testing.raw_protobuf import field

SOFTMAX = "tasks/triton2triton/softmax:softmax"
SERVICE = "/arena.v1.Runner/"
MEGABYTE = 1 << 20


def refusal(address: str, method: str, request: bytes, token: str = "ops-token") -> grpc.RpcError:
    metadata = (("authorization", f"Bearer {token}"),)
    with grpc.insecure_channel(address) as channel:
        with pytest.raises(grpc.RpcError) as caught:
            if method == "Evaluate":
                list(channel.unary_stream(SERVICE + method)(request, metadata=metadata, timeout=10))
            else:
                channel.unary_unary(SERVICE + method)(request, metadata=metadata, timeout=10)
    return cast(grpc.RpcError, caught.value)


@pytest.mark.parametrize(
    "method, request_bytes, code",
    [
        ("GetTask", field(1, "tasks/" + "a" * MEGABYTE), grpc.StatusCode.NOT_FOUND),
        ("GetTask", field(1, "é" * MEGABYTE), grpc.StatusCode.NOT_FOUND),
        ("OpenAttempt", field(1, "tasks/x/" + "y" * MEGABYTE), grpc.StatusCode.NOT_FOUND),
        ("GetAttempt", field(1, "z" * MEGABYTE), grpc.StatusCode.NOT_FOUND),
        ("GetEvaluation", field(1, "z" * MEGABYTE), grpc.StatusCode.NOT_FOUND),
        (
            "Evaluate",
            field(2, field(1, SOFTMAX) + field(2, field(1, "p" * MEGABYTE))),
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
        (
            "Evaluate",
            field(2, field(1, "tasks/x/" + "t" * MEGABYTE) + field(2, field(1, "k.py"))),
            grpc.StatusCode.NOT_FOUND,
        ),
    ],
)
def test_a_megabyte_of_bad_input_gets_a_short_message(
    repo: Path, make_runner, serve_runner, kit, method, request_bytes, code
) -> None:
    address = serve_runner(make_runner(repo, kit.FakeEvaluate())).address
    error = refusal(address, method, request_bytes)
    details = error.details() or ""
    assert error.code() == code, details[:300]
    assert 0 < len(details.encode()) <= MESSAGE_BYTES + 100
    refusal(address, "GetTask", field(1, "tasks/none"))  # the server keeps serving


def test_quote_keeps_a_prefix_and_says_how_long_the_value_was() -> None:
    assert quote("abc") == "'abc'"
    quoted = quote("x" * 5000)
    assert quoted.startswith("'" + "x" * QUOTE_CHARS + "'") and "5000 characters" in quoted
    assert len(quoted) < QUOTE_CHARS + 40
    assert quote("é\n") == "'\\xe9\\n'"  # ASCII only: nothing grows when gRPC escapes it


def test_cut_keeps_head_and_tail_within_the_limit() -> None:
    text = "start " + "é" * 100_000 + " what to do"
    shortened = cut(text, 600)
    assert len(shortened.encode()) <= 600 + 40
    assert shortened.startswith("start ") and shortened.endswith(" what to do") and "bytes cut" in shortened
    assert cut("short", 600) == "short"
