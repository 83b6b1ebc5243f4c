from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.candidate.allowlist import MAX_FILE_BYTES
from arena.candidate.candidate import (
    Candidate,
    accept_candidate,
    baseline_candidate,
    candidate_from_json,
    candidate_to_json,
    digest_files,
    exemplar_candidates,
    load_candidate,
    write_candidate,
    wrong_candidate,
)
from arena.errors import InvalidCandidate
from arena_testing.candidate_task import make_task


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    return root


def test_load_candidate_reads_allowed_files(tmp_path: Path) -> None:
    folder = write(tmp_path / "c", {"kernel.py": "k", "lib/util.py": "u", "lib/deep/x.py": "x"})
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "kernel.cpython-311.pyc").write_bytes(b"\0")
    candidate = load_candidate(make_task(), folder)
    assert candidate == Candidate(
        "tasks/triton2triton/t:t", {"kernel.py": b"k", "lib/deep/x.py": b"x", "lib/util.py": b"u"}
    )


@pytest.mark.parametrize("name", ["reference.py", "kernel.pyx", "libx/a.py", "BUILD"])
def test_outside_allow_list(tmp_path: Path, name: str) -> None:
    folder = write(tmp_path / "c", {"kernel.py": "k", name: "evil"})
    with pytest.raises(InvalidCandidate, match="outside the editable files"):
        load_candidate(make_task(), folder)


def test_symlinks_rejected(tmp_path: Path) -> None:
    secret = write(tmp_path, {"secret.txt": "s"}) / "secret.txt"
    folder = write(tmp_path / "c", {"lib/util.py": "u"})
    os.symlink(secret, folder / "kernel.py")
    with pytest.raises(InvalidCandidate, match="'kernel.py' is a symlink"):
        load_candidate(make_task(), folder)
    os.remove(folder / "kernel.py")
    os.symlink(tmp_path, folder / "lib" / "link")
    with pytest.raises(InvalidCandidate, match="'lib/link' is a symlink"):
        load_candidate(make_task(), folder)


def test_size_limits(tmp_path: Path) -> None:
    folder = write(tmp_path / "c", {"kernel.py": b"x" * (MAX_FILE_BYTES + 1)})
    with pytest.raises(InvalidCandidate, match="limit is 1048576"):
        load_candidate(make_task(), folder)
    files: dict[str, str | bytes] = {f"lib/f{i}.py": b"x" * MAX_FILE_BYTES for i in range(4)}
    folder = write(tmp_path / "d", {**files, "kernel.py": "k"})
    with pytest.raises(InvalidCandidate, match="limit is 4194304"):
        load_candidate(make_task(), folder)
    load_candidate(make_task(), write(tmp_path / "e", files))  # exactly 4 MiB passes


def test_empty_and_missing(tmp_path: Path) -> None:
    (tmp_path / "empty" / "lib").mkdir(parents=True)
    with pytest.raises(InvalidCandidate, match="no files"):
        load_candidate(make_task(), tmp_path / "empty")
    with pytest.raises(InvalidCandidate, match="does not exist"):
        load_candidate(make_task(), tmp_path / "nope")


def test_baseline_exemplars_wrong(tmp_path: Path) -> None:
    task = make_task()
    write(
        tmp_path / task.task_dir,
        {
            "kernel.py": "k0",
            "lib/util.py": "u0",
            "reference.py": "r",
            "exemplars/fast/kernel.py": "k1",
            "exemplars/faster/lib/util.py": "u2",
            "wrong/kernel.py": "bad",
        },
    )
    assert baseline_candidate(task, tmp_path).files == {"kernel.py": b"k0", "lib/util.py": b"u0"}
    exemplars = exemplar_candidates(task, tmp_path)
    assert {k: v.files for k, v in exemplars.items()} == {
        "exemplars/fast": {"kernel.py": b"k1"},
        "exemplars/faster": {"lib/util.py": b"u2"},
    }
    wrong = wrong_candidate(task, tmp_path)
    assert wrong is not None and wrong.files == {"kernel.py": b"bad"}
    assert wrong_candidate(make_task(wrong=""), tmp_path) is None


def test_write_then_load_round_trip(tmp_path: Path) -> None:
    candidate = Candidate("tasks/triton2triton/t:t", {"kernel.py": b"k", "lib/a/b.py": b"\x00\xff"})
    write_candidate(candidate, tmp_path / "out")
    assert load_candidate(make_task(), tmp_path / "out") == candidate
    with pytest.raises(InvalidCandidate):
        write_candidate(Candidate("t", {"../escape.py": b""}), tmp_path / "out2")
    assert not (tmp_path / "escape.py").exists()


def test_accept_candidate_checks_file_maps_once_where_they_enter() -> None:
    task = make_task()
    accepted = accept_candidate(task, {"lib/b.py": b"b", "kernel.py": b"k"})
    assert accepted.task == task.address and list(accepted.files) == ["kernel.py", "lib/b.py"]
    refused: list[dict[str, bytes]] = [
        {"reference.py": b"x"},
        {"../kernel.py": b"x"},
        {},
        {"kernel.py": b"x" * (MAX_FILE_BYTES + 1)},
    ]
    for files in refused:
        with pytest.raises(InvalidCandidate):
            accept_candidate(task, files)


def test_a_candidate_carries_its_digest() -> None:
    a = Candidate("t", {"kernel.py": b"abc", "lib/x.py": b"x"})
    assert a.digest == digest_files({"lib/x.py": b"x", "kernel.py": b"abc"}) and len(a.digest) == 64
    assert Candidate("u", dict(a.files)).digest == a.digest  # the task is not part of it
    assert Candidate("t", {"kernel.py": b"abd", "lib/x.py": b"x"}).digest != a.digest


def test_candidate_json_round_trip() -> None:
    candidate = Candidate("t", {"kernel.py": b"\x00\xff binary", "lib/x.py": b"x"})
    assert candidate_from_json(candidate_to_json(candidate)) == candidate
