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
