"""The docker executor: the exact argv for each vendor and engine, the choice of the pinned image by
the host's GPU, the refusal of an unresolved image or a host without a GPU, and the job and result
protocol through a stand-in `docker` that runs the real child on this host (real containers:
container_test.py)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from arena.candidate.candidate import Candidate
from arena.environment.environment import Environment
from arena.environment.users import DEFAULT_RANGE, ChildUser
from arena.executors import docker as docker_module
from arena.executors.base import ExecutorError
from arena.executors.docker import DockerExecutor
from arena.executors.image import LOCK_PATH, LOCK_PATHS, ImageLock, read_lock, write_lock
from arena.executors.leftovers import container_name, launcher_of, this_process
from arena.harness.settings import HarnessSettings
from arena.harness.version import ARENA_ROOT
from arena.task.task import Task
from arena_testing.processes import ended_process

DIGEST = "sha256:" + "ab" * 32
LOCK = ImageLock(
    repository="rocm/pytorch",
    tag="rocm7.1.1_ubuntu24.04_py3.12_pytorch_release_2.10.0",
    digest=DIGEST,
    resolved=True,
    resolved_date="2025-01-01",
    resolved_with="skopeo",
)
CUDA_LOCK = ImageLock(
    repository="nvcr.io/nvidia/pytorch",
    tag="25.12-py3",
    digest="sha256:" + "cd" * 32,
    resolved=True,
    resolved_date="2025-01-01",
    resolved_with="crane",
)
CPU = HarnessSettings(backend="cpu", timeout_s=240, device=3, cases=("small",))
DOCKER = ("docker",)
LIMITS = ((resource.RLIMIT_NOFILE, 65536), (resource.RLIMIT_NPROC, 32768))  # never above this host's

# A stand-in for the docker client: records its argv, answers `image inspect` and `kill`, and for
# `run` plays the container on this host: container paths are mapped to the mounted host folders
# and a scratch folder, and the real child runs with descriptor 3 opened on the result mount.
FAKE_DOCKER = r"""
import json, os, subprocess, sys, tempfile, time
args = sys.argv[1:]
with open(os.environ["FAKE_DOCKER_LOG"], "a") as log:
    log.write(json.dumps(args) + "\n")
if args[0] == "ps":  # the containers it holds: FAKE_DOCKER_PS's names
    print(os.environ.get("FAKE_DOCKER_PS", ""))
if args[0] != "run":
    sys.exit(0)
if os.environ.get("FAKE_DOCKER_HANG"):
    time.sleep(60)
mounts, env, i = {}, {}, 1
while i < len(args):
    if args[i] == "-v":
        host, inside, _ = args[i + 1].split(":")
        mounts[inside] = host
    elif args[i] == "-e":
        name, _, value = args[i + 1].partition("=")
        env[name] = value
    i += 1
scratch = tempfile.mkdtemp()
def host(path):
    for inside, outside in sorted(mounts.items(), key=lambda m: -len(m[0])):
        if path == inside or path.startswith(inside + "/"):
            return outside + path[len(inside):]
    assert path.startswith("/tmp/"), path
    return scratch + path[len("/tmp"):]
job = json.loads(sys.stdin.buffer.read())
job["dirs"] = {name: host(path) for name, path in job["dirs"].items()}
for path in job["dirs"].values():
    os.makedirs(path, exist_ok=True)
env.update(PATH=os.environ["PATH"], PYTHONPATH=os.path.dirname(host("/arena/src/arena")))
for name in ("HOME", "TMPDIR", "TRITON_CACHE_DIR"):
    env[name] = host(env[name])
