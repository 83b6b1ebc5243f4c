"""arena's field table (arena.task.fields.FIELDS) and the Pants plugin's Field classes must agree.

The plugin cannot import arena and arena must not import Pants, so this test reads the plugin's
source with `ast`, never executing it: each Field class's literal `alias`, `required`, `default`
and `expected_type`, through its base classes, and the fields KernelTaskTarget lists. The
classes stay the plugin's only statement of its grammar; a second copy kept as data would be one
more thing to drift.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, NamedTuple

from arena.task.fields import FIELDS

PLUGIN = Path(__file__).parents[4] / "src/python/pants_plugins/arena_pants/target_types.py"
# Pants' field classes the plugin builds on, by the arena.task.fields.KINDS name of their values.
PANTS_BASE_KINDS = {
    "StringField": "str",
    "DescriptionField": "str",
    "StringSequenceField": "str_list",
    "MultipleSourcesField": "str_list",
    "IntField": "int",
    "FloatField": "number",
}
# The plugin's literal fields name their Python type in `expected_type`.
EXPECTED_TYPE_KINDS = {"list": "list", "dict": "dict"}


class Grammar(NamedTuple):
    kind: str
    required: bool
    default: Any


# Fields Pants gives a target, outside the plugin's source: every target's optional name, and
# the tags the plugin lists.
PANTS_OWN = {"name": Grammar("str", False, None), "tags": Grammar("str_list", False, None)}


def plugin_grammar(source: str) -> dict[str, Grammar]:
    """alias -> Grammar of every field of the kernel_task target declared in `source`."""
    classes = {node.name: node for node in ast.parse(source).body if isinstance(node, ast.ClassDef)}

    def assigned(name: str, attribute: str) -> ast.expr | None:
        """The value `attribute` is given in class `name` or the nearest base declared in `source`."""
        node = classes.get(name)
        if node is None:
            return None
        for statement in node.body:
            if isinstance(statement, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == attribute for t in statement.targets
            ):
                return statement.value
            if (
                isinstance(statement, ast.AnnAssign)
                and isinstance(statement.target, ast.Name)
                and statement.target.id == attribute
            ):
                return statement.value
        for base in node.bases:
            if isinstance(base, ast.Name) and (value := assigned(base.id, attribute)) is not None:
                return value
        return None

    def kind(name: str) -> str:
        if name in PANTS_BASE_KINDS:
            return PANTS_BASE_KINDS[name]
        expected = assigned(name, "expected_type")
        if isinstance(expected, ast.Name):
            return EXPECTED_TYPE_KINDS[expected.id]
        bases = [base.id for base in classes[name].bases if isinstance(base, ast.Name)]
        found = [kind(base) for base in bases if base in classes or base in PANTS_BASE_KINDS]
        assert found, f"{name}: no base class whose kind this test knows ({', '.join(bases)})"
        return found[0]

    def literal(name: str, attribute: str) -> Any:
        value = assigned(name, attribute)
        return None if value is None else ast.literal_eval(value)

    core_fields = assigned("KernelTaskTarget", "core_fields")
    assert isinstance(core_fields, ast.Tuple), "KernelTaskTarget.core_fields must be a literal tuple"
    grammar = {"name": PANTS_OWN["name"]}
    for element in core_fields.elts:
        assert isinstance(element, ast.Name), f"list each field class by name, not {ast.unparse(element)}"
        if element.id == "Tags":
            grammar["tags"] = PANTS_OWN["tags"]
            continue
        assert element.id in classes, f"{element.id} is not a field class of the plugin's module"
        required = bool(literal(element.id, "required"))
        grammar[literal(element.id, "alias")] = Grammar(kind(element.id), required, literal(element.id, "default"))
    return grammar


def arena_grammar() -> dict[str, Grammar]:
    return {name: Grammar(spec.kind, spec.required, spec.default) for name, spec in FIELDS.items()}


def drift(plugin: dict[str, Grammar], arena: dict[str, Grammar]) -> list[str]:
    """How the two grammars differ, one line per difference; [] when they agree."""
    problems = [f"{name}: only in the plugin" for name in sorted(set(plugin) - set(arena))]
    problems += [f"{name}: only in arena" for name in sorted(set(arena) - set(plugin))]
    for name in sorted(set(plugin) & set(arena)):
        ours, theirs = arena[name], plugin[name]
        if (ours.kind, ours.required) != (theirs.kind, theirs.required):
            problems.append(
                f"{name}: arena says {ours.kind}, {'required' if ours.required else 'optional'}; "
                f"the plugin says {theirs.kind}, {'required' if theirs.required else 'optional'}"
            )
        # A default the plugin declares (Pants shows it in `peek`) must be arena's.
        if theirs.default is not None and _plain(theirs.default) != _plain(ours.default):
            problems.append(f"{name}: default {theirs.default!r} in the plugin, {ours.default!r} in arena")
    return problems


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def test_the_plugin_and_arena_declare_the_same_fields() -> None:
    assert drift(plugin_grammar(PLUGIN.read_text(encoding="utf-8")), arena_grammar()) == []


def test_a_drift_is_caught() -> None:
    source = PLUGIN.read_text(encoding="utf-8")
    plugin = plugin_grammar(source)
    assert plugin["signature"] == Grammar("str", True, None)
    assert plugin["timeout"] == Grammar("number", False, None)
    assert plugin["cases"] == Grammar("list", True, None)
    loosened = source.replace('alias = "signature"\n    required = True\n', 'alias = "signature"\n')
    assert drift(plugin_grammar(loosened), arena_grammar()) == [
        "signature: arena says str, required; the plugin says str, optional"
    ]
    renamed = source.replace('alias = "timeout"', 'alias = "timeout_s"')
    assert drift(plugin_grammar(renamed), arena_grammar()) == [
        "timeout_s: only in the plugin",
        "timeout: only in arena",
    ]
