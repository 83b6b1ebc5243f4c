"""The image locks: resolving a tag to a digest with docker buildx, skopeo or crane, and `arena image`."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest

from arena.cli import main as cli
from arena.executors import image
from arena.executors.base import ExecutorError
from arena.executors.image import LOCK_PATH, LOCK_PATHS, ImageLock, lock_path, read_lock, resolve_lock, write_lock

TAG = "rocm7.1.1_ubuntu24.04_py3.12_pytorch_release_2.10.0"
UNRESOLVED = ImageLock(repository="rocm/pytorch", tag=TAG)
DIGEST = "sha256:" + "0123456789abcdef" * 4
IMAGETOOLS_OUT = (
    f"Name:      docker.io/rocm/pytorch:{TAG}\n"
    "MediaType: application/vnd.oci.image.index.v1+json\n"
    f"Digest:    {DIGEST}\n"
)
TODAY = datetime.date(2025, 6, 1)
BUILDX = ("docker-buildx", ["docker", "buildx", "imagetools", "inspect"])
SKOPEO = ("skopeo", ["skopeo", "inspect"])
CRANE = ("crane", ["crane", "digest"])
CUDA_UNRESOLVED = ImageLock(repository="nvcr.io/nvidia/pytorch", tag="25.12-py3")
CUDA_DIGEST = "sha256:" + "fedcba9876543210" * 4


def test_docker_buildx_output_resolves_the_tag() -> None:
    seen: list[list[str]] = []

    def run(argv: list[str]) -> tuple[int, str, str]:
        seen.append(argv)
        return 0, IMAGETOOLS_OUT, ""

    lock = resolve_lock(UNRESOLVED, [BUILDX], run, TODAY)
    assert seen == [["docker", "buildx", "imagetools", "inspect", f"rocm/pytorch:{TAG}"]]
    assert (lock.digest, lock.resolved, lock.resolved_date, lock.resolved_with) == (
        DIGEST,
        True,
        "2025-06-01",
        "docker-buildx",
    )
    assert lock.reference == f"rocm/pytorch@{DIGEST}"


def test_skopeo_is_the_fallback_when_buildx_fails() -> None:
    def run(argv: list[str]) -> tuple[int, str, str]:
        if argv[0] == "docker":
            return 1, "", "ERROR: no network"
        assert argv == ["skopeo", "inspect", f"docker://rocm/pytorch:{TAG}"]
        return 0, json.dumps({"Name": "docker.io/rocm/pytorch", "Digest": DIGEST}), ""

    assert resolve_lock(UNRESOLVED, [BUILDX, SKOPEO], run, TODAY).resolved_with == "skopeo"


def test_crane_prints_the_digest_alone() -> None:
    seen: list[list[str]] = []

    def run(argv: list[str]) -> tuple[int, str, str]:
        seen.append(argv)
        return 0, DIGEST + "\n", ""

    lock = resolve_lock(UNRESOLVED, [CRANE], run, TODAY)
    assert seen == [["crane", "digest", f"rocm/pytorch:{TAG}"]]
    assert (lock.digest, lock.resolved_with) == (DIGEST, "crane")
    with pytest.raises(ExecutorError, match="cannot resolve"):  # anything but a digest is no answer
        resolve_lock(UNRESOLVED, [CRANE], lambda argv: (0, "sha256:short\n", ""), TODAY)


def test_each_vendor_has_its_lock() -> None:
    assert lock_path("rocm") == LOCK_PATH == Path("third_party/rocm/image.lock")
    assert lock_path("cuda") == Path("third_party/cuda/image.lock")
    with pytest.raises(ExecutorError, match="no pinned image for 'cpu'"):
        lock_path("cpu")


def test_no_tool_or_no_answer_is_a_clear_error() -> None:
    with pytest.raises(ExecutorError, match="none of `docker buildx`, `skopeo` or `crane`"):
        resolve_lock(UNRESOLVED, [], lambda argv: (0, "", ""))
    with pytest.raises(ExecutorError, match="skopeo: unauthorized"):
        resolve_lock(UNRESOLVED, [SKOPEO], lambda argv: (1, "", "unauthorized"))
    with pytest.raises(ExecutorError, match="cannot resolve"):  # answered, but with no digest
        resolve_lock(UNRESOLVED, [BUILDX], lambda argv: (0, "Name: x\n", ""))


def test_the_lock_round_trips(tmp_path: Path) -> None:
    lock = ImageLock("rocm/pytorch", TAG, DIGEST, True, "2025-06-01", "skopeo", "Ubuntu 24.04, Python 3.12")
    write_lock(lock, tmp_path / "image.lock")
    assert read_lock(tmp_path / "image.lock") == lock


def repo_with_lock(tmp_path: Path) -> Path:
    (tmp_path / "pants.toml").write_text("")
    for path, lock in ((LOCK_PATHS["rocm"], UNRESOLVED), (LOCK_PATHS["cuda"], CUDA_UNRESOLVED)):
        (tmp_path / path).parent.mkdir(parents=True)
        write_lock(lock, tmp_path / path)
    return tmp_path


def test_arena_image_show_prints_the_lock(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = repo_with_lock(tmp_path)
    assert cli.main(["--repo-root", str(repo), "image", "show", "--vendor", "rocm"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["tag"] == TAG and "not resolved" in err
    assert cli.main(["--repo-root", str(repo), "image", "show"]) == 0  # both vendors
    out, _ = capsys.readouterr()
    assert f'"tag": "{TAG}"' in out and '"tag": "25.12-py3"' in out


def test_arena_image_resolve_writes_the_lock_or_fails_clearly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = repo_with_lock(tmp_path)
    monkeypatch.setattr(image, "resolvers", lambda: [])
    assert cli.main(["--repo-root", str(repo), "image", "resolve"]) == 1
    assert "none of `docker buildx`, `skopeo` or `crane`" in capsys.readouterr().err
    assert not read_lock(repo / LOCK_PATH).resolved  # untouched
    monkeypatch.setattr(image, "resolvers", lambda: [CRANE])
    digests = {f"rocm/pytorch:{TAG}": DIGEST, "nvcr.io/nvidia/pytorch:25.12-py3": CUDA_DIGEST}
    monkeypatch.setattr(image, "_run_command", lambda argv: (0, digests[argv[-1]] + "\n", ""))
    assert cli.main(["--repo-root", str(repo), "image", "resolve", "--vendor", "cuda"]) == 0
    assert not read_lock(repo / LOCK_PATH).resolved  # only the vendor asked for
    assert read_lock(repo / LOCK_PATHS["cuda"]).digest == CUDA_DIGEST
    assert cli.main(["--repo-root", str(repo), "image", "resolve"]) == 0
    written = read_lock(repo / LOCK_PATH)
    assert written.resolved and written.digest == DIGEST and written.tag == TAG
