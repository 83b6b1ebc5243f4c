"""`arena serve` with --tls-cert/--tls-key, its refusal of plaintext beyond loopback, and the remote
commands' --tls-ca and --insecure-connect. The runner behind is a fast fake (no harness child)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import grpc
import pytest

import arena.api.server
from arena.cli import serve
from arena.cli.main import main
from arena.client.client import Client
from arena.errors import ArenaError
from arena.runner.runner import Runner
from arena.task.load import load_tasks
from arena_testing.runner_kit import SOFTMAX, FakeEvaluate, write_repo
from arena_testing.tls_kit import self_signed


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ARENA_TOKENS", "alice:alice-token")
    for variable in ("ARENA_RUNNER", "ARENA_TOKEN", "ARENA_TLS_CA", "ARENA_INSECURE_CONNECT"):
        monkeypatch.delenv(variable, raising=False)
    return write_repo(tmp_path / "repo")


@pytest.fixture
def swept(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Records the start-up sweep instead of sweeping this machine's temporary directory."""
    calls: list[bool] = []

    def record() -> list[Path]:
        calls.append(True)
        return []

    monkeypatch.setattr(serve, "sweep_run_folders", record)
    return calls


def no_runner(*args: Any, **kwargs: Any) -> Runner:
    raise AssertionError("the runner was opened although serving was refused")


@pytest.mark.parametrize("listen", ["0.0.0.0:0", "[::]:50051", "runner.example:50051"])
def test_serve_refuses_plaintext_beyond_loopback_before_anything_starts(
    listen: str, repo: Path, tmp_path: Path, swept: list[bool], monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setattr(serve, "open_runner", no_runner)
    argv = ["--repo-root", str(repo), "serve", "--listen", listen, "--state", str(tmp_path / "state")]
    assert main(argv) != 0
    error = capsys.readouterr().err
    assert f"refusing to listen on {listen} without TLS" in error and "--insecure-listen" in error
    assert not (tmp_path / "state").exists() and swept == []


def test_serve_wants_both_the_certificate_and_its_key(
    repo: Path, tmp_path: Path, swept: list[bool], monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setattr(serve, "open_runner", no_runner)
    certificate = self_signed(tmp_path / "tls")
    argv = ["--repo-root", str(repo), "serve", "--listen", "127.0.0.1:0", "--tls-cert", str(certificate.cert)]
    assert main(argv) != 0
    assert "--tls-cert and --tls-key go together" in capsys.readouterr().err


def test_serve_with_tls_answers_remote_commands_that_trust_its_ca(
    repo: Path, tmp_path: Path, swept: list[bool], monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    certificate = self_signed(tmp_path / "tls")
    monkeypatch.setattr(
        serve,
        "open_runner",
        lambda root, state, **_: Runner(root, state, FakeEvaluate(), tasks=load_tasks(root), durable=False).start(),
    )
    seen: dict[str, Any] = {}

    def serve_once(server: grpc.Server) -> None:
        """Instead of serving until a signal: one call through the CLI, one without the CA."""
        server.start()
        try:
            banner = capsys.readouterr().out
            address = banner.split()[3].rstrip(":")
            seen["banner"] = banner
            argv = ["--repo-root", str(repo), "tasks", "--runner", address, "--token", "alice-token",
                    "--tls-ca", str(certificate.cert), "--json", "-"]  # fmt: skip
            seen["code"] = main(argv)
            seen["tasks"] = json.loads(capsys.readouterr().out)
            seen["plaintext"] = main(["--repo-root", str(repo), "tasks", "--runner", address, "--token", "x"])
        finally:
            server.stop(0).wait(5)

    monkeypatch.setattr(arena.api.server, "serve", serve_once)
    argv = ["--repo-root", str(repo), "serve", "--listen", "127.0.0.1:0", "--state", str(tmp_path / "state"),
            "--tls-cert", str(certificate.cert), "--tls-key", str(certificate.key), "--devices", "cpu"]  # fmt: skip
    assert main(argv) == 0
    assert seen["banner"].startswith("arena runner on 127.0.0.1:") and seen["banner"].rstrip().endswith("TLS")
    assert seen["code"] == 0 and SOFTMAX in [row["address"] for row in seen["tasks"]]
    assert seen["plaintext"] != 0  # a client without the CA gets no answer
    assert swept == [True]  # the runner swept left-over run folders as it started


def test_remote_commands_refuse_plaintext_beyond_loopback_naming_the_flag(
    repo: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["--repo-root", str(repo), "tasks", "--runner", "192.0.2.1:50051", "--token", "alice-token"]
    assert main(argv) != 0
    assert "--insecure-connect" in capsys.readouterr().err
    # With the flag the client goes ahead (and finds nobody there: TEST-NET-1, a short deadline).
    made: list[dict[str, Any]] = []

    def short_client(*args: Any, **options: Any) -> Client:
        made.append(options)
        return Client(*args, **options, timeout_s=0.5)

    monkeypatch.setattr("arena.client.client.Client", short_client)
    assert main([*argv, "--insecure-connect"]) != 0
    assert made and made[0]["insecure_connect"] is True
    assert "refusing" not in capsys.readouterr().err


def test_serve_hands_its_budget_and_limit_flags_to_the_runner_and_the_server(
    repo: Path, tmp_path: Path, swept: list[bool], monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    seen: dict[str, Any] = {}

    def recording_runner(root: Path, state: Path, **options: Any) -> Runner:
        seen["runner"] = options
        return Runner(root, state, FakeEvaluate(), tasks=load_tasks(root), durable=False).start()

    def recording_server(*args: Any, **options: Any) -> Any:
        seen["server"] = options
        raise ArenaError("stop here")

    monkeypatch.setattr(serve, "open_runner", recording_runner)
    monkeypatch.setattr(arena.api.server, "create_server", recording_server)
    argv = ["--repo-root", str(repo), "serve", "--listen", "127.0.0.1:0", "--state", str(tmp_path / "state"),
            "--devices", "cpu", "--max-attempts", "5", "--max-refunds", "0", "--max-tries", "2",
            "--streams-per-identity", "4", "--calls-per-second", "7.5", "--max-pending-per-agent", "3"]  # fmt: skip
    assert main(argv) != 0 and "stop here" in capsys.readouterr().err
    assert {k: seen["runner"][k] for k in ("max_attempts", "max_refunds", "max_tries", "max_pending_per_agent")} == {
        "max_attempts": 5,
        "max_refunds": 0,
        "max_tries": 2,
        "max_pending_per_agent": 3,
    }
    limits = seen["server"]["limits"]
    assert (limits.streams_per_identity, limits.calls_per_second) == (4, 7.5)
    assert main([*argv[:-12], "--max-attempts", "0"]) != 0
    assert "--max-attempts must be at least 1" in capsys.readouterr().err
    assert main([*argv[:-12], "--max-pending-per-agent", "0"]) != 0
    assert "--max-pending-per-agent must be at least 1" in capsys.readouterr().err
    assert main([*argv[:-12], "--calls-per-second", "0"]) != 0
    assert "every call limit must be positive" in capsys.readouterr().err
