"""A pool worker lays out an action's input root as it is, and never through a link: the pool's
server has no authentication, so whoever reaches it can send any tree, and the worker writes it
as its own user, root on a GPU machine. Before, a tree naming a link and a file (or a folder) the
same wrote that file where the link pointed: anywhere on the worker's machine."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable

import pytest

from arena.harness.sandbox import give
from arena.pool.worker import make_parents, materialize
from arena.reapi.cas import digest_of, reapi_protos, serialize


class Blobs:
    """A CAS of the blobs put here (what materialize reads through download_many)."""

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}

    def put(self, data: bytes) -> Any:
        digest = digest_of(data)
        self.blobs[digest.hash] = data
        return digest

    def folder(
        self,
        files: dict[str, bytes] | None = None,
        folders: dict[str, Any] | None = None,
        links: dict[str, str] | None = None,
    ) -> Any:
        pb = reapi_protos()[0]
        files, folders, links = files or {}, folders or {}, links or {}
        directory = pb.Directory(
            files=[pb.FileNode(name=name, digest=self.put(data)) for name, data in sorted(files.items())],
            directories=[pb.DirectoryNode(name=name, digest=digest) for name, digest in sorted(folders.items())],
            symlinks=[pb.SymlinkNode(name=name, target=target) for name, target in sorted(links.items())],
        )
        return self.put(serialize(directory))

    def download_many(self, digests: Iterable[Any]) -> dict[str, bytes]:
        return {d.hash: self.blobs[d.hash] for d in digests}


def test_an_honest_tree_is_laid_out_with_its_links_and_modes(tmp_path: Path) -> None:
    cas = Blobs()
    tool = cas.folder(files={"run.sh": b"#!/bin/sh\n"})
    root = cas.folder(files={"job.json": b"{}"}, folders={"bin": tool}, links={"latest": "bin/run.sh"})
    materialize(cas, root, tmp_path / "root")  # type: ignore[arg-type]
    assert (tmp_path / "root/job.json").read_bytes() == b"{}"
    assert os.readlink(tmp_path / "root/latest") == "bin/run.sh"
    assert (tmp_path / "root/bin/run.sh").stat().st_mode & 0o777 == 0o644


def test_a_file_named_as_a_link_is_refused_and_nothing_is_written_where_it_points(tmp_path: Path) -> None:
    outside = tmp_path / "host-file"
    outside.write_text("the host's own")
    cas = Blobs()
    root = cas.folder(files={"x": b"written through the link"}, links={"x": str(outside)})
    with pytest.raises(ValueError, match="names an entry twice"):
        materialize(cas, root, tmp_path / "root")  # type: ignore[arg-type]
    assert outside.read_text() == "the host's own"


def test_a_folder_named_as_a_link_is_refused_and_nothing_lands_where_it_points(tmp_path: Path) -> None:
    outside = tmp_path / "host-folder"
    outside.mkdir()
    cas = Blobs()
    inner = cas.folder(files={"planted": b"x"})
    root = cas.folder(folders={"x": inner}, links={"x": str(outside)})
    with pytest.raises(ValueError, match="names an entry twice"):
        materialize(cas, root, tmp_path / "root")  # type: ignore[arg-type]
    assert not any(outside.iterdir())


@pytest.mark.skipif(os.geteuid() != 0, reason="only root hands folders to another user")
def test_handing_over_a_link_hands_over_the_link_alone(tmp_path: Path) -> None:
    from arena.environment.users import ChildUser

    host = tmp_path / "host"
    host.mkdir()
    (host / "file").write_text("root's")
    link = tmp_path / "scratch"
    link.symlink_to(host)
    give(link, ChildUser(2130706999, 2130706999))
    assert os.lstat(link).st_uid == 2130706999
    assert host.stat().st_uid == 0 and (host / "file").stat().st_uid == 0  # never walked through


def test_an_outputs_folders_are_never_made_through_a_link(tmp_path: Path) -> None:
    outside = tmp_path / "host-folder"
    outside.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    (root / "x").symlink_to(outside)
    with pytest.raises(ValueError, match="below a link"):
        make_parents(root, "x/made/result.frame")
    assert not any(outside.iterdir())
    make_parents(root, "out/deeper/result.frame")
    assert (root / "out/deeper").is_dir()
