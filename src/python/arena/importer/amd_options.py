"""Launch options that only Triton's AMD backend knows (`waves_per_eu`, `matrix_instr_nonkdim`,
`kpack`): Triton for CUDA refuses them at the launch ("Keyword argument waves_per_eu was specified
but unrecognised"). A kernel file that sets one, as a key of a dict (a `triton.Config`'s) or a
keyword of a call, and never asks which backend runs it (an `is_hip()` of its own, `.backend`,
`torch.version.hip`) is a task for AMD GPUs only: its declaration names gfx942 alone
(task/archs.py), so a CUDA GPU reports NEEDS_DEVICE instead of failing its baseline."""

from __future__ import annotations

import ast

AMD_ONLY = ("waves_per_eu", "matrix_instr_nonkdim", "kpack")
AMD_ARCHS = ["gfx942"]  # the reference platform's (MI300X)


def amd_only_options(tree: ast.Module) -> list[str]:
    """The AMD-only options `tree` sets, sorted, when nothing in it asks which backend runs; []
    when it sets none or chooses by backend (the CUDA branch may then be the one taken)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if _asks_backend(node):
            return []
        if isinstance(node, ast.Dict):
            found.update(key.value for key in node.keys if isinstance(key, ast.Constant) and key.value in AMD_ONLY)
        elif isinstance(node, ast.keyword) and node.arg in AMD_ONLY:
            found.add(node.arg)
    return sorted(found)


def _asks_backend(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute):  # get_current_target().backend, torch.version.hip
        return node.attr in ("backend", "hip", "get_current_target")
    if isinstance(node, ast.Name):  # is_hip(), is_cuda() (a function; a tensor's .is_cuda is an attribute)
        return node.id.startswith(("is_hip", "is_cuda"))
    return isinstance(node, ast.FunctionDef) and node.name.startswith(("is_hip", "is_cuda"))
