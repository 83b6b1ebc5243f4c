"""From the keyword arguments of one kernel_task(...) call to a validated Task.

arena.task.fields checks the form (the fields, the required ones, each value's type); every
rule of docs/task-format.md about what the values mean is checked here. A broken rule raises
TaskDeclarationError naming the BUILD file, the target and the field.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping, NamedTuple

from arena.errors import TaskDeclarationError
from arena.task import paths, vectors
from arena.task.archs import arch_error
from arena.task.checks import (
    FieldError,
    require_int,
    require_number,
    require_str,
    require_str_list,
)
from arena.task.fields import check_form
from arena.task.formula import ELEMENT_SIZES, FormulaError, evaluate_formula
from arena.task.task import CATEGORIES, RETURN_IGNORED, Case, Category, Entry, Task, TensorSpec, positional_order
from arena.task.tolerance import merge_tolerances, parse_tolerance_overrides

HIP_SUFFIXES = (".hip", ".cu")


def build_task(kwargs: Mapping[str, Any], build_file: str, task_dir: Path, repo_root: Path) -> Task:
    """The Task declared by `kwargs` in `build_file` (relative to repo_root); task_dir is absolute."""
    name = task_dir.name if kwargs.get("name") is None else kwargs["name"]
    target = f"kernel_task {name!r}" if isinstance(name, str) else "kernel_task"
    try:
        return _build(kwargs, task_dir, repo_root)
    except FieldError as error:
        raise TaskDeclarationError(f"{build_file}: {target}: {error}") from None


class _Files(NamedTuple):
    """The task's files: what the candidate starts from, what it may change, what it calls."""

    baseline: tuple[str, ...]
    editable: tuple[str, ...]
    sources: tuple[str, ...]
    entry: Entry
    reference: Entry | None  # None: the baseline is the reference


class _Tensors(NamedTuple):
    """What the entry takes and gives, and the cases that size it."""

    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    scalars: dict[str, float | int | str]
    cases: tuple[Case, ...]


def _build(kwargs: Mapping[str, Any], task_dir: Path, repo_root: Path) -> Task:
    raw = check_form(kwargs)
    name = _name(raw["name"], task_dir)
    category = _category(raw["category"])
    files = _files(raw, category, task_dir)
    tensors = _tensors(raw, category, files.entry)
    abi, entry = _abi_and_entry(raw["abi"], category, files.entry, tensors)
    exemplars, wrong = _candidate_folders(raw, task_dir, files.editable)
    folder = task_dir.relative_to(repo_root).as_posix()
    return Task(
        address=f"{folder}:{name}",
        name=name,
        category=category,
        task_dir=folder,
        description=require_str("description", raw["description"], empty=False),
        baseline=files.baseline,
        editable=files.editable,
        entry=entry,
        signature=require_str("signature", raw["signature"], empty=False),
        reference=files.reference,
        inputs=tensors.inputs,
        outputs=tensors.outputs,
        scalars=tensors.scalars,
        abi=abi,
        cases=tensors.cases,
        tolerances=merge_tolerances(parse_tolerance_overrides(raw["tolerances"])),
        forbidden=_forbidden(raw["forbidden"]),
        flops=_formula("flops", raw["flops"], tensors.cases),
        bytes=_formula("bytes", raw["bytes"], tensors.cases),
        exemplars=exemplars,
        wrong=wrong,
        sources=files.sources,
        build=require_str("build", raw["build"]),
        bench=require_str("bench", raw["bench"]),
        budget_seconds=require_int("budget_seconds", raw["budget_seconds"], minimum=1),
        iterations=require_int("iterations", raw["iterations"], minimum=1),
        archs=_archs(raw["archs"]),
        skip=_skip(raw["skip"]),
        timeout=_timeout(raw["timeout"]),
    )


def _name(value: Any, task_dir: Path) -> str:
    name = require_str("name", task_dir.name if value is None else value, empty=False)
    if "/" in name or ":" in name:
        raise FieldError("name", f"{name!r} must not contain '/' or ':'")
    return name


