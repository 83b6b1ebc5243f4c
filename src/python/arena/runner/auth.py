"""Who is calling: a bearer token per agent, from a tokens file or ARENA_TOKENS.

Entries are `agent:token` or `agent:token:operator`, separated by commas or new lines ('#' starts
a comment). Operators may evaluate outside an attempt. Tokens are kept only as sha256 digests.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from arena.errors import Unauthenticated

OPERATOR = "operator"
AGENT_NAME = re.compile(r"[A-Za-z0-9_.@-]{1,64}")


@dataclass(frozen=True)
class Identity:
    agent: str  # the name attempts, evaluations and leaderboard rows are filed under
    operator: bool = False  # may evaluate outside an attempt


class Tokens:
    """The runner's known tokens, by sha256 digest."""

    def __init__(self, entries: Mapping[str, Identity]) -> None:
        self._by_digest = {digest_token(token): identity for token, identity in entries.items()}

    def __len__(self) -> int:
        return len(self._by_digest)

    def identify(self, metadata: Iterable[tuple[str, str | bytes]]) -> Identity:
        """The caller named by the "authorization: Bearer <token>" metadata entry."""
        for key, value in metadata:
            if key.lower() == "authorization" and isinstance(value, str):
                scheme, _, token = value.strip().partition(" ")
                identity = self._by_digest.get(digest_token(token.strip())) if scheme.lower() == "bearer" else None
                if identity is not None:
                    return identity
                raise Unauthenticated("unknown bearer token")
        raise Unauthenticated('no "authorization: Bearer <token>" metadata')


def parse_tokens(text: str) -> dict[str, Identity]:
    """{token: Identity} from `agent:token[:operator]` entries."""
    entries: dict[str, Identity] = {}
    for line in text.splitlines():
        for item in line.split("#", 1)[0].split(","):
            if not item.strip():
                continue
            parts = item.strip().split(":")
            agent, token, role = (parts + [""])[:3]
            if len(parts) > 3 or not AGENT_NAME.fullmatch(agent) or not token or role not in ("", OPERATOR):
                raise ValueError(f"token entry for {agent!r} is not agent:token or agent:token:{OPERATOR}")
            if token in entries:
                raise ValueError(f"agents {entries[token].agent!r} and {agent!r} share a token")
            entries[token] = Identity(agent, operator=role == OPERATOR)
    return entries


def load_tokens(path: Path | None = None, environ: Mapping[str, str] = os.environ) -> Tokens:
    """Tokens from `path` and from ARENA_TOKENS together."""
    entries = parse_tokens(path.read_text()) if path is not None else {}
    for token, identity in parse_tokens(environ.get("ARENA_TOKENS", "")).items():
        if entries.setdefault(token, identity) != identity:
            raise ValueError(f"ARENA_TOKENS gives agent {identity.agent!r} another agent's token")
    return Tokens(entries)


def new_token() -> str:
    """256 random bits as hex: never starts with '-', so it is safe as a command-line argument."""
    return secrets.token_hex(32)


def digest_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
