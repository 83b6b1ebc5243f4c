"""The values the importer's reading of test code works with: numbers, tuples and strings as
Python holds them, and stand-ins for what only exists when the code runs (a tensor is its shape
and dtype; a module is its dotted name). Nothing here runs the code it reads.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Mapping

# torch's dtype attribute names, by the name arena and torch print (float -> float32, ...).
DTYPE_ALIASES: Mapping[str, str] = {
    "half": "float16",
    "float": "float32",
    "double": "float64",
    "short": "int16",
    "int": "int32",
    "long": "int64",
    "cfloat": "complex64",
}
DTYPE_NAMES = frozenset(
    (
        "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
        "uint16", "uint32", "uint64", "bool", "complex64", "complex128", "float8_e4m3fn",
        "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
    )
)  # fmt: skip
_FLOAT_ORDER = ("float16", "bfloat16", "float32", "float64")
_INT_ORDER = ("uint8", "int8", "int16", "uint16", "int32", "uint32", "int64", "uint64")


class CannotRead(Exception):
    """The code does something the reading does not model; str(error) says what."""


@dataclass(frozen=True)
class Tensor:
    """A tensor as far as shapes go: its shape (in one case) and dtype name; for an integer
    arange (no draw: its values are known), `progression` holds them."""

    shape: tuple[int, ...]
    dtype: str
    # (start, step): element i of a 1-D tensor is start + step * i; a 0-d one's value is start.
    progression: tuple[int, int] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class DType:
    name: str  # canonical: "float32", never "float"


@dataclass(frozen=True)
class Module:
    """An imported module or a name inside one, e.g. "torch.nn.functional" or "torch.zeros"."""

    path: str


@dataclass(frozen=True)
class SourceModule:
    """A module of the checkout read from its source (the kernel file a test loads)."""

    label: str  # its path, for messages
    names: Mapping[str, Any]  # its top-level names (arena.importer.interpreter.module_scope)


@dataclass(frozen=True)
class Function:
    """A function defined in the code being read, run by arena.importer.interpreter."""

    node: ast.FunctionDef
    scope: Mapping[str, Any]  # the module's names it sees


@dataclass(frozen=True)
class Method:
    """`tensor.name`, waiting for its call."""

    tensor: Tensor
    name: str


@dataclass(frozen=True)
class Unknown:
    """A value the reading could not work out; using it raises CannotRead with the reason."""

    reason: str

    def fail(self) -> CannotRead:
        return CannotRead(self.reason)


def canonical_dtype(name: str) -> str:
    name = DTYPE_ALIASES.get(name, name)
    if name not in DTYPE_NAMES:
        raise CannotRead(f"torch.{name} is not a dtype the reading knows")
    return name


def is_float(dtype: str) -> bool:
    return dtype.startswith(("float", "bfloat", "complex"))


def promote(a: str, b: str) -> str:
    """torch's result dtype for two tensors of dtypes a and b (the cases tests meet)."""
    if a == b:
        return a
    if is_float(a) != is_float(b):
        return a if is_float(a) else b
    if "bool" in (a, b):
        return b if a == "bool" else a
    order = _FLOAT_ORDER if is_float(a) else _INT_ORDER
    if a not in order or b not in order:
        raise CannotRead(f"mixing {a} and {b}")
    if {a, b} == {"float16", "bfloat16"}:
        return "float32"
    if {a, b} == {"uint8", "int8"}:
        return "int16"
    return max(a, b, key=order.index)


def promote_scalar(tensor_dtype: str, scalar: object) -> str:
    """torch's result dtype for a tensor and a Python number."""
    if isinstance(scalar, bool):
        return tensor_dtype
    if isinstance(scalar, float) and not is_float(tensor_dtype):
        return "float32"
    if isinstance(scalar, int) and tensor_dtype == "bool":
        return "int64"
    return tensor_dtype


def broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """numpy broadcasting of concrete shapes; CannotRead when they do not broadcast."""
    rank = max(len(shape) for shape in shapes)
    result = []
    for axis in range(rank):
        sizes = {shape[axis - rank + len(shape)] for shape in shapes if axis - rank + len(shape) >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            raise CannotRead(f"shapes {', '.join(map(str, shapes))} do not broadcast")
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def axis(index: int, rank: int) -> int:
    """A dim argument (maybe negative) as an axis of a tensor of `rank`."""
    if not -rank <= index < max(rank, 1):
        raise CannotRead(f"dim {index} is out of range for a tensor of rank {rank}")
    return index % max(rank, 1)


def as_int(value: object, what: str) -> int:
    if isinstance(value, Unknown):
        raise value.fail()
    if isinstance(value, bool) or not isinstance(value, int):
        raise CannotRead(f"{what} is not an integer ({describe(value)})")
    return value


def as_shape(values: tuple[object, ...], what: str) -> tuple[int, ...]:
    """Sizes given as ints or as one tuple/list of ints (torch accepts both)."""
    if len(values) == 1 and isinstance(values[0], (tuple, list)):
        values = tuple(values[0])
    return tuple(as_int(value, what) for value in values)


def same_value(a: object, b: object) -> bool:
    """Equal, and not merely because True == 1."""
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def describe(value: object) -> str:
    """A value in a reason: short and without reprs of large things."""
    if isinstance(value, Tensor):
        return f"a {value.dtype} tensor of shape {list(value.shape)}"
    if isinstance(value, Unknown):
        return f"unknown ({value.reason})"
    if isinstance(value, (Module, Function)):
        return "a function or module"
    return type(value).__name__ if not isinstance(value, (int, float, str, bool, type(None))) else repr(value)
