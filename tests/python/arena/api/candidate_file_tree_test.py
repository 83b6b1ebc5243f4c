"""Over real gRPC: a candidate whose paths cannot be laid out is INVALID_ARGUMENT, never INTERNAL,
and never reaches the evaluation."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.candidate.candidate import Candidate
from arena.client.client import Client
from arena.errors import InvalidCandidate

SOFTMAX = "tasks/triton2triton/softmax:softmax"


@pytest.mark.parametrize(
    "files",
    [
        {"kernel.py": b"speedup=2", "kernel.py/evil.py": b"x = 1"},
        {"kernel.py/evil.py": b"x = 1"},  # below the task's own kernel.py
    ],
)
def test_a_path_below_a_file_is_refused_as_an_invalid_candidate(
    files: dict[str, bytes], repo: Path, make_runner, serve_runner, kit
) -> None:
    fake = kit.FakeEvaluate()
    served = serve_runner(make_runner(repo, fake))
    with Client(served.address, "ops-token", timeout_s=10) as operator:  # evaluates outside attempts
        with pytest.raises(InvalidCandidate, match="lies below 'kernel.py'"):
            operator.evaluate(Candidate(task=SOFTMAX, files=files))
        assert fake.calls == []
        assert operator.evaluate(kit.candidate("speedup=2")).correct  # still serving
    assert len(fake.calls) == 1


@pytest.mark.parametrize(
    "files, limit",
    [
        # Refused before: after 0.3 s and 100 MB (80,000 levels took 62 s and 6 GB), as below a file.
        ({"kernel.py/" + "a/" * 10_000 + "x.py": b"x"}, "32 folders deep"),
        ({"kernel.py/" + "a" * 2000: b"x"}, "1024 characters"),
        ({f"kernel.py/{i}": b"" for i in range(20_000)}, "the limit is 1000 files"),
    ],
)
def test_a_path_or_a_file_list_too_large_to_check_cheaply_is_refused_by_its_size(
    files: dict[str, bytes], limit: str, repo: Path, make_runner, serve_runner, kit
) -> None:
    fake = kit.FakeEvaluate()
    served = serve_runner(make_runner(repo, fake))
    with Client(served.address, "alice-token", timeout_s=10) as alice:  # no attempt needed to send one
        with pytest.raises(InvalidCandidate, match=limit):
            alice.evaluate(Candidate(task=SOFTMAX, files=files))
    assert fake.calls == []
