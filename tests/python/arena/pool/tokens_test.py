"""The pool's tokens against BuildGrid's own checks: its JWT parser and its access list."""

from __future__ import annotations

import base64
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from arena.errors import ArenaError
from arena.pool.tokens import acl_text, ensure_secret, mint, read_secret, read_token, write_token

bg_auth = pytest.importorskip(
    "buildgrid.server.auth.manager", reason="the optional `buildgrid` package is not installed"
)
from buildgrid.server.auth.config import parse_auth_config  # noqa: E402
from buildgrid.server.auth.enums import AuthMetadataAlgorithm  # noqa: E402
from buildgrid.server.auth.exceptions import AuthError  # noqa: E402

SECRET = "ab" * 32


def parser(secret: str = SECRET) -> Any:
    return bg_auth.JwtParser(secret=secret, algorithm=AuthMetadataAlgorithm.JWT_HS256)


def promoted(token: str) -> str:
    header, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=="))
    edited = json.dumps({**claims, "act": "arena-runner"}).encode()
    return ".".join([header, base64.urlsafe_b64encode(edited).rstrip(b"=").decode(), signature])


def test_buildgrid_reads_the_role_and_name_of_a_minted_token() -> None:
    identity = parser().identity_from_token(mint(SECRET + "\n", "worker", "h200-gpu0", days=1))
    assert (identity.actor, identity.subject) == ("arena-worker", "h200-gpu0")


@pytest.mark.parametrize(
    "token",
    [
        mint(SECRET, "runner", "late", days=1, now=time.time() - 2 * 86400),  # expired
        mint("cd" * 32, "runner", "forged", days=1),  # another pool's secret
        promoted(mint(SECRET, "worker", "w", days=1)),  # a worker's token made a runner's after signing
    ],
)
def test_buildgrid_refuses_an_expired_forged_or_edited_token(token: str) -> None:
    with pytest.raises(AuthError):
        parser().identity_from_token(token)


def test_each_role_may_do_its_own_part_alone(tmp_path: Path) -> None:
    (tmp_path / "acl.yml").write_text(acl_text("main"))
    acl = parse_auth_config(tmp_path / "acl.yml")["main"]
    runner = {"Execute", "GetActionResult", "UpdateActionResult", "BatchUpdateBlobs", "Read"}
    worker = {"CreateBotSession", "UpdateBotSession", "BatchReadBlobs", "Write"}
    for request in runner:
        assert acl.is_authorized(request, actor="arena-runner")
    for request in worker:
        assert acl.is_authorized(request, actor="arena-worker")
    # A worker cannot queue work or write the action cache; a runner cannot stand in for a worker.
    for request in ("Execute", "UpdateActionResult"):
        assert not acl.is_authorized(request, actor="arena-worker")
    for request in ("CreateBotSession", "UpdateBotSession"):
        assert not acl.is_authorized(request, actor="arena-runner")
    for actor in ("arena-runnerx", "xarena-runner", "", "arena-admin"):
        assert not any(acl.is_authorized(r, actor=actor) for r in runner | worker)
    assert "" not in parse_auth_config(tmp_path / "acl.yml")  # another instance gets nothing


def test_the_secret_is_made_once_and_its_owners_alone(tmp_path: Path) -> None:
    with pytest.raises(ArenaError, match="no pool secret in .*start it first"):
        read_secret(tmp_path / "state")  # `arena pool token` makes none of its own
    path = ensure_secret(tmp_path / "state")
    text = path.read_text()
    assert read_secret(tmp_path / "state") == text
    assert path.stat().st_mode & 0o777 == 0o600 and len(text.strip()) == 64
    assert ensure_secret(tmp_path / "state").read_text() == text
    os.chmod(path, 0o640)
    with pytest.raises(ArenaError, match="others may read it"):
        ensure_secret(tmp_path / "state")


@pytest.mark.parametrize(
    ("role", "name", "days", "words"),
    [("admin", "x", 1, "role"), ("runner", "a b", 1, "name"), ("runner", "", 1, "name"), ("worker", "x", 0, "days")],
)
def test_a_bad_request_for_a_token_is_refused(role: str, name: str, days: float, words: str) -> None:
    with pytest.raises(ArenaError, match=words):
        mint(SECRET, role, name, days)


def test_a_token_comes_from_its_file_or_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_POOL_TOKEN", " from-variable\n")
    assert read_token(None) == "from-variable"
    write_token(tmp_path / "token", "from-file")
    assert (tmp_path / "token").stat().st_mode & 0o777 == 0o600
    assert read_token(tmp_path / "token") == "from-file"
    os.chmod(tmp_path / "token", 0o644)
    with pytest.raises(ArenaError, match="others may read the pool token"):
        read_token(tmp_path / "token")
    with pytest.raises(ArenaError, match="cannot read the pool token"):
        read_token(tmp_path / "missing")
