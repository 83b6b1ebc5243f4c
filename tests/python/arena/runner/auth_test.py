from __future__ import annotations

from pathlib import Path

import pytest

from arena.errors import Unauthenticated
from arena.runner.auth import Identity, load_tokens, new_token, parse_tokens


def test_parse_tokens_reads_roles_comments_and_lines() -> None:
    entries = parse_tokens("alice:a1, bob:b1  # the bots\nops:o1:operator\n\n")
    assert entries == {"a1": Identity("alice"), "b1": Identity("bob"), "o1": Identity("ops", operator=True)}


@pytest.mark.parametrize("text", ["alice", "alice:", ":tok", "alice:t:admin", "a b:t", "alice:t:operator:x"])
def test_parse_tokens_rejects_malformed_entries(text: str) -> None:
    with pytest.raises(ValueError):
        parse_tokens(text)


def test_a_shared_token_is_an_error() -> None:
    with pytest.raises(ValueError, match="share"):
        parse_tokens("alice:same,bob:same")


def test_tokens_come_from_file_and_environment(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("alice:a1\n")
    tokens = load_tokens(path, {"ARENA_TOKENS": "bob:b1"})
    assert len(tokens) == 2
    assert tokens.identify([("authorization", "Bearer a1")]) == Identity("alice")
    assert tokens.identify([("other", "x"), ("Authorization", "bearer  b1 ")]) == Identity("bob")
    with pytest.raises(ValueError):
        load_tokens(path, {"ARENA_TOKENS": "mallory:a1"})


@pytest.mark.parametrize(
    "metadata",
    [[], [("authorization", "Bearer nope")], [("authorization", "Basic a1")], [("authorization", "a1")]],
)
def test_unknown_or_missing_tokens_are_unauthenticated(metadata: list[tuple[str, str]]) -> None:
    tokens = load_tokens(None, {"ARENA_TOKENS": "alice:a1"})
    with pytest.raises(Unauthenticated):
        tokens.identify(metadata)


def test_new_tokens_are_distinct_and_safe_on_a_command_line() -> None:
    """A url-safe token started with '-' one time in 64, and `--token -x...` then broke argparse."""
    tokens = [new_token() for _ in range(1000)]
    assert len(set(tokens)) == 1000
    assert all(len(t) == 64 and not t.startswith("-") and int(t, 16) >= 0 for t in tokens)
