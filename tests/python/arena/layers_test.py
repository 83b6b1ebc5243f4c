"""The one-way flow on the sources: every import (module-level or inside a function) goes to the
importer's own package or to one before it in src/python/arena/BUILD's LAYERS, so no package
cycle can form; and no module reaches into another package's private names.

Pants refuses a violation too (the BUILD file's dependency rules); this test names the line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import arena

ARENA = Path(arena.__file__).resolve().parent
BUILD = Path("src/python/arena/BUILD")  # in the test's sandbox, as the `layers` file target


def _layers() -> list[list[str]]:
    """LAYERS as the BUILD file writes it (one source of truth for Pants and this test)."""
    for node in ast.parse(BUILD.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "LAYERS":
            return ast.literal_eval(node.value)  # type: ignore[no-any-return]
    raise AssertionError(f"{BUILD} defines no LAYERS")


def _package(module: str, root: Path = ARENA) -> str:
    """arena.harness.launch -> harness; arena.errors -> errors.py; arena.v1.x -> v1."""
    parts = module.split(".")
    if len(parts) < 2:
        return "__init__.py"
    return parts[1] if (root / parts[1]).is_dir() or parts[1] == "v1" else f"{parts[1]}.py"


def _imports(path: Path) -> list[tuple[int, str, tuple[str, ...]]]:
    """(line, module, imported names) for every arena import in `path`, nested ones included."""
    found: list[tuple[int, str, tuple[str, ...]]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, ()) for alias in node.names if alias.name.startswith("arena.")]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("arena"):
            found.append((node.lineno, str(node.module), tuple(alias.name for alias in node.names)))
    return found


def _rank() -> dict[str, int]:
    rank = {name: index for index, layer in enumerate(_layers()) for name in layer}
    rank["v1"] = 0  # generated from proto/: imports nothing of ours
    return rank


def violations(root: Path = ARENA) -> tuple[list[str], list[str]]:
    """(imports against the flow, imports of another package's private names) under `root`."""
    rank = _rank()
    upward, private = [], []
    for path in sorted(root.rglob("*.py")):
        here = _package("arena." + ".".join(path.relative_to(root).with_suffix("").parts), root)
        for line, module, names in _imports(path):
            there = _package(module, root)
            where = f"{path.relative_to(root.parent)}:{line}"
            if rank.get(there, len(rank)) > rank.get(here, -1):
                upward.append(f"{where} ({here}) imports {module} ({there})")
            hidden = [name for name in names if name.startswith("_")]
            if hidden and there != here:
                private.append(f"{where} imports {module}.{', '.join(hidden)}")
    return upward, private


def test_every_package_has_a_layer() -> None:
    rank = _rank()
    packages = {p.name for p in ARENA.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.name for p in ARENA.glob("*.py")}
    assert sorted((packages | modules) - set(rank)) == []


def test_no_import_runs_against_the_flow_or_reaches_private_names() -> None:
    assert violations() == ([], [])


def test_the_check_sees_planted_violations(tmp_path: Path) -> None:
    # A tree shaped like the package, with one upward import inside a function and one private one.
    for package in ("task", "cli", "harness"):
        (tmp_path / "arena" / package).mkdir(parents=True)
        (tmp_path / "arena" / package / "__init__.py").write_text("")
    (tmp_path / "arena" / "task" / "load.py").write_text("def f():\n    from arena.cli.main import main\n")
    (tmp_path / "arena" / "cli" / "main.py").write_text("from arena.harness.launch import _kill_group\n")
    upward, private = violations(tmp_path / "arena")
    assert upward == ["arena/task/load.py:2 (task) imports arena.cli.main (cli)"]
    assert private == ["arena/cli/main.py:1 imports arena.harness.launch._kill_group"]
