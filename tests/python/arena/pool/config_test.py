"""The pool's parts that need no server: its configuration, a worker's platform and paths, and
`arena serve`'s choice of score cache."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from arena.cli import serve
from arena.errors import ArenaError
from arena.pool.server import TEMPLATE, PoolSettings, render
from arena.pool.worker import WorkerSettings, safe_path


def test_the_template_fills_every_field_and_matches_on_the_remote_executors_properties(tmp_path: Path) -> None:
    text = render(
        TEMPLATE.read_text(), PoolSettings(listen="127.0.0.1:1", keepalive_s=9), "postgresql+psycopg2://x", tmp_path
    )
    assert (
        "${" not in text and 'address: "127.0.0.1:1"' in text and 'connection-string: "postgresql+psycopg2://x"' in text
    )
    assert "bot-session-keepalive-timeout: 9" in text and f'path: "{tmp_path / "cas"}"' in text
    # Every call needs a token: HS256 with the state's secret, the state's access list, loopback not trusted.
    assert f'secret: "{tmp_path / "pool.secret"}"' in text and f'acl-config: "{tmp_path / "acl.yml"}"' in text
    assert "method: jwt" in text and "allow-localhost-requests: false" in text
    assert "insecure-mode: true" in text  # plaintext unless given a certificate
    tls = render(TEMPLATE.read_text(), PoolSettings(tls_cert="/c.pem", tls_key="/k.pem"), "db", tmp_path)
    assert "insecure-mode: false" in tls and 'tls-server-cert: "/c.pem"' in tls and 'tls-server-key: "/k.pem"' in tls
    assert "match-property-keys: [OSFamily, arena-gpu, container-image]" in text
    with pytest.raises(ArenaError, match="unknown or broken field"):
        render("address: ${nowhere}", PoolSettings(), "", tmp_path)


def test_a_worker_offers_its_gpu_and_shows_its_commands_only_that_one() -> None:
    gpu = WorkerSettings(server="s:1", gpu="1", gpu_name="NVIDIA H200", bot_id="", image="r@sha256:ab")
    assert gpu.properties() == {
        "OSFamily": "linux",
        "arena-gpu": "NVIDIA H200",
        "container-image": "docker://r@sha256:ab",
    }
    assert gpu.device_environment()["CUDA_VISIBLE_DEVICES"] == "1" and gpu.name.endswith("-gpu1")
    cpu = WorkerSettings(server="s:1", gpu="cpu", gpu_name="cpu", bot_id="w1")
    assert cpu.properties() == {"OSFamily": "linux", "arena-gpu": "cpu"} and cpu.name == "w1"
    assert set(cpu.device_environment().values()) == {""}


@pytest.mark.parametrize("name", ["/etc/passwd", "../x", "a/../../x", "a//b", "."])
def test_paths_from_the_pool_never_leave_the_input_root(name: str) -> None:
    with pytest.raises(ValueError):
        safe_path(name)
    assert safe_path("run/task/kernel.py") == "run/task/kernel.py"


def test_serve_keeps_scores_in_the_pools_cas_with_store_reapi(tmp_path: Path) -> None:
    pytest.importorskip("buildgrid", reason="the optional `buildgrid` package is not installed")
    from arena.cache.reapi_store import ReapiStore

    parser = argparse.ArgumentParser()
    serve.add_arguments(parser)
    assert serve.build_store(parser.parse_args([]), tmp_path) is None  # the state folder's SQLite file
    with pytest.raises(ArenaError, match="--store-endpoint"):
        serve.build_store(parser.parse_args(["--store", "reapi"]), tmp_path)
    args = parser.parse_args(["--executor", "remote", "--remote", "127.0.0.1:9", "--store", "reapi"])
    store = serve.build_store(args, tmp_path)
    assert isinstance(store, ReapiStore) and store.endpoint == "127.0.0.1:9"
    assert (tmp_path / "scores.key").stat().st_mode & 0o077 == 0  # the key beside the runner's state
    store.close()


@pytest.mark.parametrize("cpus", ["99999", "3-1", "zero", ","])
def test_a_worker_refuses_cpus_this_machine_does_not_give_it(cpus: str) -> None:
    import argparse

    from arena.cli import pool

    parser = argparse.ArgumentParser()
    pool.add_arguments(parser)
    args = parser.parse_args(
        ["worker", "--server", "127.0.0.1:1", "--gpu", "cpu", "--arena-gpu", "cpu", "--cpus", cpus]
    )
    with pytest.raises(ArenaError, match="--cpus .* is not a list of this machine's CPUs"):
        pool.run(args)  # before it reaches for its server


def test_a_worker_without_a_sandbox_refuses_to_start_unless_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.cli import pool

    monkeypatch.setattr(pool, "sandbox_tool", lambda: "")  # no bubblewrap here
    parser = argparse.ArgumentParser()
    pool.add_arguments(parser)
    argv = ["worker", "--server", "127.0.0.1:1", "--gpu", "cpu", "--arena-gpu", "cpu"]
    with pytest.raises(ArenaError, match="no bubblewrap sandbox .* --allow-unisolated"):
        pool.run(parser.parse_args(argv))  # before it reaches for its server
    started: list[str] = []
    monkeypatch.setattr("arena.pool.worker.Worker.serve", lambda self, stop: started.append(self.settings.name))
    assert pool.run(parser.parse_args([*argv, "--allow-unisolated", "--bot-id", "trusted"])) == 0
    assert started == ["trusted"]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--tls-cert", "c.pem"], "--tls-cert and --tls-key go together"),
        (["--listen", "0.0.0.0:8980"], "refusing to listen on 0.0.0.0:8980 in plaintext"),
        (["--tls-cert", "missing.pem", "--tls-key", "missing.key"], "cannot read the TLS certificate"),
    ],
)
def test_a_server_refuses_a_plaintext_network_address_and_half_a_certificate(argv: list[str], words: str) -> None:
    from arena.cli import pool

    parser = argparse.ArgumentParser()
    pool.add_arguments(parser)
    with pytest.raises(ArenaError, match=words):
        pool.run(parser.parse_args(["server", *argv]))  # before it starts anything
