"""A path that is both a file and a folder is refused where a candidate enters (InvalidCandidate)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.candidate.allowlist import check_file_tree
from arena.candidate.candidate import accept_candidate, load_candidate, write_candidate
from arena.errors import InvalidCandidate
from arena_testing.candidate_task import make_task


def test_a_path_below_another_file_of_the_map_is_refused() -> None:
    with pytest.raises(
        InvalidCandidate, match=r"'kernel.py/evil.py' lies below 'kernel.py', which is a file of the candidate"
    ):
        accept_candidate(make_task(), {"kernel.py": b"k", "kernel.py/evil.py": b"e"})


def test_a_path_several_folders_below_another_file_of_the_map_is_refused() -> None:
    with pytest.raises(InvalidCandidate, match=r"'lib/new.py/a/b.py' lies below 'lib/new.py'"):
        accept_candidate(make_task(), {"lib/new.py": b"n", "lib/new.py/a/b.py": b"e"})


def test_a_path_below_a_file_of_the_task_is_refused_even_alone() -> None:
    # The allow-list lets "kernel.py/..." through (kernel.py is editable), but the task's own
    # kernel.py is laid out in the candidate's folder, so this could never be written.
    with pytest.raises(InvalidCandidate, match=r"lies below 'kernel.py', which is a file of the task"):
        accept_candidate(make_task(), {"kernel.py/evil.py": b"e"})


def test_a_file_where_the_task_has_a_folder_is_refused() -> None:
    with pytest.raises(InvalidCandidate, match=r"'lib' is a folder of the task .* 'lib/util.py'"):
        accept_candidate(make_task(), {"lib": b"not a folder"})


def test_siblings_nested_folders_and_overrides_of_task_files_are_accepted() -> None:
    files = {"kernel.py": b"k", "lib/util.py": b"u", "lib/sub/deep.py": b"d", "lib/other.py": b"o"}
    accepted = accept_candidate(make_task(), files)
    assert sorted(accepted.files) == sorted(files)


def test_an_accepted_map_can_always_be_written_over_the_task_files(tmp_path: Path) -> None:
    task = make_task()
    for name in task.all_files():  # what the harness lays out before the candidate
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("baseline")
    write_candidate(accept_candidate(task, {"kernel.py": b"k", "lib/sub/deep.py": b"d"}), tmp_path)
    assert (tmp_path / "lib" / "sub" / "deep.py").read_bytes() == b"d"


def test_a_candidate_folder_with_a_folder_where_the_task_has_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "kernel.py").mkdir()
    (tmp_path / "kernel.py" / "evil.py").write_text("x = 1\n")
    with pytest.raises(InvalidCandidate, match="lies below 'kernel.py'"):
        load_candidate(make_task(), tmp_path)


def test_the_check_takes_the_names_alone() -> None:
    check_file_tree(make_task(), ["kernel.py", "lib/a/b.py"])
    with pytest.raises(InvalidCandidate):
        check_file_tree(make_task(), ["lib/a", "lib/a/b.py"])


@pytest.mark.parametrize(
    "name",
    [
        "lib/__pycache__/util.cpython-311.pyc",  # an unchecked-hash .pyc is imported whatever util.py says
        "lib/util.pyc",
        "lib/fast.cpython-311-x86_64-linux-gnu.so",  # an extension module: native code no check reads
        "lib/__pycache__/notes.txt",
    ],
)
def test_compiled_code_in_an_editable_folder_is_refused(name: str) -> None:
    """`lib` is an editable folder: any name below it passed the allow-list, byte code too."""
    with pytest.raises(InvalidCandidate, match="compiled code or a byte-code cache; a candidate is source"):
        accept_candidate(make_task(), {"kernel.py": b"k", name: b"\x00"})