fd = os.open(host("/arena/out/result"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
os.dup2(fd, 3)
done = subprocess.run([sys.executable, "-m", "arena.harness.child"], input=json.dumps(job).encode(),
                      env=env, pass_fds=(3,), cwd=job["dirs"]["work"])
sys.exit(done.returncode)
"""


def flag_values(argv: list[str], flag: str) -> list[str]:
    return [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == flag]


def test_the_argv_names_every_isolation_flag_and_the_image_by_digest(tmp_path: Path) -> None:
    executor = DockerExecutor(LOCK, memory="48g", scratch="8g", engine=DOCKER)
    argv = executor.command(tmp_path, HarnessSettings(device=5), "arena-test")
    assert argv[:4] == ["docker", "run", "--rm", "-i"]
    assert flag_values(argv, "--name") == ["arena-test"]
    assert flag_values(argv, "--device") == ["/dev/kfd", "/dev/dri"]
    assert "video" in flag_values(argv, "--group-add")
    assert flag_values(argv, "--network") == ["none"]
    assert "--read-only" in argv
    assert flag_values(argv, "--tmpfs") == ["/tmp:rw,exec,nosuid,size=8g"]
    assert flag_values(argv, "--memory") == ["48g"] and flag_values(argv, "--memory-swap") == ["48g"]
    assert flag_values(argv, "--pull") == ["never"]
    assert flag_values(argv, "--cap-drop") == ["ALL"]
    assert flag_values(argv, "--security-opt") == ["no-new-privileges"]
    assert flag_values(argv, "--user") == [f"{os.getuid()}:{os.getgid()}"]
    hard = [(resource.getrlimit(kind)[1], cap) for kind, cap in LIMITS]
    files, processes = (cap if limit == resource.RLIM_INFINITY else min(cap, limit) for limit, cap in hard)
    assert flag_values(argv, "--ulimit") == ["core=0", f"nofile={files}:{files}", f"nproc={processes}:{processes}"]
    assert flag_values(argv, "--pids-limit") == ["4096"]
    assert sorted(flag_values(argv, "-v")) == sorted(
        [
            f"{tmp_path}/run/task:/arena/run/task:ro",
            f"{tmp_path}/run/baseline:/arena/run/baseline:ro",
            f"{tmp_path}/run/candidate:/arena/run/candidate:ro",
            f"{ARENA_ROOT}:/arena/src/arena:ro",
            f"{tmp_path}/out:/arena/out:rw",
        ]
    )
    env = dict(value.split("=", 1) for value in flag_values(argv, "-e"))
    assert env["HIP_VISIBLE_DEVICES"] == "5" and "CUDA_VISIBLE_DEVICES" not in env
    assert env["PYTHONPATH"] == "/arena/src"
    assert env["ARENA_IMAGE_DIGEST"] == DIGEST
    assert "TRITON_INTERPRET" not in env
    assert flag_values(argv, "--entrypoint") == ["/bin/sh"]
    image_at = argv.index(f"rocm/pytorch@{DIGEST}")
    assert argv[image_at + 1] == "-c"
    assert argv[image_at + 2].endswith("exec python3 -m arena.harness.child 3>/arena/out/result")
    assert len(argv) == image_at + 3  # nothing after the script
    assert not any(LOCK.tag in arg for arg in argv)  # never the tag


def test_a_container_runs_as_the_user_it_is_given(tmp_path: Path) -> None:
    executor = DockerExecutor(LOCK, engine=DOCKER)
    argv = executor.command(tmp_path, HarnessSettings(), "arena-test", ChildUser(2130706500, 2130706500))
    assert flag_values(argv, "--user") == ["2130706500:2130706500"]


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root runner leases its containers' users")
def test_a_root_runners_container_runs_as_a_leased_user_that_owns_its_out_folder(
    scale_repo: Path, scale_task: Task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docker, log = fake_docker(tmp_path, monkeypatch)
    seen = tmp_path / "seen"
    spy = tmp_path / "spy"  # what the engine is given: the user, and who owns the result's folder
    spy.write_text(
        f"#!{sys.executable}\nimport json, os, subprocess, sys\n"
        "a = sys.argv[1:]\n"
        "if a[0] == 'run':\n"
        "    out = [v.split(':')[0] for i, v in enumerate(a) if a[i - 1] == '-v' and v.endswith(':/arena/out:rw')][0]\n"
        f"    open({str(seen)!r}, 'w').write(json.dumps([a[a.index('--user') + 1], os.stat(out).st_uid]))\n"
        f"sys.exit(subprocess.run([{docker!r}, *a]).returncode)\n"
    )
    spy.chmod(0o755)
    result = DockerExecutor(LOCK, engine=(str(spy),)).run(scale_task, None, scale_repo, CPU)
    assert result.status == "PASSED", result.errors
    user, owner = json.loads(seen.read_text())
    uid = int(user.split(":")[0])
    first, last = DEFAULT_RANGE
    assert first <= uid <= last and owner == uid  # never root, and its folder is its own


def test_the_cpu_backend_turns_the_interpreter_on(tmp_path: Path) -> None:
    argv = DockerExecutor(LOCK, engine=DOCKER).command(tmp_path, HarnessSettings(backend="cpu"), "n")
    assert "TRITON_INTERPRET=1" in flag_values(argv, "-e")


def test_a_cuda_executor_passes_the_nvidia_gpus_for_each_engine(tmp_path: Path) -> None:
    settings = HarnessSettings(device=5)
    with_docker = DockerExecutor(CUDA_LOCK, vendor="cuda", engine=DOCKER).command(tmp_path, settings, "n")
    assert flag_values(with_docker, "--gpus") == ["all"] and "--device" not in with_docker
    assert "video" not in flag_values(with_docker, "--group-add")
    env = dict(value.split("=", 1) for value in flag_values(with_docker, "-e"))
    assert env["CUDA_VISIBLE_DEVICES"] == "5" and "HIP_VISIBLE_DEVICES" not in env
    assert f"nvcr.io/nvidia/pytorch@{CUDA_LOCK.digest}" in with_docker
    with_podman = DockerExecutor(CUDA_LOCK, vendor="cuda", engine=("podman",)).command(tmp_path, settings, "n")
    assert flag_values(with_podman, "--device") == ["nvidia.com/gpu=all"] and "--gpus" not in with_podman


def test_limits_never_exceed_this_hosts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hard = {resource.RLIMIT_NOFILE: 20000, resource.RLIMIT_NPROC: resource.RLIM_INFINITY}
    monkeypatch.setattr(resource, "getrlimit", lambda kind: (0, hard[kind]))
    argv = DockerExecutor(LOCK, engine=DOCKER).command(tmp_path, CPU, "n")
    assert flag_values(argv, "--ulimit") == ["core=0", "nofile=20000:20000", "nproc=32768:32768"]


def test_a_cpu_executor_passes_no_device(tmp_path: Path) -> None:
    argv = DockerExecutor(LOCK, vendor="cpu", engine=DOCKER).command(tmp_path, CPU, "n")
    assert not {"--device", "--gpus", "--group-add"} & set(argv)
    assert not [value for value in flag_values(argv, "-e") if "VISIBLE_DEVICES" in value]
    with pytest.raises(ExecutorError, match="vendor 'tpu'"):
        DockerExecutor(LOCK, vendor="tpu")


def test_the_engine_comes_from_arena_container_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_CONTAINER_ENGINE", "podman --runtime runc")
    executor = DockerExecutor(LOCK)
    assert executor.command(tmp_path, CPU, "n")[:4] == ["podman", "--runtime", "runc", "run"]
    assert executor.describe()["engine"] == "podman" and executor.isolation().startswith("podman ")
    monkeypatch.delenv("ARENA_CONTAINER_ENGINE")
    assert DockerExecutor(LOCK).engine == ("docker",)
    monkeypatch.setenv("ARENA_CONTAINER_ENGINE", " ")
    with pytest.raises(ExecutorError, match="ARENA_CONTAINER_ENGINE is empty"):
        DockerExecutor(LOCK)


def repo_with_locks(root: Path) -> Path:
    for vendor, lock in (("rocm", LOCK), ("cuda", CUDA_LOCK)):
        (root / LOCK_PATHS[vendor]).parent.mkdir(parents=True)
        write_lock(lock, root / LOCK_PATHS[vendor])
    return root


def test_the_host_gpu_picks_the_vendor_and_its_pinned_image(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = repo_with_locks(tmp_path)
    monkeypatch.setattr(docker_module, "host_vendor", lambda: "cuda")
    on_nvidia = DockerExecutor.from_repo(repo, engine=DOCKER)
    assert (on_nvidia.vendor, on_nvidia.image) == ("cuda", CUDA_LOCK)
    monkeypatch.setattr(docker_module, "host_vendor", lambda: "rocm")
    on_amd = DockerExecutor.from_repo(repo, engine=DOCKER)
    assert (on_amd.vendor, on_amd.image) == ("rocm", LOCK)
    assert DockerExecutor.from_repo(repo, vendor="cuda", engine=DOCKER).image == CUDA_LOCK  # asked for
    monkeypatch.setattr(docker_module, "host_vendor", lambda: "cpu")
    with pytest.raises(ExecutorError, match="no GPU here.*does not fall back to the CPU"):
        DockerExecutor.from_repo(repo, engine=DOCKER)


@pytest.mark.parametrize(
    "lock",
    [
        ImageLock(repository="rocm/pytorch", tag="t"),  # as committed: resolved false, no digest
        ImageLock(repository="rocm/pytorch", tag="t", digest="", resolved=True),
        ImageLock(repository="rocm/pytorch", tag="t", digest="sha256:short", resolved=True),
    ],
)
def test_an_unresolved_image_is_refused_before_anything_runs(
    lock: ImageLock, scale_repo: Path, scale_task: Task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (scale_repo / LOCK_PATH).parent.mkdir(parents=True)
    write_lock(lock, scale_repo / LOCK_PATH)
    with pytest.raises(ExecutorError, match="not resolved to a digest.*arena image resolve"):
        DockerExecutor.from_repo(scale_repo, vendor="rocm")
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: pytest.fail("docker was started"))
    with pytest.raises(ExecutorError, match="not resolved"):
        DockerExecutor(lock, engine=DOCKER).run(scale_task, None, scale_repo, CPU)


@pytest.mark.parametrize(
    ("vendor", "repository", "tag"),
    [
        ("rocm", "rocm/pytorch", "rocm7.1.1_ubuntu24.04_py3.12_pytorch_release_2.10.0"),
        ("cuda", "nvcr.io/nvidia/pytorch", "25.12-py3"),
    ],
)
def test_the_committed_locks_pin_both_images_and_are_refused_until_resolved(
    vendor: str, repository: str, tag: str
) -> None:
    repo = Path(__file__).resolve().parents[4]
    raw = json.loads((repo / LOCK_PATHS[vendor]).read_text())
    assert (raw["repository"], raw["tag"]) == (repository, tag)
    assert "Python 3.12" in raw["contents"] and "2.10.0" in raw["contents"]
    if not raw["resolved"]:
        assert raw["digest"] == ""  # never a made-up digest
        with pytest.raises(ExecutorError, match=f"not resolved to a digest in {LOCK_PATHS[vendor]}"):
            DockerExecutor.from_repo(repo, vendor=vendor)
    else:
        assert DockerExecutor.from_repo(repo, vendor=vendor, engine=DOCKER).image == read_lock(
            repo / LOCK_PATHS[vendor]
        )


def fake_docker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path]:
    script = tmp_path / "fake-docker"
    script.write_text(f"#!{sys.executable}\n{FAKE_DOCKER}")
    script.chmod(0o755)
    log = tmp_path / "docker.log"
    monkeypatch.setenv("FAKE_DOCKER_LOG", str(log))
    return str(script), log


def calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_a_run_feeds_the_job_on_stdin_and_verifies_the_signed_result(
    scale_repo: Path,
    scale_task: Task,
    wrong_candidate: Candidate,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    docker, log = fake_docker(tmp_path, monkeypatch)
    executor = DockerExecutor(LOCK, engine=(docker,))
    good = executor.run(scale_task, None, scale_repo, CPU)
    assert good.status == "PASSED" and good.compiled and good.correct, good.errors
    assert {"small", "small~hidden0"} <= {case.name for case in good.cases}
    bad = executor.run(scale_task, wrong_candidate, scale_repo, CPU)
    assert bad.status == "INCORRECT" and bad.compiled and not bad.correct
    history = calls(log)
    assert history[0][:2] == ["image", "inspect"]  # pulled (here: found) once, before any run
    assert [c[0] for c in history] == ["image", "ps", "run", "run"]  # leftovers looked for once
    assert "HIP_VISIBLE_DEVICES=3" in flag_values(history[2], "-e")


def test_a_forged_result_is_not_believed(
    scale_repo: Path, scale_task: Task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A container that writes its own frame (without the run's key) is caught."""
    docker, _ = fake_docker(tmp_path, monkeypatch)
    forger = tmp_path / "forger"
    forger.write_text(
        f"#!{sys.executable}\nimport os, sys, subprocess\n"
        "a = sys.argv[1:]\n"
        f"r = subprocess.run([{docker!r}, *a]) if a[0] != 'run' else None\n"
        "if a[0] == 'run':\n"
        "    mounts = [v for i, v in enumerate(a) if a[i - 1] == '-v']\n"
        "    out = [v.split(':')[0] for v in mounts if v.endswith(':/arena/out:rw')][0]\n"
        "    open(out + '/result', 'w').write('0' * 64 + '\\n{\"status\": \"PASSED\"}')\n"
    )
    forger.chmod(0o755)
    result = DockerExecutor(LOCK, engine=(str(forger),)).run(scale_task, None, scale_repo, CPU)
    assert result.status == "CHEAT_DETECTED" and "signature" in " ".join(result.errors)


def test_a_container_past_its_deadline_is_killed_and_removed_by_name(
    scale_repo: Path, scale_task: Task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docker, log = fake_docker(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_DOCKER_HANG", "1")
    executor = DockerExecutor(LOCK, engine=(docker,), start_grace_s=0.0)
    result = executor.run(scale_task, None, scale_repo, HarnessSettings(backend="cpu", timeout_s=1.5))
    assert result.status == "TIMEOUT"
    run, kill, remove = (c for c in calls(log) if c[0] in ("run", "kill", "rm"))
    name = flag_values(run, "--name")[0]
    assert kill == ["kill", name] and remove == ["rm", "--force", name]  # podman's killed client leaves it


def test_containers_of_dead_runners_are_removed_before_the_first_run(
    scale_repo: Path, scale_task: Task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = this_process()
    assert here is not None
    ended, started = ended_process()
    dead = container_name(replace(here, pid=ended, start=started))
    rebooted = container_name(replace(here, boot="0" * 12 if here.boot != "0" * 12 else "1" * 12))
    alive, elsewhere = container_name(here), container_name(replace(here, namespace=here.namespace + 1))
    docker, log = fake_docker(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_DOCKER_PS", "\n".join([dead, rebooted, alive, elsewhere, "arena-0123456789abcdef"]))
    executor = DockerExecutor(LOCK, engine=(docker,))
    assert executor.run(scale_task, None, scale_repo, CPU).status == "PASSED"
    executor.run(scale_task, None, scale_repo, CPU)
    history = calls(log)
    assert [c for c in history if c[0] == "rm"] == [["rm", "--force", dead], ["rm", "--force", rebooted]]
    assert [c[0] for c in history].count("ps") == 1
    run = next(c for c in history if c[0] == "run")
    assert launcher_of(flag_values(run, "--name")[0]) == here  # its own container names this runner


def test_a_missing_image_is_pulled_by_digest_and_a_failed_pull_is_an_executor_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[list[str]] = []

    def fake_run(argv: list[str], **_: object) -> subprocess.CompletedProcess[bytes]:
        seen.append(argv)
        return subprocess.CompletedProcess(argv, 1)

    monkeypatch.setattr(subprocess, "run", fake_run)
    with pytest.raises(ExecutorError, match="cannot pull"):
        DockerExecutor(LOCK, engine=DOCKER).ensure_image()
    assert seen[1] == ["docker", "pull", f"rocm/pytorch@{DIGEST}"]


def test_provenance_names_the_image_digest_and_changes_the_fingerprint() -> None:
    executor = DockerExecutor(LOCK, engine=DOCKER)
    assert executor.describe()["image_digest"] == DIGEST
    assert (executor.describe()["vendor"], executor.describe()["engine"]) == ("rocm", "docker")
    host = Environment(fingerprint="h", backend="rocm", gpu_name="MI300X", versions={"torch": "9"})
    inside = executor.environment(host)
    assert inside.image_digest == DIGEST and inside.gpu_name == "MI300X"
    assert inside.versions == {"executor": "docker"}  # the host's packages do not run in the image
    assert inside.fingerprint not in ("", "h")
