"""Tiny task folders in a temporary repository, declared the way docs/task-format.md shows."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

import pytest

from arena.errors import TaskDeclarationError
from arena.task.codec import task_from_dict, task_to_dict
from arena.task.load import load_tasks

TRITON_FIELDS: dict[str, Any] = dict(
    name="softmax",
    category="triton2triton",
    description="Row-wise softmax of a (M, N) matrix.",
    baseline=["kernel.py"],
    entry="kernel.py:softmax",
    signature="softmax(x: [M, N] $dtype) -> [M, N] $dtype",
    reference="reference.py:softmax",
    sources=["reference.py"],
    inputs=[{"name": "x", "shape": ["M", "N"], "dtype": "$dtype", "dist": {"kind": "normal", "std": 2.0}}],
    outputs=[{"name": "y", "shape": ["M", "N"], "dtype": "$dtype"}],
    cases=[
        {"name": "small", "dims": {"M": 7, "N": 129}, "dtype": "float32", "seed": 1},
        {
            "name": "big",
            "dims": {"M": 4096, "N": 4096},
            "dtype": "float16",
            "seed": 3,
            "timed": True,
            "weight": 2.0,
            "dists": {"x": {"kind": "wide", "low": -3, "high": 4}},
        },
    ],
    tolerances={"float16": {"atol": 2e-3}},
    forbidden=["torch.softmax"],
    flops="5*M*N",
    bytes="2*M*N*esize",
    exemplars=["exemplars/fast"],
    wrong="wrong",
)
TRITON_FILES = {
    "kernel.py": "def softmax(x):\n    return x.softmax(-1)\n",
    "reference.py": "def softmax(x):\n    return x.softmax(-1)\n",
    "exemplars/fast/kernel.py": "def softmax(x):\n    return x.softmax(-1)  # fast\n",
    "wrong/kernel.py": "def softmax(x):\n    return x\n",
}
HIP_FIELDS: dict[str, Any] = dict(
    TRITON_FIELDS,
    name="softmax_hip",
    category="hip2hip",
    baseline=["kernel.hip"],
    entry="kernel.hip:launch_softmax",
    abi=["x", "y", "M", "N"],
    exemplars=[],
    wrong="",
)
HIP_FILES = {
    "kernel.hip": 'extern "C" int launch_softmax() { return 0; }\n',
    "reference.py": TRITON_FILES["reference.py"],
}

WriteTask = Callable[..., Path]


def write_task(root: Path, fields: dict[str, Any], files: dict[str, str], folder: str) -> Path:
    """root/<folder>/ with a BUILD declaring `fields` and `files`; returns the folder."""
    (root / "pants.toml").write_text("[GLOBAL]\n")
    task_dir = root / folder
    task_dir.mkdir(parents=True, exist_ok=True)
    arguments = "".join(f"    {key}={value!r},\n" for key, value in fields.items())
    (task_dir / "BUILD").write_text(f"kernel_task(\n{arguments})\n")
    for name, text in files.items():
        (task_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (task_dir / name).write_text(text)
    return task_dir


@pytest.fixture
def triton_task(tmp_path: Path) -> WriteTask:
    """write(**overrides, files=..., drop=[...]) -> task folder of a triton2triton task."""

    def write(files: dict[str, str] | None = None, drop: tuple[str, ...] = (), **overrides: Any) -> Path:
        fields = {k: v for k, v in {**TRITON_FIELDS, **overrides}.items() if k not in drop}
        return write_task(tmp_path, fields, TRITON_FILES if files is None else files, "tasks/triton2triton/softmax")

    return write


@pytest.fixture
def hip_task(tmp_path: Path) -> WriteTask:
    def write(files: dict[str, str] | None = None, drop: tuple[str, ...] = (), **overrides: Any) -> Path:
        fields = {k: v for k, v in {**HIP_FIELDS, **overrides}.items() if k not in drop}
        return write_task(tmp_path, fields, HIP_FILES if files is None else files, "tasks/hip2hip/softmax_hip")

    return write


@pytest.fixture
def triton_fields() -> dict[str, Any]:
    """A fresh copy of the good triton2triton declaration (tests never import conftest)."""
    return copy.deepcopy(TRITON_FIELDS)


@pytest.fixture
def triton_files() -> dict[str, str]:
    return dict(TRITON_FILES)


@pytest.fixture
def hip_files() -> dict[str, str]:
    return dict(HIP_FILES)


@pytest.fixture
def refused_load(tmp_path: Path) -> Callable[[], str]:
    """refused() -> the message load_tasks refuses the task written under tmp_path with."""

    def refused() -> str:
        with pytest.raises(TaskDeclarationError) as raised:
            load_tasks(tmp_path)
        return str(raised.value)

    return refused


@pytest.fixture
def dist_round_trips(tmp_path: Path) -> Callable[[dict[str, Any]], None]:
    """check(dist): the one task written under tmp_path loads with `dist` as its first input's, as
    declared, and the codec gives it back whole."""

    def check(dist: dict[str, Any]) -> None:
        (task,) = load_tasks(tmp_path)
        assert task.inputs[0].dist.kind == dist["kind"]
        assert task.inputs[0].dist.params == {k: v for k, v in dist.items() if k != "kind"}
        text = json.dumps(task_to_dict(task), sort_keys=True)
        back = task_from_dict(json.loads(text))
        assert back == task and json.dumps(task_to_dict(back), sort_keys=True) == text
        assert task_to_dict(back)["inputs"][0]["dist"] == dist

    return check
