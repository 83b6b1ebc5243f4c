"""An input computed from another (`cumsum_of`, arena/task/derived.py): `dA_cumsum =
torch.cumsum(dt * -0.1, dim=-1)` beside the drawn `dt` (here `x`). It names an input declared
before it, of its shape, itself drawn; the loader refuses anything else, and the codec keeps it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from arena.errors import TaskDeclarationError
from arena.task.codec import task_from_dict, task_to_dict
from arena.task.load import load_tasks

WriteTask = Callable[..., Path]
# The source is `x`, the fixture's input (its case "big" draws x from another kind: still a draw).
DT = {"name": "x", "shape": ["M", "N"], "dtype": "float32", "dist": {"kind": "uniform", "high": 0.1}}


def _derived(dist: dict[str, Any], shape: tuple[str, ...] = ("M", "N")) -> dict[str, Any]:
    return {"name": "dA", "shape": list(shape), "dtype": "float32", "dist": dist}


def test_a_cumsum_of_an_earlier_input_loads_and_round_trips(triton_task: WriteTask, tmp_path: Path) -> None:
    dist = {"kind": "cumsum_of", "input": "x", "dim": -1, "scale": -0.1}
    triton_task(inputs=[DT, _derived(dist)])
    (task,) = load_tasks(tmp_path)
    assert task.inputs[1].dist.kind == "cumsum_of"
    assert task.inputs[1].dist.params == {"input": "x", "dim": -1, "scale": -0.1}
    text = json.dumps(task_to_dict(task), sort_keys=True)
    back = task_from_dict(json.loads(text))
    assert back == task and task_to_dict(back)["inputs"][1]["dist"] == dist


BAD = [
    ("no-source", [DT, _derived({"kind": "cumsum_of", "input": "w", "dim": 0})], "not an input declared before it"),
    ("after", [_derived({"kind": "cumsum_of", "input": "x", "dim": 0}), DT], "not an input declared before it"),
    ("shape", [DT, _derived({"kind": "cumsum_of", "input": "x", "dim": 0}, ("N", "M"))], "is not its own"),
    ("axis", [DT, _derived({"kind": "cumsum_of", "input": "x", "dim": 2})], "along dim 2, which its shape"),
    ("no-dim", [DT, _derived({"kind": "cumsum_of", "input": "x"})], "missing"),
    ("name", [DT, _derived({"kind": "cumsum_of", "input": "d t", "dim": 0})], "is not an identifier"),
    ("scale", [DT, _derived({"kind": "cumsum_of", "input": "x", "dim": 0, "scale": "x"})], "must be a number"),
    (
        "chained",
        [
            DT,
            _derived({"kind": "cumsum_of", "input": "x", "dim": 0}),
            {**_derived({"kind": "cumsum_of", "input": "dA", "dim": 0}), "name": "ddA"},
        ],
        "which is itself derived",
    ),
]


@pytest.mark.parametrize("inputs, message", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_bad_derived_input_is_refused(
    triton_task: WriteTask, tmp_path: Path, inputs: list[dict[str, Any]], message: str
) -> None:
    triton_task(inputs=inputs)
    with pytest.raises(TaskDeclarationError) as raised:
        load_tasks(tmp_path)
    assert message in str(raised.value)
