from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from arena.task.codec import task_from_dict, task_to_dict
from arena.task.load import load_tasks


def test_round_trip_through_json(
    triton_task: Callable[..., Path], hip_task: Callable[..., Path], tmp_path: Path
) -> None:
    triton_task()
    hip_task(scalars={"scale": 0.5, "rows": "M"}, abi=["x", "y", "rows", "scale", "N"], reference="baseline")
    tasks = load_tasks(tmp_path)
    assert len(tasks) == 2
    for task in tasks:
        text = json.dumps(task_to_dict(task), sort_keys=True)
        again = task_from_dict(json.loads(text))
        assert again == task
        assert json.dumps(task_to_dict(again), sort_keys=True) == text
    hip = tasks[0]
    assert hip.reference is None and task_to_dict(hip)["reference"] == "baseline"
    triton = task_to_dict(tasks[1])
    assert triton["entry"] == "kernel.py:softmax"
    assert triton["cases"][1]["dists"] == {"x": {"kind": "wide", "low": -3, "high": 4}}
    assert triton["inputs"][0]["dist"] == {"kind": "normal", "std": 2.0}
    assert triton["tolerances"]["float16"] == {"atol": 2e-3, "rtol": 1e-3}