def _category(value: Any) -> Category:
    if value not in CATEGORIES:
        raise FieldError("category", f"{value!r} is not one of {', '.join(CATEGORIES)}")
    return Category(value)


def _files(raw: Mapping[str, Any], category: Category, task_dir: Path) -> _Files:
    baseline = paths.check_files("baseline", raw["baseline"], task_dir)
    editable = paths.check_editable(raw["editable"], baseline, task_dir)
    sources = paths.check_files("sources", raw["sources"], task_dir, empty=True)
    for source in sources:
        if paths.is_allowed(source, editable):
            raise FieldError("sources", f"{source!r} is editable; sources are never editable")
    entry = _entry(raw["entry"], category, baseline, editable)
    reference = None if raw["reference"] == "baseline" else _parse_entry("reference", raw["reference"])
    if reference is not None:
        paths.check_file("reference", task_dir, reference.file)
    return _Files(baseline, editable, sources, entry, reference)


def _tensors(raw: Mapping[str, Any], category: Category, entry: Entry) -> _Tensors:
    inputs = vectors.parse_tensors("inputs", raw["inputs"], with_dist=True)
    outputs = vectors.parse_outputs(raw["outputs"], inputs)
    if not outputs:
        raise FieldError("outputs", "at least one output is required")
    if entry.return_ignored and not all(spec.inplace for spec in outputs):
        raise FieldError("entry", "its return is ignored, so every output must be an input written in place")
    scalars = vectors.parse_scalars(raw["scalars"])
    _check_unique_names(inputs + tuple(spec for spec in outputs if not spec.inplace), scalars)
    cases = vectors.parse_cases(raw["cases"], {spec.name for spec in inputs})
    vectors.check_dims_defined(cases, inputs + outputs, scalars)
    if category.is_hip:
        _check_int_dims(cases)
    return _Tensors(inputs, outputs, scalars, cases)


def _check_int_dims(cases: tuple[Case, ...]) -> None:
    """A launcher's dims and dim-named scalars are int64_t: no case of a HIP task gives a float."""
    floats = sorted({dim for case in cases for dim, value in case.dims.items() if isinstance(value, float)})
    if floats:
        raise FieldError("cases", f"dim {floats[0]!r} is a float; a float case value is for a Python entry's scalars")


def _abi_and_entry(value: Any, category: Category, entry: Entry, tensors: _Tensors) -> tuple[tuple[str, ...], Entry]:
    """The abi, and the entry with a Python entry's positional parameters in the abi's order."""
    if category.is_hip:
        names = [spec.name for spec in tensors.inputs + tensors.outputs]
        return _abi(value, category, tensors.cases, names, tensors.scalars), entry
    abi = _python_abi(value, tensors.inputs, tensors.scalars)
    return abi, replace(entry, positional=positional_order(abi, tensors.inputs))


def _candidate_folders(
    raw: Mapping[str, Any], task_dir: Path, editable: tuple[str, ...]
) -> tuple[tuple[str, ...], str]:
    """The exemplars' folders and the wrong candidate's folder ("": none), without a trailing '/'."""
    exemplars = require_str_list("exemplars", raw["exemplars"])
    for folder in exemplars:
        paths.check_candidate_folder("exemplars", task_dir, folder, editable)
    wrong = require_str("wrong", raw["wrong"])
    if wrong:
        paths.check_candidate_folder("wrong", task_dir, wrong, editable)
    return tuple(e.rstrip("/") for e in exemplars), wrong.rstrip("/")


def _parse_entry(field: str, value: Any, ignorable: bool = False) -> Entry:
    text = require_str(field, value, empty=False)
    ignored = ignorable and text.endswith(RETURN_IGNORED)
    file, sep, symbol = text.removesuffix(RETURN_IGNORED if ignored else "").rpartition(":")
    if not sep or not file or not symbol.isidentifier():
        shape = "'file:symbol' or 'file:symbol" + RETURN_IGNORED + "'" if ignorable else "'file:symbol'"
        raise FieldError(field, f"{text!r} must be {shape}")
    paths.check_relative_path(field, file)
    return Entry(file=file, symbol=symbol, return_ignored=ignored)


