"""The runner under faults, for a bounded time: concurrent agents on loopback while the server is
killed (SIGKILL) and started again and its harness children are killed at random.

    PYTHONPATH=src/python python bench/runner_soak.py --minutes 30 --clients 20 [--write bench/RESULTS.md]

Run it from a copy of the sources nobody edits meanwhile: the runner pins the harness's digest
when it starts and refuses jobs once the files change (docs/harness.md).

What runs is the product: `arena serve` (a process of its own, the CPU lane, the real harness
in sandboxed children) on a task written here whose untimed cases run in Triton's interpreter.
Each client is a process and an agent with one attempt; it sends candidates of three kinds:
its own new kernels (a new job each), kernels every client shares (one client's job is another's
cache hit) and a wrong kernel (INCORRECT). A call the server could not answer (it was killed) is
sent again unchanged: the same candidate within the same attempt is the same job, so it must
cost nothing twice. Afterwards, from the runner's own state (read-only):
- every job a client was answered about is done, exactly one row, and what the client was told
  (status, points) is what the row holds;
- no job is left pending or running once the queue drains;
- each attempt spent one iteration per job of its own, give or take the jobs the runner failed
  and refunded (a failed job sent again is charged again for its new run);
- no score-cache row holds a verdict a kill produced (a fault is retried, never stored).
The process exits non-zero when any check fails.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from arena.candidate.candidate import Candidate

TASK = "tasks/triton2triton/scale:scale"
BUILD = """
kernel_task(
    name="scale",
    category="triton2triton",
    description="y = 2 * x",
    baseline=["kernel.py"],
    entry="kernel.py:scale",
    signature="scale(x: [N] float32) -> [N] float32",
    reference="reference.py:scale",
    sources=["reference.py"],
    inputs=[{"name": "x", "shape": ["N"], "dtype": "float32"}],
    outputs=[{"name": "y", "shape": ["N"], "dtype": "float32"}],
    cases=[
        {"name": "small", "dims": {"N": 1000}, "dtype": "float32", "seed": 6},
        {"name": "odd", "dims": {"N": 777}, "dtype": "float32", "seed": 7},
        {"name": "timed", "dims": {"N": 1048576}, "dtype": "float32", "seed": 8, "timed": True},
    ],
    iterations=1000000,
    budget_seconds=86400,
)
"""
KERNEL = """import torch
import triton
import triton.language as tl


@triton.jit
def _scale(x, y, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y + offsets, tl.load(x + offsets, mask=mask) * FACTOR, mask=mask)


