"""The grammar of a kernel_task declaration: every field, whether it is required, and its type.

This table is arena's half of the one grammar; the Pants plugin's Field classes
(src/python/pants_plugins/arena_pants/target_types.py) are the other, and
tests/python/arena/task/fields_test.py fails when the two disagree. check_form enforces the
table (the same form the plugin enforces when Pants parses BUILD files); what the values mean
is checked afterwards, by arena.task.declaration.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from arena.task.checks import FieldError


def _is_str_list(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value)


# kind -> (how messages name it, test). bool is an int in Python; it is never a count or seconds.
KINDS: Mapping[str, tuple[str, Callable[[Any], bool]]] = {
    "str": ("a string", lambda value: isinstance(value, str)),
    "str_list": ("a list of strings", _is_str_list),
    "int": ("an integer", lambda value: isinstance(value, int) and not isinstance(value, bool)),
    "number": ("a number", lambda value: isinstance(value, (int, float)) and not isinstance(value, bool)),
    "list": ("a list", lambda value: isinstance(value, (list, tuple))),
    "dict": ("a dict", lambda value: isinstance(value, dict)),
}


@dataclass(frozen=True)
class FieldSpec:
    kind: str  # a key of KINDS
    required: bool = False
    default: Any = None  # the value of an optional field left out (or given as None, as in Pants)


FIELDS: Mapping[str, FieldSpec] = {
    "name": FieldSpec("str"),  # None: the task folder's name, as Pants names an unnamed target
    "category": FieldSpec("str", required=True),
    "description": FieldSpec("str", required=True),
    "baseline": FieldSpec("str_list", required=True),
    "editable": FieldSpec("str_list"),  # None: the baseline files
    "entry": FieldSpec("str", required=True),
    "signature": FieldSpec("str", required=True),
    "reference": FieldSpec("str", default="baseline"),
    "sources": FieldSpec("str_list", default=()),
    "inputs": FieldSpec("list", default=()),
    "outputs": FieldSpec("list", required=True),
    "scalars": FieldSpec("dict", default={}),
    "abi": FieldSpec("str_list", default=()),
    "cases": FieldSpec("list", required=True),
    "tolerances": FieldSpec("dict", default={}),
    "forbidden": FieldSpec("str_list", default=()),
    "flops": FieldSpec("str", default=""),
    "bytes": FieldSpec("str", default=""),
    "exemplars": FieldSpec("str_list", default=()),
    "wrong": FieldSpec("str", default=""),
    "budget_seconds": FieldSpec("int", default=3600),
    "iterations": FieldSpec("int", default=3),
    "archs": FieldSpec("str_list", default=("sm_90", "gfx942")),
    "build": FieldSpec("str", default=""),
    "bench": FieldSpec("str", default=""),
    "skip": FieldSpec("str", default=""),  # a reason: suites leave the task out and print it
    "timeout": FieldSpec("number"),  # None: the harness's default timeout
    # Pants-only fields (every target's tags; the plugin's file globs): no meaning to arena.
    "tags": FieldSpec("str_list", default=()),
    "task_files": FieldSpec("str_list", default=("**/*", "!BUILD")),
}
assert all(spec.kind in KINDS for spec in FIELDS.values())


def check_form(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Every field of FIELDS, from `kwargs` or its default, after checking the form: required
    fields present, no unknown field, each value of its field's kind."""
    for name, spec in FIELDS.items():
        if spec.required and kwargs.get(name) is None:
            raise FieldError(name, "is required")
    unknown = sorted(set(kwargs) - set(FIELDS))
    if unknown:
        raise FieldError(unknown[0], "is not a kernel_task field")
    values: dict[str, Any] = {}
    for name, spec in FIELDS.items():
        value = kwargs.get(name)
        if value is None:
            values[name] = copy.deepcopy(spec.default)
            continue
        described, is_kind = KINDS[spec.kind]
        if not is_kind(value):
            raise FieldError(name, f"expected {described}, got {type(value).__name__} {value!r}")
        values[name] = value
    return values
