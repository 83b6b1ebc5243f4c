"""Task <-> plain JSON-able dict, for task.json files, caches and child processes."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from arena.task.task import (
    RETURN_IGNORED,
    Case,
    Category,
    Distribution,
    Entry,
    Task,
    TensorSpec,
    Tolerance,
    positional_order,
)


def task_to_dict(task: Task) -> dict[str, Any]:
    """Every field of `task` as JSON types; task_from_dict(task_to_dict(t)) == t."""
    return {
        "address": task.address,
        "name": task.name,
        "category": task.category.value,
        "task_dir": task.task_dir,
        "description": task.description,
        "baseline": list(task.baseline),
        "editable": list(task.editable),
        "entry": str(task.entry),
        "signature": task.signature,
        "reference": str(task.reference) if task.reference is not None else "baseline",
        "inputs": [_tensor_to_dict(spec) for spec in task.inputs],
        "outputs": [_tensor_to_dict(spec) for spec in task.outputs],
        "scalars": dict(task.scalars),
        "abi": list(task.abi),
        "cases": [_case_to_dict(case) for case in task.cases],
        "tolerances": {k: {"atol": t.atol, "rtol": t.rtol} for k, t in sorted(task.tolerances.items())},
        "forbidden": list(task.forbidden),
        "flops": task.flops,
        "bytes": task.bytes,
        "exemplars": list(task.exemplars),
        "wrong": task.wrong,
        "sources": list(task.sources),
        "build": task.build,
        "bench": task.bench,
        "budget_seconds": task.budget_seconds,
        "iterations": task.iterations,
        "archs": list(task.archs),
        "skip": task.skip,
        "timeout": task.timeout,
    }


def task_from_dict(d: Mapping[str, Any]) -> Task:
    """The Task written by task_to_dict (the input is trusted to have been validated)."""
    category = Category(d["category"])
    inputs = tuple(_tensor_from_dict(spec) for spec in d["inputs"])
    entry = _entry_from_str(d["entry"])
    if not category.is_hip:  # a Python entry's positional arguments, as the loader set them
        entry = replace(entry, positional=positional_order(tuple(d["abi"]), inputs))
    return Task(
        address=d["address"],
        name=d["name"],
        category=category,
        task_dir=d["task_dir"],
        description=d["description"],
        baseline=tuple(d["baseline"]),
        editable=tuple(d["editable"]),
        entry=entry,
        signature=d["signature"],
        reference=None if d["reference"] == "baseline" else _entry_from_str(d["reference"]),
        inputs=inputs,
        outputs=tuple(_tensor_from_dict(spec) for spec in d["outputs"]),
        scalars=dict(d["scalars"]),
        abi=tuple(d["abi"]),
        cases=tuple(_case_from_dict(case) for case in d["cases"]),
        tolerances={k: Tolerance(atol=t["atol"], rtol=t["rtol"]) for k, t in d["tolerances"].items()},
        forbidden=tuple(d["forbidden"]),
        flops=d["flops"],
        bytes=d["bytes"],
        exemplars=tuple(d["exemplars"]),
        wrong=d["wrong"],
        sources=tuple(d["sources"]),
        build=d["build"],
        bench=d["bench"],
        budget_seconds=d["budget_seconds"],
        iterations=d["iterations"],
        archs=tuple(d["archs"]),
        # Absent from dicts written before the fields existed.
        skip=d.get("skip", ""),
        timeout=d.get("timeout"),
    )


def distribution_to_dict(dist: Distribution) -> dict[str, Any]:
    return {"kind": dist.kind, **dist.params}


def distribution_from_dict(d: Mapping[str, Any]) -> Distribution:
    return Distribution(kind=d["kind"], params={k: v for k, v in d.items() if k != "kind"})


def _entry_from_str(text: str) -> Entry:
    ignored = text.endswith(RETURN_IGNORED)
    file, _, symbol = text.removesuffix(RETURN_IGNORED).rpartition(":")
    return Entry(file=file, symbol=symbol, return_ignored=ignored)


def _tensor_to_dict(spec: TensorSpec) -> dict[str, Any]:
    written = {"inplace": True} if spec.inplace else {}  # absent when unset: older digests stand
    return {
        "name": spec.name,
        "shape": list(spec.shape),
        "dtype": spec.dtype,
        "dist": distribution_to_dict(spec.dist),
        **written,
    }


def _tensor_from_dict(d: Mapping[str, Any]) -> TensorSpec:
    dist = distribution_from_dict(d["dist"]) if "dist" in d else Distribution()
    return TensorSpec(
        name=d["name"], shape=tuple(d["shape"]), dtype=d["dtype"], dist=dist, inplace=bool(d.get("inplace"))
    )


def _case_to_dict(case: Case) -> dict[str, Any]:
    return {
        "name": case.name,
        "dims": dict(case.dims),
        "dtype": case.dtype,
        "seed": case.seed,
        "timed": case.timed,
        "weight": case.weight,
        "dists": {name: distribution_to_dict(dist) for name, dist in case.dists.items()},
    }


def _case_from_dict(d: Mapping[str, Any]) -> Case:
    return Case(
        name=d["name"],
        dims=dict(d["dims"]),
        dtype=d["dtype"],
        seed=d["seed"],
        timed=d["timed"],
        weight=d["weight"],
        dists={name: distribution_from_dict(dist) for name, dist in d.get("dists", {}).items()},
    )
