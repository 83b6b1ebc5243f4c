"""`import_checkout`: every triton2triton task of an AgentKernelArena checkout, imported or not,
with the reason, and its hip2hip and torch2hip tasks, each with the reason none is imported
(arena.importer.hip_layout). Reading one task never runs its code: config.yaml is read as data, the task
runner and the kernel file as `ast` (arena.importer.interpreter follows them on shapes)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.importer.amd_options import AMD_ARCHS, amd_only_options
from arena.importer.autograd_apply import (
    apply_aliases,
    refuse_gradients,
    refuse_unreadable_forward,
    with_apply_functions,
)
from arena.importer.checkout import SourceTask, find_tasks, inside
from arena.importer.config import TaskConfig, read_config, runner_path
from arena.importer.correctness import TestLoop, read_test_loop
from arena.importer.declaration import CATEGORY, build_file_text, declare
from arena.importer.fields import TaskFields
from arena.importer.fit import Fit, fit_tolerances, loosened
from arena.importer.follow import FollowedCase, follow_cases
from arena.importer.harness import harness_path, read_harness_loop
from arena.importer.hip_layout import HIP_CATEGORIES, refuse_hip_task
from arena.importer.interpreter import Interpreter, module_scope
from arena.importer.outcome import LayoutNotRead, NotImportable, Outcome
from arena.importer.output import prepare_output, write_task
from arena.importer.pytest_layout import pytest_file, read_pytest_loop
from arena.importer.reference_source import RunnerSource, reference_function, write_reference
from arena.importer.returned_argument import as_picked_outputs, as_written_in_place
from arena.importer.scalar_arguments import as_separate_scalars
from arena.importer.state import refuse_returned_arguments, refuse_stateful
from arena.importer.task_fields import read_task_fields
from arena.importer.values import SourceModule

REFERENCE_FILE = "reference.py"
_STUB = re.compile(r'\s*"""Generated at workspace setup from (\S+?)\.?\s')


@dataclass(frozen=True)
class ImportedTask:
    """The files of one imported task, by path relative to its folder."""

    source: str  # the task's name in the checkout; also its folder under the output's tasks/
    name: str  # the kernel_task's name
    files: dict[str, bytes]  # BUILD, the kernel file (copied), reference.py (written)
    declared: dict[str, Any] = field(default_factory=dict)  # the kernel_task's fields, as BUILD has them


def import_checkout(checkout: Path, out: Path, fit: bool = False) -> list[Outcome]:
    """Import every triton2triton task of `checkout` into `out` (see arena.importer.output). With
    `fit`, a loosened float tolerance that accepts the lower-precision reference is fitted
    (arena.importer.fit: each task's reference run in a child process; the command does this)."""
    tasks = find_tasks(checkout)
    prepare_output(out)
    outcomes, loose = [], {}
    for task in tasks:
        try:
            imported = read_task(task, checkout)
            address = write_task(out, imported.source, imported.files)
        except NotImportable as error:
            outcomes.append(Outcome(task.name, reason=str(error), kind=error.kind))
            continue
        outcomes.append(Outcome(task.name, address=address, archs=tuple(imported.declared.get("archs", ()))))
        if fit and loosened(imported.declared.get("tolerances", {})):
            loose[address] = imported
    if not loose:
        return outcomes
    fits = fit_tolerances(out, {address: loosened(task.declared["tolerances"]) for address, task in loose.items()})
    return [
        _refitted(out, outcome, loose[outcome.address], fits[outcome.address]) if outcome.address in loose else outcome
        for outcome in outcomes
    ]


def _refitted(out: Path, outcome: Outcome, imported: ImportedTask, fits: list[Fit]) -> Outcome:
    """The task's BUILD written again with its fitted tolerances (a comment above them says so)."""
    fitted = [fit for fit in fits if fit.fitted is not None]
    if fitted:
        tolerances = dict(imported.declared["tolerances"])
        tolerances.update({fit.dtype: fit.to_dict()["to"] for fit in fitted})
        declared = {**imported.declared, "tolerances": tolerances}
        text = build_file_text(declared, imported.source, [fit.comment() for fit in fitted])
        try:
            write_task(out, imported.source, {"BUILD": text.encode()})
        except NotImportable as error:
            return Outcome(outcome.source, reason=f"{error} (after its tolerance was fitted)", kind=error.kind)
    return Outcome(outcome.source, address=outcome.address, tolerances=tuple(fits), archs=outcome.archs)


