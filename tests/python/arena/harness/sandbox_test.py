"""The sandbox's command line and the folders it shows (no child is started here; the planted
tests in cheats/ start them: cheat_escape_sandbox_test.py, cheat_read_the_checkout_test.py,
cheat_privileges_test.py)."""

import os
from pathlib import Path

import pytest

from arena.environment.users import ChildUser
from arena.errors import UnusableEnvironment
from arena.harness import sandbox
from arena.harness.job import make_folders


def _site(root: Path) -> Path:
    folder = root / "lib" / "site-packages"
    (folder / "torch").mkdir(parents=True)
    return folder


@pytest.mark.parametrize(
    "plant",
    [
        lambda root: (root / "pants.toml").write_text(""),
        lambda root: (root / ".arena" / "runner").mkdir(parents=True),
        lambda root: (root / "scores.sqlite").write_bytes(b""),
        lambda root: (root / "scores.key").write_bytes(b"k"),
        lambda root: (root / "runner.sqlite").write_bytes(b""),
        lambda root: ((root / "runner").mkdir(), (root / "runner" / "runner.sqlite").write_bytes(b"")),
        lambda root: (
            (root / "tasks" / "t" / "add").mkdir(parents=True),
            (root / "tasks" / "t" / "add" / "BUILD").write_text(""),
        ),
    ],
    ids=["checkout", "dot-arena", "score-cache", "cache-key", "runner-database", "state-folder", "task-tree"],
)
def test_a_folder_holding_a_checkout_or_state_is_refused(tmp_path: Path, plant) -> None:
    folder = _site(tmp_path)
    assert sandbox.exposed_state(folder) == ""
    sandbox.sandboxed(["true"], tmp_path / "job", read_only=(folder,))  # shown: nothing there
    plant(folder)
    assert sandbox.exposed_state(folder) != ""
    with pytest.raises(UnusableEnvironment, match=str(folder)):
        sandbox.sandboxed(["true"], tmp_path / "job", read_only=(folder,))


def test_a_tasks_folder_without_declarations_is_no_checkout(tmp_path: Path) -> None:
    (tmp_path / "tasks" / "celery").mkdir(parents=True)  # a package that happens to be named so
    (tmp_path / "tasks" / "__init__.py").write_text("")
    assert sandbox.exposed_state(tmp_path) == ""


def test_the_repository_anywhere_below_a_folder_shown_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "deep" / "down" / "repo"
    repo.mkdir(parents=True)
    sandbox.refuse_exposed([str(tmp_path / "other")], hidden=[repo])
    with pytest.raises(UnusableEnvironment, match="repo"):
        sandbox.refuse_exposed([str(tmp_path)], hidden=[repo])
    with pytest.raises(UnusableEnvironment):
        sandbox.sandboxed(["true"], tmp_path / "job", read_only=(tmp_path / "deep",), hidden=(repo,))


def test_only_the_folders_asked_for_and_the_system_are_shown(tmp_path: Path, monkeypatch) -> None:
    site = _site(tmp_path)
    monkeypatch.chdir(tmp_path)  # the working folder is never shown for being one
    argv = sandbox.sandboxed(["python3", "-m", "x"], tmp_path / "job", read_only=(site,))
    shown = [argv[i + 2] for i, op in enumerate(argv) if op == "--ro-bind"]
    assert str(site) in shown and str(tmp_path) not in shown
    assert set(shown) - {str(site), "/sys", *(str(tmp_path / "job" / n) for n in sandbox.TRUSTED_FOLDERS)} <= {
        os.path.realpath(f) for f in sandbox.SYSTEM
    } | set(sandbox.SYSTEM)
    # Every parent bubblewrap makes for a folder shown can be passed through by the child's user.
    made = [argv[i + 1] for i, op in enumerate(argv) if op == "--dir"]
    assert str(site.parent) in made and str(tmp_path) in made
    assert all(argv[i - 2 : i] == ["--perms", "0755"] for i, op in enumerate(argv) if op == "--dir")


def test_a_root_runner_starts_its_child_as_an_unprivileged_user(tmp_path: Path) -> None:
    user = ChildUser(65534, 65534)
    argv = sandbox.sandboxed(["python3", "-m", "x"], tmp_path / "job", user=user)
    assert "--unshare-user" not in argv and "--unshare-pid" in argv and "--unshare-net" in argv
    tail = argv[argv.index("setpriv") :]
    assert tail[1:3] == ["--reuid=65534", "--regid=65534"]
    assert "--inh-caps=-all" in tail and "--bounding-set=-all" in tail
    assert tail[-4:] == ["--", "python3", "-m", "x"]
    unprivileged = sandbox.sandboxed(["python3"], tmp_path / "job")
    assert "setpriv" not in unprivileged and "--unshare-user" in unprivileged


@pytest.mark.skipif(os.geteuid() != 0, reason="only root hands folders to another user")
def test_the_job_folder_is_handed_to_the_childs_user(tmp_path: Path) -> None:
    work = tmp_path / "job"
    make_folders(work)
    make_folders(work, tuple(sandbox.SCRATCH_MOUNTS))  # its /tmp and /dev/shm, as launch.Child makes them
    (work / "candidate" / "kernel.py").write_text("")
    (work / "task" / "reference.py").write_text("")
    os.chmod(work / "task" / "reference.py", 0o600)
    sandbox.hand_over(work, ChildUser(65534, 65533))
    assert (work.stat().st_uid, work.stat().st_gid, work.stat().st_mode & 0o777) == (65534, 65533, 0o700)
    for name in sandbox.WRITABLE_FOLDERS:
        assert (work / name).stat().st_uid == 65534
    assert (work / "candidate" / "kernel.py").stat().st_uid == 65534
    assert (work / "task").stat().st_uid == 0 and (work / "task" / "reference.py").stat().st_uid == 0
    assert (work / "task" / "reference.py").stat().st_mode & 0o004  # readable, not writable, by the child
    sandbox.hand_over(work, None)  # a child that runs as the runner's user: nothing to hand over
