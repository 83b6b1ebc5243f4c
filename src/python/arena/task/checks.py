"""Small checks of literal values read from a kernel_task declaration.

Each raises FieldError(field, message); arena.task.declaration adds the BUILD file and target,
so the final message reads "<BUILD>: kernel_task '<name>': field '<field>': <message>".
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping


class FieldError(Exception):
    """One field of a declaration is wrong; `message` says how."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"field '{field}': {message}")
        self.field = field
        self.message = message


def require_str(field: str, value: Any, *, empty: bool = True) -> str:
    if not isinstance(value, str):
        raise FieldError(field, f"expected a string, got {type(value).__name__} {value!r}")
    if not empty and not value.strip():
        raise FieldError(field, "must not be empty")
    return value


def require_identifier(field: str, value: Any, what: str = "name") -> str:
    if not isinstance(value, str) or not value.isidentifier():
        raise FieldError(field, f"{what} {value!r} is not an identifier")
    return value


def require_str_list(field: str, value: Any, *, empty: bool = True) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)):
        raise FieldError(field, f"expected a list of strings, got {type(value).__name__} {value!r}")
    for item in value:
        require_str(field, item, empty=False)
    if not empty and not value:
        raise FieldError(field, "must not be empty")
    if len(set(value)) != len(value):
        raise FieldError(field, f"has duplicates: {sorted(v for v in set(value) if value.count(v) > 1)}")
    return tuple(value)


def require_int(field: str, value: Any, what: str = "value", *, minimum: int | None = None) -> int:
    # bool is an int in Python; True as a seed or budget is a mistake.
    if isinstance(value, bool) or not isinstance(value, int):
        raise FieldError(field, f"{what} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise FieldError(field, f"{what} must be >= {minimum}, got {value}")
    return value


def require_number(field: str, value: Any, what: str = "value") -> float | int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FieldError(field, f"{what} must be a number, got {value!r}")
    if value != value or value in (float("inf"), float("-inf")):
        raise FieldError(field, f"{what} must be finite, got {value!r}")
    return value


def require_bool(field: str, value: Any, what: str = "value") -> bool:
    if not isinstance(value, bool):
        raise FieldError(field, f"{what} must be True or False, got {value!r}")
    return value


def require_dict(field: str, value: Any, what: str = "value") -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise FieldError(field, f"{what} must be a dict, got {type(value).__name__} {value!r}")
    for key in value:
        if not isinstance(key, str):
            raise FieldError(field, f"{what} has a non-string key {key!r}")
    return value


def require_keys(
    field: str, value: Mapping[str, Any], what: str, required: Iterable[str], optional: Iterable[str]
) -> None:
    """`value` has every required key and no key outside required + optional."""
    allowed = set(required) | set(optional)
    missing = [key for key in required if key not in value]
    if missing:
        raise FieldError(field, f"{what} is missing {', '.join(repr(k) for k in missing)}")
    unknown = sorted(set(value) - allowed)
    if unknown:
        names = ", ".join(repr(k) for k in unknown)
        raise FieldError(field, f"{what} has unknown key(s) {names} (allowed: {', '.join(sorted(allowed))})")
