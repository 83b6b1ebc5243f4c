"""The record of full validations: the folder hash (the plugin's too) and the record file."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

from arena.validation.record import MANIFEST, folder_hash, is_recorded, read_record, write_record

# The same folder and hash as tests/python/pants_plugins/arena_pants/tiers_test.py: the plugin
# computes this hash from Pants' view of the folder, and the two must agree.
FOLDER = {
    "BUILD": b'kernel_task(name="t")\n',
    "kernel.py": b"def f():\n    return 1\n",
    "sub/a.txt": b"a",
}
FOLDER_HASH = "0d26cf4d433f4b77db20df4c41473b6434219885eec9de5533d1805743b4bedc"


def _folder(root: Path, files: dict[str, bytes] = FOLDER) -> Path:
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def test_the_hash_covers_every_file_but_byte_code(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "t")
    assert folder_hash(folder) == FOLDER_HASH
    _folder(folder, {"__pycache__/kernel.cpython-311.pyc": b"x", "stray.pyc": b"y", ".hidden/z": b"z"})
    assert folder_hash(folder) == FOLDER_HASH  # what Pants does not see either
    (folder / "sub" / "a.txt").write_bytes(b"b")
    assert folder_hash(folder) != FOLDER_HASH
    (folder / "sub" / "a.txt").write_bytes(b"a")
    (folder / "sub" / "a.txt").rename(folder / "sub" / "b.txt")  # a renamed file changes it too
    assert folder_hash(folder) != FOLDER_HASH


def test_recording_keeps_other_entries_and_drops_gone_folders(tmp_path: Path) -> None:
    for name in ("one", "two", "gone"):
        _folder(tmp_path / "tasks" / "x" / name)
    write_record(tmp_path, ["tasks/x/one", "tasks/x/gone"], today=datetime.date(2026, 12, 3))
    assert read_record(tmp_path) == {"tasks/x/one": FOLDER_HASH, "tasks/x/gone": FOLDER_HASH}
    for path in (tmp_path / "tasks" / "x" / "gone").rglob("*"):
        if path.is_file():
            path.unlink()
    (tmp_path / "tasks" / "x" / "gone" / "sub").rmdir()
    (tmp_path / "tasks" / "x" / "gone").rmdir()
    write_record(tmp_path, ["tasks/x/two"], today=datetime.date(2026, 12, 4))
    raw = json.loads((tmp_path / MANIFEST).read_text())
    assert raw["tasks"] == {
        "tasks/x/one": {"hash": FOLDER_HASH, "validated": "2026-12-03"},
        "tasks/x/two": {"hash": FOLDER_HASH, "validated": "2026-12-04"},
    }
    record = read_record(tmp_path)
    assert is_recorded(tmp_path, "tasks/x/one", record)
    (tmp_path / "tasks" / "x" / "one" / "kernel.py").write_text("changed")
    assert not is_recorded(tmp_path, "tasks/x/one", record)
    (tmp_path / "tasks" / "x" / "new").mkdir()
    assert not is_recorded(tmp_path, "tasks/x/new", record)  # never recorded


def test_no_record_is_an_empty_one(tmp_path: Path) -> None:
    assert read_record(tmp_path) == {}
