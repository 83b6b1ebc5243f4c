"""The Task: what an agent must speed up, and everything that defines a correct, timed answer.

A task is declared once, as a `kernel_task(...)` target in a BUILD file (docs/task-format.md).
These records are that declaration after validation; arena.task.load builds them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Mapping

CATEGORIES = ("triton2triton", "hip2hip", "torch2hip", "repository")
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "bool")
DTYPES = FLOAT_DTYPES + INT_DTYPES
# The placeholder an input or output dtype takes to mean "the case's dtype".
CASE_DTYPE = "$dtype"


class Category(str, Enum):
    TRITON2TRITON = "triton2triton"
    HIP2HIP = "hip2hip"
    TORCH2HIP = "torch2hip"
    REPOSITORY = "repository"

    @property
    def is_hip(self) -> bool:
        """Candidates are HIP source compiled to a shared library and called through the ABI."""
        return self in (Category.HIP2HIP, Category.TORCH2HIP)


@dataclass(frozen=True)
class Distribution:
    """How the values of one input tensor are drawn.

    kind: normal (mean, std) | uniform (low, high) | randint (low, high; high may name a dim) |
    wide (sign * 10**uniform(low, high): magnitudes across many decades, exposes downcasts) |
    large (normal scaled by `scale`, near the dtype's range) | constant (value) |
    half_normal (|N(0, std)| + low) | cumsum (running sums along `dim` of a draw of kind `base`,
    with the base's parameters beside `base` and `dim`) | tril (a draw of kind `base` kept on and
    below a diagonal of each block of axes `rows` x `cols`) | cumsum_of (no draw: the running sums
    along `dim` of another input's values times `scale`) | values (no draw: the tensor's values
    given as a list, nested for more dims). A normal, uniform or half_normal draw may add `then`
    (elementwise maps applied in order) and `normalize` (an axis its values are divided by their
    sum along): task/mapped.py. docs/task-format.md lists them all.
    """

    kind: str = "normal"
    # A `values` literal's one parameter is a list (nested for more dims): task/literal.py; a
    # `then` is a list of map names: task/mapped.py.
    params: Mapping[str, float | int | str] = field(default_factory=dict)


@dataclass(frozen=True)
class TensorSpec:
    """One input or output tensor: shape over case dims (names or ints), dtype or CASE_DTYPE."""

    name: str
    shape: tuple[str | int, ...]
    dtype: str = CASE_DTYPE
    dist: Distribution = Distribution()
    inplace: bool = False  # an output only: the input of this name, as the kernel leaves it


@dataclass(frozen=True)
class Case:
    """One test vector: dim values, dtype, seed; timed cases are also checked cases."""

    name: str
    # a float only for a dim that only scalars name (a float scalar that differs by case)
    dims: Mapping[str, int]
    dtype: str
    seed: int
    timed: bool = False
    weight: float = 1.0
    # Per-input overrides of the declared distribution, e.g. {"x": Distribution("wide")}.
    dists: Mapping[str, Distribution] = field(default_factory=dict)


@dataclass(frozen=True)
class Tolerance:
    """An output element passes when |got - want| <= atol + rtol * |want| (NaN only where want is NaN)."""

    atol: float
    rtol: float


# Declared after an entry's `file:symbol`: the harness ignores what the entry returns (every
# output is an input it writes in place), e.g. "kernel.py:write_zeros -> ignored".
RETURN_IGNORED = " -> ignored"


@dataclass(frozen=True)
class Entry:
    """A `file:symbol` pair, the file relative to the task directory; `return_ignored`: what a call
    returns is no output (declared with RETURN_IGNORED after the pair); `positional`: a Python
    entry's positional arguments, from the task's abi (an int is that input, by its index among the
    inputs; a str that scalar), the other scalars by name; () calls `entry(*inputs, **scalars)`."""

    file: str
    symbol: str
    return_ignored: bool = False
    positional: tuple[int | str, ...] = ()

    def __str__(self) -> str:
        return f"{self.file}:{self.symbol}" + (RETURN_IGNORED if self.return_ignored else "")


def positional_order(abi: tuple[str, ...], inputs: tuple[TensorSpec, ...]) -> tuple[int | str, ...]:
    """A Python entry's `positional` from its abi: each input name as its index, a scalar by name."""
    names = [spec.name for spec in inputs]
    return tuple(names.index(name) if name in names else name for name in abi)


@dataclass(frozen=True)
class Task:
    """A validated kernel_task declaration. Paths are relative to `task_dir` unless noted."""

    address: str  # Pants address, e.g. "tasks/triton2triton/softmax:softmax"
    name: str
    category: Category
    task_dir: str  # relative to the repository root
    description: str
    baseline: tuple[str, ...]  # the files the agent starts from
    editable: tuple[str, ...]  # the allow-list a candidate's files must fall in
    entry: Entry  # what the harness calls, in the baseline or candidate files
    signature: str  # shown to agents
    reference: Entry | None  # the oracle; None means the baseline itself is the oracle
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    scalars: Mapping[str, float | int | str]  # passed by name; a str value names a dim, a bool is a flag
    abi: tuple[str, ...]  # HIP launcher argument order: input/output/dim/scalar names; Python: `positional`
    cases: tuple[Case, ...]
    tolerances: Mapping[str, Tolerance]  # by dtype name
    forbidden: tuple[str, ...]  # API names a candidate may not use
    flops: str  # arithmetic over dim names, e.g. "2*M*N*K"; "" when not meaningful
    bytes: str  # arithmetic over dim names and `esize` (bytes per element of the case dtype)
    exemplars: tuple[str, ...]  # folders of known-faster candidates; never shown to agents
    wrong: str  # folder of a deliberately wrong candidate; never shown to agents
    sources: tuple[str, ...]  # other files the task needs (reference, repository code base)
    build: str  # repository tasks: the code base's build command, run in a copy of it
    bench: str  # repository tasks: the code base's own benchmark command
    budget_seconds: int = 3600
    iterations: int = 3
    archs: tuple[str, ...] = ("sm_90", "gfx942")
    skip: str = ""  # why suites leave the task out; "" runs it (a skipped task is still validated)
    timeout: float | None = None  # seconds one evaluation may take; None: the harness's default

    @property
    def timed_cases(self) -> tuple[Case, ...]:
        return tuple(case for case in self.cases if case.timed)

    def all_files(self) -> tuple[str, ...]:
        """Every file the task names, sorted, relative to task_dir (exemplar/wrong folders excluded)."""
        names = set(self.baseline) | set(self.sources) | {self.entry.file}
        if self.reference is not None:
            names.add(self.reference.file)
        return tuple(sorted(names))
