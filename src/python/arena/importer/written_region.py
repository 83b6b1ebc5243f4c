"""The part of an argument written in place that a test compares: `out.cpu()[:n]` with `ref[:n]`
(vLLM's `triton_prepare_prefill_inputs`, whose kernel writes the first `num_reqs` rows of a
buffer of `num_reqs + 16`; `triton_prepare_eagle_docode`, `input_ids[:nr]` of a buffer padded to
`max_num_reqs`).

Arena compares every output whole. Such an argument is still an output written in place, and the
whole of it is compared: the reference writes what the test compares it with into that part
(`out[:n] = ref[:n]`) and leaves the rest of it as the entry was given it, so the kernel must leave
the rest unchanged as well, which is what arena asks of every input it does not declare written.
That checks more than the test (the elements outside the slice, which the test never reads), never
less. Only a slice (`:n`, `a:b`, `:, :n`, steps none) of a name the kernel is given and writes: an
index that drops an axis, a mask (`out[finite]`) or a slice of an output the kernel returns (whose
other elements nothing defines: `torch.empty`) is not read here.
"""

from __future__ import annotations

import ast
from typing import Callable


def written_region(
    node: ast.expr, written: tuple[str, ...], strip: Callable[[ast.expr], tuple[ast.expr, bool]]
) -> tuple[str, ast.expr, bool] | None:
    """(the argument, the slice, whether it is cast) where `node` is `arg[slice]`, moved or cast
    before or after the slice (`strip` removes those), `arg` one of `written`; else None."""
    part, cast_after = strip(node)
    if not isinstance(part, ast.Subscript) or not _plain_slice(part.slice):
        return None
    base, cast_before = strip(part.value)
    if not (isinstance(base, ast.Name) and base.id in written):
        return None
    return base.id, part.slice, cast_after or cast_before


def _plain_slice(index: ast.expr) -> bool:
    """`:n`, `a:b`, `:, :n`: slices without a step, each axis one, nothing else."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return all(isinstance(p, ast.Slice) and p.step is None for p in parts)