def _entry(value: Any, category: Category, baseline: tuple[str, ...], editable: tuple[str, ...]) -> Entry:
    entry = _parse_entry("entry", value, ignorable=True)
    if entry.return_ignored and category.is_hip:
        raise FieldError("entry", f"a {category.value} launcher returns its error code; its return is never ignored")
    if entry.file not in baseline:
        raise FieldError("entry", f"file {entry.file!r} is not in the baseline")
    if category is not Category.REPOSITORY and not paths.is_allowed(entry.file, editable):
        raise FieldError("entry", f"file {entry.file!r} is not editable")
    if category.is_hip and not entry.file.endswith(HIP_SUFFIXES):
        raise FieldError("entry", f"file {entry.file!r} of a {category.value} task must end in .hip or .cu")
    return entry


def _check_unique_names(tensors: tuple, scalars: Mapping[str, Any]) -> None:
    seen: set[str] = set()
    for name in [spec.name for spec in tensors] + list(scalars):
        if name in seen:
            raise FieldError("outputs" if name not in scalars else "scalars", f"name {name!r} is used twice")
        seen.add(name)


def _abi(
    value: Any, category: Category, cases: tuple[Case, ...], tensors: list[str], scalars: Mapping
) -> tuple[str, ...]:
    names = require_str_list("abi", value)
    if not names:
        raise FieldError("abi", f"a {category.value} task must list its launcher arguments")
    for name in names:
        if name in tensors or name in scalars:
            continue
        missing = [case.name for case in cases if name not in case.dims]
        if missing:
            raise FieldError("abi", f"{name!r} is not an input, output or scalar, nor a dim of case {missing[0]!r}")
    return names


def _python_abi(value: Any, inputs: tuple[TensorSpec, ...], scalars: Mapping[str, Any]) -> tuple[str, ...]:
    """A Python entry's positional parameters, in order (empty: `entry(*inputs, **scalars)`): every
    input once, and any scalars that come before or between them; the other scalars by name."""
    names = require_str_list("abi", value)
    if not names:
        return ()
    inputs_named = [spec.name for spec in inputs]
    for name in names:
        if name not in inputs_named and name not in scalars:
            raise FieldError("abi", f"{name!r} is not an input or a scalar; a Python entry's abi lists those")
    missing = [name for name in inputs_named if name not in names]
    if missing:
        raise FieldError("abi", f"input {missing[0]!r} is not in the abi; it lists every input of a Python entry")
    return names


def _forbidden(value: Any) -> tuple[str, ...]:
    names = require_str_list("forbidden", value)
    for name in names:
        if not all(part.isidentifier() for part in name.split(".")):
            raise FieldError("forbidden", f"{name!r} is not a dotted name")
    return names


def _formula(field: str, value: Any, cases: tuple[Case, ...]) -> str:
    expr = require_str(field, value)
    if not expr.strip():
        return ""
    for case in cases:
        try:
            result = evaluate_formula(expr, case.dims, ELEMENT_SIZES[case.dtype])
        except FormulaError as error:
            raise FieldError(field, f"case {case.name!r}: {error}") from None
        if result < 0:
            raise FieldError(field, f"case {case.name!r}: formula {expr!r} is negative ({result})")
    return expr


def _archs(value: Any) -> tuple[str, ...]:
    archs = require_str_list("archs", value, empty=False)
    for arch in archs:
        if arch_error(arch):
            raise FieldError("archs", arch_error(arch))
    return archs


def _skip(value: str) -> str:
    if value and not value.strip():
        raise FieldError("skip", "give the reason the task is skipped, or leave the field out")
    return value.strip()


def _timeout(value: float | int | None) -> float | None:
    if value is None:
        return None
    seconds = require_number("timeout", value, "seconds")
    if seconds <= 0:
        raise FieldError("timeout", f"seconds must be > 0, got {seconds}")
    return float(seconds)
