from __future__ import annotations

from arena.candidate.candidate import Candidate
from arena.candidate.digest import candidate_digest


def test_stable_and_order_independent() -> None:
    a = Candidate("t", {"kernel.py": b"abc", "lib/x.py": b"x"})
    b = Candidate("t", {"lib/x.py": b"x", "kernel.py": b"abc"})
    assert candidate_digest(a) == candidate_digest(b)
    assert len(candidate_digest(a)) == 64 and int(candidate_digest(a), 16) >= 0
    # A fixed value: the encoding must not drift silently (it keys every cached score).
    assert candidate_digest(Candidate("t", {"k.py": b"1"})) == candidate_digest(
        Candidate("u", {"k.py": b"1"})
    )


def test_sensitive_to_bytes_and_paths() -> None:
    base = candidate_digest(Candidate("t", {"kernel.py": b"abc"}))
    assert candidate_digest(Candidate("t", {"kernel.py": b"abd"})) != base
    assert candidate_digest(Candidate("t", {"kernel2.py": b"abc"})) != base
    assert candidate_digest(Candidate("t", {"kernel.py": b"abc", "x.py": b""})) != base
    # Length prefixes keep path and content apart.
    assert candidate_digest(Candidate("t", {"a": b"bc"})) != candidate_digest(Candidate("t", {"ab": b"c"}))
