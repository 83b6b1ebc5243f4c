"""An input given as a literal (`values`, arena/task/literal.py): `torch.tensor(lengths_list,
dtype=torch.int32)` written as `{"kind": "values", "values": [8, 12, 6]}`, per case through
`dists` where the cases differ. Its shape in each case is the literal's, its values fit the
input's dtype, and it holds at most MAX_VALUES numbers; the loader refuses anything else, and
the codec and the digest keep it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from arena.errors import TaskDeclarationError
from arena.task.codec import task_from_dict, task_to_dict
from arena.task.digest import task_digest
from arena.task.literal import MAX_VALUES
from arena.task.load import load_tasks

WriteTask = Callable[..., Path]
X = {"name": "x", "shape": ["M", "N"], "dtype": "$dtype", "dist": {"kind": "normal", "std": 2.0}}


def _lengths(dist: dict[str, Any], shape: list[Any] | None = None, dtype: str = "int32") -> dict[str, Any]:
    return {"name": "lengths", "shape": shape or ["B"], "dtype": dtype, "dist": dist}


def _cases(small: dict[str, Any] | None = None, big: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return [
        {"name": "small", "dims": {"M": 7, "N": 129, "B": 3}, "dtype": "float32", "seed": 1, **(small or {})},
        {
            "name": "big",
            "dims": {"M": 64, "N": 64, "B": 2},
            "dtype": "float16",
            "seed": 3,
            "timed": True,
            **(big or {}),
        },
    ]


def test_values_per_case_load_and_round_trip(triton_task: WriteTask, tmp_path: Path) -> None:
    declared = {"kind": "values", "values": [8, 12, 6]}
    big = {"kind": "values", "values": [32, 16]}
    triton_task(inputs=[X, _lengths(declared)], cases=_cases(big={"dists": {"lengths": big}}))
    (task,) = load_tasks(tmp_path)
    assert task.inputs[1].dist.kind == "values" and task.inputs[1].dist.params == {"values": [8, 12, 6]}
    assert task.cases[1].dists["lengths"].params == {"values": [32, 16]}
    back = task_from_dict(json.loads(json.dumps(task_to_dict(task), sort_keys=True)))
    assert back == task and task_to_dict(back)["inputs"][1]["dist"] == declared


def test_a_two_dim_literal_and_float_values_load(triton_task: WriteTask, tmp_path: Path) -> None:
    table = {"kind": "values", "values": [[0.5, 1.0], [2.0, -3.25], [4.0, 5.0]]}
    triton_task(inputs=[X, _lengths(table, ["B", 2], "float32")], cases=_cases(big={"dims": {"M": 8, "N": 8, "B": 3}}))
    (task,) = load_tasks(tmp_path)
    assert task.inputs[1].dist.params == {"values": [[0.5, 1.0], [2.0, -3.25], [4.0, 5.0]]}


def test_the_values_are_in_the_digest(triton_task: WriteTask, tmp_path: Path) -> None:
    other = {"dists": {"lengths": {"kind": "values", "values": [1, 1]}}}
    digests = []
    for values in ([8, 12, 6], [8, 12, 7]):
        folder = triton_task(inputs=[X, _lengths({"kind": "values", "values": values})], cases=_cases(big=other))
        (task,) = load_tasks(tmp_path)
        digests.append(task_digest(task, tmp_path))
        assert folder.exists()
    assert digests[0] != digests[1]


TOO_LONG = [1] * (MAX_VALUES + 1)
V = "values"
# (id, the input, B in case small, B in case big, what the error says)
BAD = [
    ("length", _lengths({"kind": V, V: [1, 2]}), 3, 3, "shape [3] there, but its values are a literal of shape [2]"),
    ("per-case", _lengths({"kind": V, V: [1, 2, 3]}), 3, 2, "case 'big': 'lengths' has shape [2] there"),
    (
        "rank",
        _lengths({"kind": V, V: [[1, 2, 3]]}),
        3,
        3,
        "shape [3] there, but its values are a literal of shape [1, 3]",
    ),
    ("string", _lengths({"kind": V, V: [1, "2", 3]}), 3, 3, "expected numbers only"),
    ("bool", _lengths({"kind": V, V: [1, True, 3]}), 3, 3, "expected numbers only"),
    ("empty", _lengths({"kind": V, V: []}), 3, 3, "must be a non-empty list"),
    ("scalar", _lengths({"kind": V, V: 3}), 3, 3, "must be a non-empty list"),
    ("ragged", _lengths({"kind": V, V: [[1, 2], [3]]}, ["B", 2]), 2, 2, "a literal is rectangular"),
    ("mixed", _lengths({"kind": V, V: [[1, 2], 3]}, ["B", 2]), 2, 2, "expected numbers only"),
    ("missing", _lengths({"kind": V}), 3, 3, "missing"),
    ("extra", _lengths({"kind": V, V: [1, 2, 3], "value": 1}), 3, 3, "value"),
    ("too-long", _lengths({"kind": V, V: TOO_LONG}, [MAX_VALUES + 1]), 3, 3, f"more than the {MAX_VALUES}"),
    ("fraction", _lengths({"kind": V, V: [1, 2.5, 3]}), 3, 3, "its value 2.5 is not an int32 value"),
    ("int8-range", _lengths({"kind": V, V: [1, 200, 3]}, dtype="int8"), 3, 3, "its value 200 is not an int8 value"),
    ("bool-dtype", _lengths({"kind": V, V: [1, 2, 0]}, dtype="bool"), 3, 3, "its value 2 is not an bool value"),
]


@pytest.mark.parametrize("spec, small, big, message", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_bad_literal_is_refused(
    triton_task: WriteTask, tmp_path: Path, spec: dict[str, Any], small: int, big: int, message: str
) -> None:
    cases = _cases(small={"dims": {"M": 7, "N": 129, "B": small}}, big={"dims": {"M": 64, "N": 64, "B": big}})
    triton_task(inputs=[X, spec], cases=cases)
    with pytest.raises(TaskDeclarationError) as raised:
        load_tasks(tmp_path)
    assert message in str(raised.value)


def test_a_good_literal_of_each_integer_dtype_loads(triton_task: WriteTask, tmp_path: Path) -> None:
    """The refusals above are the values' own: the same input with fitting values loads."""
    for dtype, values in (("int8", [1, 127, -128]), ("bool", [1, 0, 1]), ("int64", [2**62, 0, -(2**62)])):
        cases = _cases(big={"dims": {"M": 64, "N": 64, "B": 3}})
        triton_task(inputs=[X, _lengths({"kind": V, V: values}, dtype=dtype)], cases=cases)
        (task,) = load_tasks(tmp_path)
        assert task.inputs[1].dist.params == {"values": values}
