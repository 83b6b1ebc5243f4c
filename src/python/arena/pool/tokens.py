"""The pool's bearer tokens: JSON Web Tokens (HS256) that BuildGrid's own JWT authorization checks
on every call, signed with a secret the pool server keeps in its state folder.

A token names a role in its actor claim (`act`), and the server's access list (`acl_text`) gives
each role only its part of the pool:
- a runner (`arena serve --executor remote`, `--store reapi`) executes actions, reads their
  results and uses the CAS and the action cache;
- a worker (`arena pool worker`) opens bot sessions, takes leases and uses the CAS.
Without a worker's token nobody can stand in for a worker: a bot of its own would be handed
jobs, and a job's input root holds the key its result frame is signed with. Without a runner's
token nobody can queue work on the GPUs or write the action cache.

The tokens are made here with the standard library (a JWT is three base64url parts and an HMAC),
so the light command line can mint them without BuildGrid.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import time
from pathlib import Path

from arena.errors import ArenaError

SECRET_NAME = "pool.secret"
ACL_NAME = "acl.yml"
TOKEN_VARIABLE = "ARENA_POOL_TOKEN"
ACTOR_PREFIX = "arena-"
_CAS = ["FindMissingBlobs", "BatchReadBlobs", "BatchUpdateBlobs", "GetTree", "Read", "Write", "QueryWriteStatus"]
# What each role may call: BuildGrid's request names (its servicers' method names).
ROLE_REQUESTS = {
    "runner": [
        "Execute",
        "WaitExecution",
        "GetActionResult",
        "UpdateActionResult",
        "GetOperation",
        "CancelOperation",
        "GetCapabilities",
        *_CAS,
    ],
    "worker": ["CreateBotSession", "UpdateBotSession", "PostBotEventTemp", *_CAS],
}
ROLES = tuple(ROLE_REQUESTS)
_NAME = re.compile(r"[A-Za-z0-9._@-]{1,64}")


def ensure_secret(state: Path) -> Path:
    """The pool's signing secret in `state` (made once, readable by its owner alone)."""
    path = state / SECRET_NAME
    state.mkdir(parents=True, exist_ok=True)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        if path.is_symlink() or path.stat().st_mode & 0o077:
            raise ArenaError(
                f"{path} is a link or others may read it: the pool's secret must be its owner's alone"
            ) from None
        return path
    with os.fdopen(descriptor, "w") as out:
        out.write(secrets.token_hex(32) + "\n")
    return path


def read_secret(state: Path) -> str:
    """The secret the pool server in `state` made; ArenaError when it has made none there."""
    path = state / SECRET_NAME
    if not path.is_file() or path.is_symlink():
        raise ArenaError(
            f"no pool secret in {state}: tokens are signed with the secret `arena pool server --state {state}` "
            "makes at its first start; start it first, or give the server's --state"
        )
    return ensure_secret(state).read_text()  # its owner's alone, or refused


def _encoded(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def mint(secret: str, role: str, name: str, days: float, now: float | None = None) -> str:
    """A token for `name` in `role`, valid `days` from `now`, signed with `secret` (the file's text)."""
    if role not in ROLE_REQUESTS:
        raise ArenaError(f"a pool token's role is one of {', '.join(ROLES)}, not {role!r}")
    if not _NAME.fullmatch(name):
        raise ArenaError(f"a pool token's name is 1-64 letters, digits and . _ @ -, not {name!r}")
    if not 0 < days <= 3660:
        raise ArenaError(f"a pool token lasts more than 0 and at most 3660 days, not {days:g}")
    issued = int(time.time() if now is None else now)
    header = _encoded(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    claims = {"sub": name, "act": ACTOR_PREFIX + role, "iat": issued, "exp": issued + int(days * 86400)}
    payload = _encoded(json.dumps(claims, separators=(",", ":")).encode())
    signature = hmac.new(secret.strip().encode(), f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{_encoded(signature)}"


def acl_text(instance: str) -> str:
    """BuildGrid's access list (its `acl-config` file): each role's requests on `instance`."""
    allow = [
        {"actor": f"^{re.escape(ACTOR_PREFIX + role)}$", "requests": requests}
        for role, requests in ROLE_REQUESTS.items()
    ]
    return json.dumps({instance: {"allow": allow}}, indent=2) + "\n"  # JSON is YAML


def write_token(file: Path, token: str) -> None:
    """`token` into `file`, readable by its owner alone (as read_token asks)."""
    descriptor = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "w") as out:
        os.fchmod(out.fileno(), 0o600)
        out.write(token + "\n")


def read_token(file: Path | None) -> str:
    """The token in `file`, else in ARENA_POOL_TOKEN; "" when neither gives one. A file others may
    read is refused: a token is a worker's or a runner's power over the pool's GPUs."""
    if file is None:
        return os.environ.get(TOKEN_VARIABLE, "").strip()
    try:
        with open(file) as source:
            mode = os.fstat(source.fileno()).st_mode
            text = source.read()
    except OSError as error:
        raise ArenaError(f"cannot read the pool token in {file}: {error.strerror}") from None
    if mode & 0o077:
        raise ArenaError(f"others may read the pool token in {file} (mode {mode & 0o777:o}): chmod 600 it")
    return text.strip()
