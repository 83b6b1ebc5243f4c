"""The kernel_task and kernel_task_suite target types.

Fields are checked when BUILD files are parsed, so a malformed declaration fails every goal with
a message naming the BUILD file, the target and the field. The deeper checks (files exist, the
reference runs, exemplars pass) belong to arena itself and run as each task's test.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Iterable, Optional

from pants.engine.addresses import Address
from pants.engine.target import (
    COMMON_TARGET_FIELDS,
    Field,
    IntField,
    InvalidFieldException,
    MultipleSourcesField,
    StringField,
    StringSequenceField,
    Target,
)
from pants.util.frozendict import FrozenDict

CATEGORIES = ("triton2triton", "hip2hip", "torch2hip", "repository")
DTYPES = (
    "float16", "bfloat16", "float32", "float64",
    "int8", "int16", "int32", "int64", "uint8", "bool",
)
DIST_KINDS = ("normal", "uniform", "randint", "wide", "large", "constant")
_ENTRY = re.compile(r"^[\w./-]+:[A-Za-z_]\w*$")


def _fail(address: Address, alias: str, problem: str) -> InvalidFieldException:
    return InvalidFieldException(
        f"{address.spec_path}/BUILD: kernel_task '{address.target_name}': field '{alias}': {problem}"
    )


def _freeze(value: Any) -> Any:
    """Targets must be hashable: lists become tuples and dicts FrozenDicts."""
    if isinstance(value, dict):
        return FrozenDict({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def _check_relative_paths(paths: Iterable[str], address: Address, alias: str) -> None:
    for path in paths:
        if path.startswith("/") or ".." in path.split("/") or not path:
            raise _fail(address, alias, f"'{path}' must be a path inside the task folder")


class KernelTaskFilesField(MultipleSourcesField):
    alias = "task_files"
    default = ("**/*", "!BUILD")
    help = "Every file of the task folder; owned here so `--changed-since` finds the task."


class KernelTaskCategoryField(StringField):
    alias = "category"
    required = True
    valid_choices = CATEGORIES
    help = "The task's category."


class KernelTaskDescriptionField(StringField):
    alias = "description"
    default = ""
    help = "The prompt an agent reads."


class _PathsField(StringSequenceField):
    @classmethod
    def compute_value(cls, raw_value: Optional[Iterable[str]], address: Address):
        value = super().compute_value(raw_value, address)
        _check_relative_paths(value or (), address, cls.alias)
        return value


class KernelTaskBaselineField(_PathsField):
    alias = "baseline"
    required = True
    help = "The files the agent starts from, relative to the task folder."


class KernelTaskEditableField(_PathsField):
    alias = "editable"
    help = "The allow-list of files a candidate may hold (default: the baseline)."


class KernelTaskSupportFilesField(_PathsField):
    alias = "sources"
    help = "Other files the task needs (the reference, a repository's code base); never editable."


class KernelTaskExemplarsField(_PathsField):
    alias = "exemplars"
    help = "Folders of known-faster candidates; never shown to agents."


class KernelTaskEntryField(StringField):
    alias = "entry"
    required = True
    help = "`file:symbol` the harness calls: a Python function or a HIP extern \"C\" launcher."

    @classmethod
    def compute_value(cls, raw_value: Optional[str], address: Address) -> Optional[str]:
        value = super().compute_value(raw_value, address)
        if value is not None and not _ENTRY.match(value):
            raise _fail(address, cls.alias, f"'{value}' is not of the form file:symbol")
        return value


class KernelTaskReferenceField(StringField):
    alias = "reference"
    required = True
    help = "`file:symbol` of the PyTorch oracle, or `baseline` when the baseline is the oracle."

    @classmethod
    def compute_value(cls, raw_value: Optional[str], address: Address) -> Optional[str]:
        value = super().compute_value(raw_value, address)
        if value is not None and value != "baseline" and not _ENTRY.match(value):
            raise _fail(address, cls.alias, f"'{value}' is neither 'baseline' nor file:symbol")
        return value


class KernelTaskSignatureField(StringField):
    alias = "signature"
    default = ""
    help = "The entry's signature as shown to agents."


class KernelTaskWrongField(StringField):
    alias = "wrong"
    default = ""
    help = "Folder of a deliberately wrong candidate that validation must see fail."


class KernelTaskFormulaField(StringField):
    default = ""

    @classmethod
    def compute_value(cls, raw_value: Optional[str], address: Address) -> Optional[str]:
        value = super().compute_value(raw_value, address)
        if value and not re.fullmatch(r"[\w\s+\-*/().]+", value):
            raise _fail(address, cls.alias, f"'{value}' may hold only arithmetic over dim names")
        return value


class KernelTaskFlopsField(KernelTaskFormulaField):
    alias = "flops"
    help = "Floating-point operations per call, as arithmetic over dim names."


class KernelTaskBytesField(KernelTaskFormulaField):
    alias = "bytes"
    help = "Bytes moved per call, as arithmetic over dim names and `esize`."


class KernelTaskCommandField(StringField):
    default = ""


class KernelTaskBuildField(KernelTaskCommandField):
    alias = "build"
    help = "Repository tasks: the code base's build command."


class KernelTaskBenchField(KernelTaskCommandField):
    alias = "bench"
    help = "Repository tasks: the code base's own benchmark command."


class KernelTaskForbiddenField(StringSequenceField):
    alias = "forbidden"
    help = "API names a candidate may not use (e.g. torch.softmax, hipblasGemmEx)."


class KernelTaskArchsField(StringSequenceField):
    alias = "archs"
    default = ("sm_90", "gfx942")
    help = "GPU architectures the task supports."


class _PositiveIntField(IntField):
    @classmethod
    def compute_value(cls, raw_value: Optional[int], address: Address) -> Optional[int]:
        value = super().compute_value(raw_value, address)
        if value is not None and value <= 0:
            raise _fail(address, cls.alias, f"must be positive, not {value}")
        return value


class KernelTaskBudgetField(_PositiveIntField):
    alias = "budget_seconds"
    default = 3600
    help = "Wall-clock budget of one attempt, in seconds."


class KernelTaskIterationsField(_PositiveIntField):
    alias = "iterations"
    default = 3
    help = "Evaluations allowed in one attempt."


class _LiteralField(Field):
    """A literal list or dict, frozen; subclasses check its shape."""

    expected_type: ClassVar[type] = list
    default: ClassVar[Any] = None

    @classmethod
    def compute_value(cls, raw_value: Any, address: Address) -> Any:
        value = super().compute_value(raw_value, address)
        if value is None:
            return None
        if not isinstance(value, cls.expected_type):
            raise _fail(address, cls.alias, f"expected a {cls.expected_type.__name__}, got {value!r}")
        cls.check(value, address)
        return _freeze(value)

    @classmethod
    def check(cls, value: Any, address: Address) -> None:
        pass


def _check_tensor_specs(cls: type[Field], value: list, address: Address) -> None:
    for spec in value:
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            raise _fail(address, cls.alias, f"each entry needs a 'name': {spec!r}")
        if not isinstance(spec.get("shape"), list):
            raise _fail(address, cls.alias, f"'{spec['name']}' needs a 'shape' list")
        dtype = spec.get("dtype", "$dtype")
        if dtype != "$dtype" and dtype not in DTYPES:
            raise _fail(address, cls.alias, f"'{spec['name']}' has unknown dtype '{dtype}'")
        dist = spec.get("dist", {"kind": "normal"})
        if not isinstance(dist, dict) or dist.get("kind", "normal") not in DIST_KINDS:
            raise _fail(address, cls.alias, f"'{spec['name']}' has unknown distribution {dist!r}")


class KernelTaskInputsField(_LiteralField):
    alias = "inputs"
    required = True
    help = "Input tensors in call order: name, shape over dims, dtype, distribution."

    @classmethod
    def check(cls, value: list, address: Address) -> None:
        _check_tensor_specs(cls, value, address)


class KernelTaskOutputsField(_LiteralField):
    alias = "outputs"
    required = True
    help = "Output tensors in return order: name, shape over dims, dtype."

    @classmethod
    def check(cls, value: list, address: Address) -> None:
        if not value:
            raise _fail(address, cls.alias, "declare at least one output")
        _check_tensor_specs(cls, value, address)


class KernelTaskCasesField(_LiteralField):
    alias = "cases"
    required = True
    help = "Test vectors: name, dims, dtype, seed; `timed` and `weight` for timed cases."

    @classmethod
    def check(cls, value: list, address: Address) -> None:
        names = set()
        for case in value:
            if not isinstance(case, dict) or not isinstance(case.get("name"), str):
                raise _fail(address, cls.alias, f"each case needs a 'name': {case!r}")
            name = case["name"]
            if name in names:
                raise _fail(address, cls.alias, f"case '{name}' is declared twice")
            names.add(name)
            if not isinstance(case.get("dims"), dict):
                raise _fail(address, cls.alias, f"case '{name}' needs a 'dims' dict")
            if case.get("dtype") not in DTYPES:
                raise _fail(address, cls.alias, f"case '{name}' has unknown dtype {case.get('dtype')!r}")
            if not isinstance(case.get("seed"), int):
                raise _fail(address, cls.alias, f"case '{name}' needs an integer 'seed'")
        if not any(case.get("timed") for case in value):
            raise _fail(address, cls.alias, "mark at least one case `timed`")


class KernelTaskScalarsField(_LiteralField):
    alias = "scalars"
    expected_type = dict
    help = "Keyword arguments of the entry: a number, or a string naming a dim."


class KernelTaskAbiField(StringSequenceField):
    alias = "abi"
    help = "HIP tasks: the launcher's argument order, by input, output, dim and scalar names."


class KernelTaskTolerancesField(_LiteralField):
    alias = "tolerances"
    expected_type = dict
    help = "Per dtype {atol, rtol}, merged over the defaults."

    @classmethod
    def check(cls, value: dict, address: Address) -> None:
        for dtype, tol in value.items():
            if dtype not in DTYPES:
                raise _fail(address, cls.alias, f"unknown dtype '{dtype}'")
            if not isinstance(tol, dict) or set(tol) - {"atol", "rtol"}:
                raise _fail(address, cls.alias, f"'{dtype}' needs only 'atol' and 'rtol'")


class KernelTaskTarget(Target):
    alias = "kernel_task"
    core_fields = (
        *COMMON_TARGET_FIELDS,
        KernelTaskFilesField,
        KernelTaskCategoryField,
        KernelTaskDescriptionField,
        KernelTaskBaselineField,
        KernelTaskEditableField,
        KernelTaskEntryField,
        KernelTaskSignatureField,
        KernelTaskReferenceField,
        KernelTaskSupportFilesField,
        KernelTaskInputsField,
        KernelTaskOutputsField,
        KernelTaskScalarsField,
        KernelTaskAbiField,
        KernelTaskCasesField,
        KernelTaskTolerancesField,
        KernelTaskForbiddenField,
        KernelTaskFlopsField,
        KernelTaskBytesField,
        KernelTaskExemplarsField,
        KernelTaskWrongField,
        KernelTaskBudgetField,
        KernelTaskIterationsField,
        KernelTaskArchsField,
        KernelTaskBuildField,
        KernelTaskBenchField,
    )
    help = "A kernel optimisation task: baseline, reference, test vectors, budgets (docs/task-format.md)."


class KernelTaskSuiteMarkerField(StringField):
    alias = "_kernel_task_suite"
    default = "suite"
    help = "Marks the target as a suite, so only suites are runnable as one."


class KernelTaskSuiteTarget(Target):
    alias = "kernel_task_suite"
    core_fields = (*COMMON_TARGET_FIELDS, KernelTaskSuiteMarkerField)
    help = "Every kernel_task under this folder; `pants run` evaluates them through the runner."