def read_task(task: SourceTask, checkout: Path) -> ImportedTask:
    """One task's files; NotImportable with the reason when it cannot be imported."""
    read = _read_layout(task, checkout)
    loop, kernel_tree = read.loop, read.kernel_tree
    function = next(
        (n for n in kernel_tree.body if isinstance(n, ast.FunctionDef) and n.name == loop.function_name), None
    )
    if function is None:
        raise LayoutNotRead(f"the test calls {loop.function_name}(), which {read.kernel_file} does not define")
    refuse_unreadable_forward(read.source_tree, loop.function_name)
    refuse_gradients(list(loop.statements), "the test")
    refuse_stateful(kernel_tree, function)
    loop, function, kernel_tree = _adapted(loop, function, read.kernel_file, kernel_tree, read.runner_tree)
    cases = follow_cases(
        loop,
        module_scope(read.runner_tree, Interpreter()),
        SourceModule(read.kernel_file, module_scope(kernel_tree, Interpreter())),
    )
    fields = read_task_fields(loop, cases, function, positional=function.name in apply_aliases(read.source_tree))
    if not fields.return_ignored:
        refuse_returned_arguments(function, _tensor_parameters(function, fields))
    return _imported(task, checkout, read, loop, kernel_tree, cases, fields)


@dataclass(frozen=True)
class _Layout:
    """What a task's layout gives: its test (the runner, a geak_eval harness or a pytest file), its
    kernel file as written and as read (`f = Cls.apply` read as its forward; the test's launch, made
    a function, appended), and the test loop read from them."""

    config: TaskConfig
    runner_file: str
    runner_text: str
    runner_tree: ast.Module
    kernel_file: str
    kernel_text: str
    source_tree: ast.Module
    kernel_tree: ast.Module
    loop: TestLoop


def _read_layout(task: SourceTask, checkout: Path) -> _Layout:
    config = read_config(task.folder)
    if config.task_type in HIP_CATEGORIES:
        refuse_hip_task(task, checkout, config)
    if config.task_type != CATEGORY:
        raise LayoutNotRead(f"task_type is {config.task_type!r}, not {CATEGORY!r}")
    harness_file = harness_path(config)
    pytest = pytest_file(config) if harness_file is None else None
    runner_file = harness_file or (pytest[0] if pytest else runner_path(config))
    runner_text, runner_tree = _read_python(checkout, task.folder, runner_file)
    if harness_file is None and pytest is None:
        loop = read_test_loop(runner_tree, runner_file)
    if len(config.source_files) != 1:
        raise LayoutNotRead(f"source_file_path lists {len(config.source_files)} files; the importer reads one")
    kernel_file = config.source_files[0]
    kernel_text, kernel_tree = _read_python(checkout, task.folder, kernel_file)
    source_tree, kernel_tree = kernel_tree, with_apply_functions(kernel_tree)  # `f = Cls.apply`: forward
    if harness_file is not None:  # the geak_eval layout (arena.importer.harness)
        loop = read_harness_loop(runner_tree, runner_file, kernel_tree)
    elif pytest is not None:  # the rocmbench layout (arena.importer.pytest_layout)
        if kernel_file != runner_file:
            raise LayoutNotRead(f"the pytest file {runner_file} is not the kernel file {kernel_file}")
        loop = read_pytest_loop(kernel_tree, runner_file, pytest[1])
    if loop.adapter is not None:  # the test's launch, made a function beside the kernel file
        kernel_tree = ast.Module(body=[*kernel_tree.body, loop.adapter.function], type_ignores=[])
    return _Layout(
        config, runner_file, runner_text, runner_tree, kernel_file, kernel_text, source_tree, kernel_tree, loop
    )


def _adapted(
    loop: TestLoop, function: ast.FunctionDef, kernel_file: str, kernel_tree: ast.Module, runner_tree: ast.Module
) -> tuple[TestLoop, ast.FunctionDef, ast.Module]:
    """The loop, the task's entry and the kernel file's tree once the functions appended to the
    kernel file's copy are in: the elements the test keeps, outputs written in place, lists, dtypes,
    choices and optional tensors given as arena's inputs and scalars."""
    if loop.picked:  # `out, _, _ = mod.fn(...)`: fn_outputs returns what the test keeps
        loop = as_picked_outputs(loop, loop.picked, function, kernel_file, kernel_tree)
        assert loop.adapter is not None
        kernel_tree = ast.Module(body=[*kernel_tree.body, loop.adapter.function], type_ignores=[])
        function = loop.adapter.function
    loop = as_written_in_place(loop, function, kernel_file, kernel_tree)  # `out = fn(z)` returning z: z in place
    followed = _followed_arguments(loop, runner_tree, kernel_file, kernel_tree)  # each argument, each case
    loop = as_separate_scalars(loop, function, kernel_file, kernel_tree, followed)  # `fn(x, [a, b], dtype=...)`
    if loop.adapter is not None and loop.adapter.function not in kernel_tree.body:  # appended: the entry
        kernel_tree = ast.Module(body=[*kernel_tree.body, loop.adapter.function], type_ignores=[])
        function = loop.adapter.function
    return loop, function, kernel_tree


