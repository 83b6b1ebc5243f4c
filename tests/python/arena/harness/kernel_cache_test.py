"""The trusted kernel layer: filled only from no-op runs, read below each run's own cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.harness.kernel_cache import TRUSTED_VARIABLE, promote


def _compiled(cache: Path, key: str) -> Path:
    """A cache entry as Triton writes one: a kernel's files and a group naming them by path."""
    folder = cache / key
    folder.mkdir(parents=True)
    (folder / "k.cubin").write_bytes(b"\x7fELF binary")
    (folder / "k.json").write_text('{"name": "k"}')
    (folder / "lock").write_text("")
    group = {"child_paths": {name: str(folder / name) for name in ("k.cubin", "k.json")}}
    (folder / "__grp__k.json").write_text(json.dumps(group))
    return folder


def test_promote_adds_whole_entries_once(tmp_path: Path) -> None:
    run, trusted = tmp_path / "run-triton", tmp_path / "trusted"
    _compiled(run, "KEY1")
    assert promote(run, trusted) == 1
    assert sorted(p.name for p in (trusted / "KEY1").iterdir()) == ["__grp__k.json", "k.cubin", "k.json"]
    (trusted / "KEY1" / "k.cubin").write_bytes(b"first")
    assert promote(run, trusted) == 0  # kept, not overwritten
    assert (trusted / "KEY1" / "k.cubin").read_bytes() == b"first"
    assert promote(tmp_path / "absent", trusted) == 0


def test_a_run_reads_its_own_cache_then_the_trusted_layer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.harness.triton_cache import LayeredCache

    trusted = tmp_path / "trusted"
    promote(_compiled(tmp_path / "noop-run", "KEY1").parent, trusted)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "this-run"))
    monkeypatch.setenv(TRUSTED_VARIABLE, str(trusted))
    cache = LayeredCache("KEY1")
    assert cache.get_file("k.cubin") == str(trusted / "KEY1" / "k.cubin")
    # The group written in the no-op run's folder is found in the layer.
    assert cache.get_group("k.json") == {
        "k.cubin": str(trusted / "KEY1" / "k.cubin"),
        "k.json": str(trusted / "KEY1" / "k.json"),
    }
    written = cache.put(b"mine", "k.cubin")  # writes go to the run's own cache
    assert written.startswith(str(tmp_path / "this-run")) and cache.get_file("k.cubin") == written
    assert (trusted / "KEY1" / "k.cubin").read_bytes() == b"\x7fELF binary"
    assert LayeredCache("OTHER").get_file("k.cubin") is None


def test_without_a_layer_it_is_triton_s_own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.harness.triton_cache import LayeredCache

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "this-run"))
    monkeypatch.delenv(TRUSTED_VARIABLE, raising=False)
    cache = LayeredCache("KEY1")
    assert cache.get_file("k.cubin") is None and cache.get_group("k.json") is None