def scale(x):
    y = torch.empty_like(x)
    _scale[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
    return y
"""
# A fault a kill produces, as the harness or runner words it: none may be a stored verdict.
KILL_WORDS = ("signal", "killed", "SIGKILL", "without a signed result", "lost")


def write_repo(root: Path) -> Path:
    task_dir = root / "tasks" / "triton2triton" / "scale"
    task_dir.mkdir(parents=True)
    (root / "pants.toml").write_text("")
    (task_dir / "BUILD").write_text(BUILD)
    (task_dir / "kernel.py").write_text(KERNEL.replace("FACTOR", "2.0"))
    (task_dir / "reference.py").write_text("def scale(x):\n    return x * 2\n")
    return root


def candidate(kind: str, client: int, index: int) -> Candidate:
    factor = "3.0" if kind == "wrong" else "2.0"
    note = {"own": f"# client {client} kernel {index}\n", "shared": f"# shared kernel {index % 7}\n"}.get(kind, "")
    return Candidate(TASK, {"kernel.py": (note + KERNEL.replace("FACTOR", factor)).encode()})


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def client_loop(address: str, client: int, stop_at: float, out: str) -> None:
    """One agent (its own process): evaluate until stop_at, resending what the server dropped.
    Writes one JSON line per answered evaluation to `out`."""
    from arena.client.client import Client
    from arena.errors import ArenaError

    rng = random.Random(client)
    answered: list[dict[str, object]] = []
    resent = 0
    attempt = ""
    with Client(address, f"soak{client}-token", timeout_s=30, evaluate_timeout_s=900) as session:
        while not attempt:
            try:
                attempt = session.open_attempt(TASK).id
            except ArenaError:
                time.sleep(1)
        index = 0
        while time.time() < stop_at:
            kind = rng.choices(("own", "shared", "wrong"), (6, 3, 1))[0]
            sent = candidate(kind, client, index)
            index += 1
            while True:  # the same candidate again until the runner answers it
                try:
                    result = session.evaluate(sent, attempt)
                    break
                except ArenaError as error:
                    resent += 1
                    if not str(error).startswith("cannot reach the runner"):  # a refusal: not sent again
                        answered.append({"kind": kind, "error": str(error)[:300]})
                        result = None
                        break
                    time.sleep(1 + rng.random())
            if result is not None:
                answered.append(
                    {
                        "kind": kind,
                        "id": result.id,
                        "status": result.status.value,
                        "points": result.score.points,
                        "attempt": attempt,
                    }
                )
    Path(out).write_text("\n".join(json.dumps(a) for a in answered) + f"\n{json.dumps({'resent': resent})}\n")


class Server:
    """`arena serve` as its own process; killed with SIGKILL, started again on the same state."""

    def __init__(self, repo: Path, state: Path, tokens: Path, port: int, log: Path) -> None:
        self.argv = [
            sys.executable,
            "-m",
            "arena.cli.main",
            "--repo-root",
            str(repo),
            "serve",
            "--listen",
            f"127.0.0.1:{port}",
            "--state",
            str(state),
            "--tokens",
            str(tokens),
            "--devices",
            "cpu",
        ]
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("a") as log:
            self.process = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT)

    def check_alive(self) -> None:
        """A server that exited by itself (not killed here) ends the soak with its log's tail."""
        assert self.process is not None
        if self.process.poll() is not None:
            tail = self.log.read_text()[-2000:]
            raise SystemExit(f"arena serve exited with {self.process.returncode}:\n{tail}")

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.kill()


def descendants_running(root_pid: int, module: str) -> list[int]:
    """Processes below root_pid whose command line names `module` (this bench's children only:
    other test runs on the machine start harness children too)."""
    parents: dict[int, int] = {}
    commands: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            commands[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("PPid:"):
                parents[int(entry.name)] = int(line.split()[1])
    found = []
    for pid, command in commands.items():
        if module not in command:
            continue
        ancestor, depth = parents.get(pid, 0), 0
        while ancestor > 1 and ancestor != root_pid and depth < 20:
            ancestor, depth = parents.get(ancestor, 0), depth + 1
        if ancestor == root_pid:
            found.append(pid)
    return found


def check(state: Path, answers: list[dict]) -> dict:
    """The checks of the docstring, over the runner's state: a dict of counts and failures."""
    db = sqlite3.connect(f"file:{state / 'runner.sqlite'}?mode=ro", uri=True)
    jobs = {row[0]: row for row in db.execute("SELECT id, attempt, state, evaluation, tries, agent, task FROM jobs")}
    failures = []
    open_jobs = [j for j, row in jobs.items() if row[2] in ("pending", "running")]
    if open_jobs:
        failures.append(f"{len(open_jobs)} job(s) still pending or running after the queue drained")
    for answer in (a for a in answers if "id" in a):
        row = jobs.get(answer["id"])
        if row is None or row[2] != "done":
            failures.append(f"job {answer['id']} was answered but is {row[2] if row else 'absent'} in the state")
            continue
        stored = json.loads(row[3])
        score = stored.get("score") or {}
        if stored.get("status") != answer["status"] or score.get("points") != answer["points"]:
            failures.append(
                f"job {answer['id']}: the client was told {answer['status']}/{answer['points']}, "
                f"the state holds {stored.get('status')}/{score.get('points')}"
            )
    initial = 1000000
    refunds = {(a, t): n for a, t, n in db.execute("SELECT agent, task, count FROM refunds")}
    for attempt, agent, task, left in db.execute("SELECT id, agent, task, iterations_left FROM attempts"):
        own = sum(1 for row in jobs.values() if row[1] == attempt)
        spent, refunded = initial - left, refunds.get((agent, task), 0)
        # Each job is charged once when accepted; a job the runner failed gives its iteration back
        # (a refund) and, sent again, is charged again for its new run. So spent lies between own
        # less the refunds and own plus the refunds; outside it, something was charged twice.
        if not own - refunded <= spent <= own + refunded:
            failures.append(f"attempt {attempt}: {spent} iteration(s) spent for {own} job(s), {refunded} refund(s)")
    cache = sqlite3.connect(f"file:{state / 'scores.sqlite'}?mode=ro", uri=True)
    columns = [row[1] for row in cache.execute("PRAGMA table_info(evaluations)")]
    body = "record" if "record" in columns else columns[-1]
    fault_rows = [
        row[0]
        for row in cache.execute(f"SELECT {body} FROM evaluations")
        if any(word in str(row[0]) for word in KILL_WORDS)
    ]
    if fault_rows:
        failures.append(f"{len(fault_rows)} score-cache row(s) hold a verdict a kill produced: {fault_rows[0][:300]}")
    statuses: dict[str, int] = {}
    for row in jobs.values():
        status = json.loads(row[3]).get("status", row[2]) if row[3] else row[2]
        statuses[status] = statuses.get(status, 0) + 1
    return {
        "jobs": len(jobs),
        "statuses": statuses,
        "retried_jobs": sum(1 for row in jobs.values() if row[4]),
        "cache_rows": len(fault_rows)
        + cache.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0]
        - len(fault_rows),
        "failures": failures,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument(
        "--server-kill-s",
        type=float,
        nargs=2,
        default=(60.0, 150.0),
        metavar=("MIN", "MAX"),
        help="seconds between server kills, drawn uniformly",
    )
    parser.add_argument("--child-kill-s", type=float, nargs=2, default=(10.0, 40.0), metavar=("MIN", "MAX"))
    parser.add_argument("--folder", type=Path, help="keep the run here (default: a new temporary folder)")
    parser.add_argument("--write", type=Path, help="append the results as a section to this file")
    args = parser.parse_args()
    import tempfile

    root = args.folder or Path(tempfile.mkdtemp(prefix="arena-soak-"))
    repo, state = write_repo(root / "repo"), root / "state"
    tokens = root / "tokens"
    tokens.write_text("\n".join(f"soak{c}:soak{c}-token" for c in range(args.clients)) + "\n")
    port = free_port()
    server = Server(repo, state, tokens, port, root / "server.log")
    server.start()
    time.sleep(5)
    server.check_alive()
    began = time.time()
    stop_at = began + args.minutes * 60
    outs = [str(root / f"client{c}.jsonl") for c in range(args.clients)]
    spawn = multiprocessing.get_context("spawn")
    clients = [
        spawn.Process(target=client_loop, args=(f"127.0.0.1:{port}", c, stop_at, outs[c])) for c in range(args.clients)
    ]
    for process in clients:
        process.start()
    rng = random.Random()
    server_kills = child_kills = 0
    next_server = began + rng.uniform(*args.server_kill_s)
    next_child = began + rng.uniform(*args.child_kill_s)
    while time.time() < stop_at:
        time.sleep(0.5)
        server.check_alive()
        now = time.time()
        if now >= next_child:
            assert server.process is not None
            children = descendants_running(server.process.pid, "arena.harness.child")
            if children:
                try:
                    os.kill(rng.choice(children), signal.SIGKILL)
                    child_kills += 1
                except ProcessLookupError:
                    pass
            next_child = now + rng.uniform(*args.child_kill_s)
        if now >= next_server:
            server.kill()
            server_kills += 1
            time.sleep(rng.uniform(0.5, 3.0))
            server.start()
            next_server = now + rng.uniform(*args.server_kill_s)
    for process in clients:
        process.join(900)  # each finishes the call it is in
    server.stop()
    answers = []
    resent = 0
    for out in outs:
        for line in Path(out).read_text().splitlines() if Path(out).exists() else []:
            item = json.loads(line)
            if "resent" in item:
                resent += item["resent"]
            else:
                answers.append(item)
    result = check(state, answers)
    result.update(
        {
            "minutes": args.minutes,
            "clients": args.clients,
            "server_kills": server_kills,
            "child_kills": child_kills,
            "answered": sum(1 for a in answers if "id" in a),
            "refused": [a["error"] for a in answers if "error" in a][:5],
            "resent_calls": resent,
            "folder": str(root),
        }
    )
    print(json.dumps(result, indent=1))
    if args.write:
        with args.write.open("a", encoding="utf-8") as results:
            results.write(f"\n```\n{json.dumps(result, indent=1)}\n```\n")
    sys.exit(1 if result["failures"] else 0)


if __name__ == "__main__":
    main()