def _imported(
    task: SourceTask,
    checkout: Path,
    read: _Layout,
    loop: TestLoop,
    kernel_tree: ast.Module,
    cases: list[FollowedCase],
    fields: TaskFields,
) -> ImportedTask:
    """The task's files: its BUILD, the kernel file's copy (with what is appended), the reference
    written from the test, and the checkout's modules the kernel file imports."""
    kernel_file, kernel_text = read.kernel_file, read.kernel_text
    reference_file = REFERENCE_FILE if kernel_file != REFERENCE_FILE else f"aka_{REFERENCE_FILE}"
    runner = RunnerSource(read.runner_text, read.runner_tree, f"{task.name}/{read.runner_file}")
    reference_text = write_reference(runner, loop, cases, fields)
    name = task.folder.name
    modules = _local_modules(checkout, task.folder, kernel_file, kernel_tree)
    launch_file = loop.adapter.file if loop.adapter is not None and loop.adapter.file != kernel_file else None
    declared = declare(
        name,
        task.name,
        kernel_file,
        reference_file,
        read.config.instructions,
        fields,
        sorted(modules),
        reference_function(read.runner_tree),
        launch_file,
        AMD_ARCHS if amd_only_options(kernel_tree) else None,
    )
    if loop.adapter is not None and launch_file is not None:
        modules[loop.adapter.file] = loop.adapter.text.encode()
    elif loop.adapter is not None:  # appended to the kernel file's copy (arena.importer.returned_argument)
        kernel_text = kernel_text.rstrip("\n") + "\n" + loop.adapter.text
    return ImportedTask(
        source=task.name,
        name=name,
        declared=declared,
        files={
            "BUILD": build_file_text(declared, task.name).encode(),
            kernel_file: kernel_text.encode(),
            reference_file: reference_text.encode(),
            **modules,
        },
    )


def _followed_arguments(
    loop: TestLoop, runner_tree: ast.Module, kernel_file: str, kernel_tree: ast.Module
) -> list[list[Any]] | None:
    """Each argument of the kernel call (its positional ones, then its keywords) in each case, the
    loop followed as it is; None where it cannot be followed (the reading after says why)."""
    if loop.adapter is not None and loop.adapter.file != kernel_file:  # a launch the test makes itself
        return None
    try:
        cases = follow_cases(
            loop,
            module_scope(runner_tree, Interpreter()),
            SourceModule(kernel_file, module_scope(kernel_tree, Interpreter())),
        )
    except NotImportable:
        return None
    call = loop.kernel_call
    positional = [[case.arguments[i] for case in cases] for i in range(len(call.args))]
    return positional + [[case.keywords.get(k.arg or "**") for case in cases] for k in call.keywords]


def _tensor_parameters(function: ast.FunctionDef, fields: TaskFields) -> list[str]:
    """The entry's parameters the test gives tensors: the first ones, or the abi's input names."""
    params = [a.arg for a in function.args.posonlyargs + function.args.args]
    if not fields.abi:
        return params[: len(fields.inputs)]
    names = {field.name for field in fields.inputs}
    return [params[i] for i, name in enumerate(fields.abi) if name in names and i < len(params)]


def _local_modules(checkout: Path, folder: Path, kernel_file: str, tree: ast.Module) -> dict[str, bytes]:
    """The modules beside the kernel file that it imports at its top level (`from helpers import
    f`), copied beside it. A stub AKA replaces when it sets a run up (its docstring says
    "Generated at workspace setup from <path>") is the file at that path of the checkout."""
    names = {alias.name for node in tree.body if isinstance(node, ast.Import) for alias in node.names}
    names |= {node.module for node in tree.body if isinstance(node, ast.ImportFrom) and node.module and not node.level}
    beside = Path(kernel_file).parent
    modules: dict[str, bytes] = {}
    for name in sorted(names):
        relative = (beside / f"{name}.py").as_posix()
        path = folder / relative
        if "." in name or not path.is_file() or not inside(checkout, path) or relative == kernel_file:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        match = _STUB.match(text)
        if match is not None:
            path = checkout.resolve() / match.group(1)
            if not (path.is_file() and inside(checkout, path)):
                raise LayoutNotRead(f"{relative} is a stub generated from {match.group(1)}, which the checkout lacks")
        modules[relative] = path.read_bytes()
    return modules


def _read_python(checkout: Path, folder: Path, relative: str) -> tuple[str, ast.Module]:
    path = folder / relative
    if ".." in Path(relative).parts or not inside(checkout, path) or not path.is_file():
        raise LayoutNotRead(f"{relative} is not a file inside the task folder")
    try:
        text = path.read_text(encoding="utf-8")
        return text, ast.parse(text, filename=relative)
    except (OSError, UnicodeDecodeError) as error:
        raise LayoutNotRead(f"{relative} cannot be read: {error}") from None
    except (SyntaxError, ValueError, RecursionError) as error:
        raise LayoutNotRead(f"{relative} does not parse: {error}") from None
