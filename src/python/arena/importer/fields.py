"""The fields a kernel_task declares, as the importer reads them from a test (docs/task-format.md):
each tensor's, each scalar's, and the task's as a whole."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TensorField:
    name: str
    shape: tuple[str | int, ...]
    dtype: str
    dist: dict[str, Any] | None = None  # inputs only
    inplace: bool = False  # outputs only: the input of this name, as the kernel leaves it
    copy_of: tuple[str, ...] = ()  # inputs only: the test's names this input is a copy of (`x_k = x.clone()`)
    cast_of: tuple[str, ...] = ()  # inputs only: the test's names this input is a cast of (`a = a_f.to(fp16)`)
    case_dists: tuple[dict[str, Any], ...] = ()  # inputs only: each case's distribution, when they differ
    case_dtypes: tuple[str, ...] = ()  # each case's dtype, when it differs between cases (dtype `$dtype`)
    # inputs only: the test's list this input is `torch.tensor(<list>, dtype=<an integer dtype>)` of
    # (a `values` literal), which the reference may read as the input's `.tolist()`
    literal_of: str | None = None

    def declared(self) -> dict[str, Any]:
        if self.inplace:
            return {"name": self.name, "inplace": True}
        declared: dict[str, Any] = {"name": self.name, "shape": list(self.shape), "dtype": self.dtype}
        return declared | ({"dist": self.dist} if self.dist is not None else {})


@dataclass(frozen=True)
class ScalarField:
    param: str  # the keyword the harness passes it as (the kernel function's parameter)
    value: str | int | float  # a dim name, or a number
    test_name: str | None  # the name the test gives it, when it passes a name


@dataclass(frozen=True)
class TaskFields:
    """What the test says about the task, ready to declare."""

    function: str  # the kernel function the test calls
    inputs: tuple[TensorField, ...]
    scalars: tuple[ScalarField, ...]
    outputs: tuple[TensorField, ...]  # in the order the kernel returns them
    dims: tuple[dict[str, int | float], ...]  # per case, only the dims something uses (a float: a case value)
    seeds: tuple[int, ...]
    tolerances: dict[str, dict[str, float]]  # by dtype, {"atol", "rtol"}; a dtype left out: arena's default
    dim_names: frozenset[str]  # every dim of the cases (loop values the reference may use)
    # every output written in place, and the kernel also returns what the test ignores
    return_ignored: bool = False
    # the call's positional arguments in order (input names, scalar params), where a tensor comes
    # after a non-tensor one; empty: the inputs first, the scalars by name
    abi: tuple[str, ...] = ()
    # each case's dtype, where the float tensors declared `$dtype` have one that differs by case
    case_dtypes: tuple[str, ...] = ()
