"""A baseline arena refuses when it runs, refused when it is read (arena.importer.state): the
fixture's fake_append kernel edited to keep an output buffer or a cache at the top level of its
file (geak `llama_ff_triton`, `fused_append_shared_experts`), and fake_scale edited to return the
argument it writes (vllm `triton_get_num_sampled_and_rejected`); a top-level constant it only
reads is no state."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.importer.importer import import_checkout
from arena.importer.state import RETURNED_INPUT, STATEFUL
from arena_testing.aka_refusal import refusal

APPEND_TASK = "triton2triton/geak_eval/L1/fake_append"
KERNEL = Path("tasks") / APPEND_TASK / "kernel.py"
HEAD = "def append_columns(ids: torch.Tensor, weights: torch.Tensor, extra: int, fill: float, first: int = 0):\n"
EMPTY = "    out_ids = torch.empty((rows, width + extra), dtype=ids.dtype, device=ids.device)\n"


def _edit(checkout: Path, old: str, new: str, file: Path = KERNEL) -> None:
    text = (checkout / file).read_text()
    assert old in text
    (checkout / file).write_text(text.replace(old, new))


def _reason(checkout: Path, name: str = APPEND_TASK) -> str:
    return refusal(checkout, name)


def test_an_output_buffer_cached_in_a_top_level_dict_by_a_helper_is_refused(checkout: Path) -> None:
    """llama_ff_triton's shape: `_out_cache.get(key)`, else a new buffer stored there, in a function
    of the kernel file the entry calls."""
    helper = (
        "_out_cache = {}\n\n\n"
        "def _buffer(rows, cols, like):\n"
        "    out = _out_cache.get((rows, cols))\n"
        "    if out is None:\n"
        "        out = torch.empty((rows, cols), dtype=like.dtype, device=like.device)\n"
        "        _out_cache[(rows, cols)] = out\n"
        "    return out\n\n\n"
    )
    _edit(checkout, HEAD, helper + HEAD)
    _edit(checkout, EMPTY, "    out_ids = _buffer(rows, width + extra, ids)\n")
    reason = _reason(checkout)
    assert reason.startswith(STATEFUL)
    assert "_buffer() uses the top-level '_out_cache'" in reason


def test_an_entry_with_a_global_statement_is_refused(checkout: Path) -> None:
    """fused_append_shared_experts' shape: `global _buf`, rebound when the shape changes."""
    _edit(checkout, HEAD, "_buf = None\n\n\n" + HEAD + "    global _buf\n")
    assert _reason(checkout) == f"{STATEFUL}: append_columns() declares `global _buf`"


def test_a_top_level_tensor_the_entry_reads_is_refused(checkout: Path) -> None:
    _edit(checkout, HEAD, "_SCRATCH = torch.empty(0)\n\n\n" + HEAD + "    _ = _SCRATCH\n")
    assert _reason(checkout).startswith(f"{STATEFUL}: append_columns() uses the top-level '_SCRATCH'")


def test_a_top_level_constant_the_entry_only_reads_is_no_state(checkout: Path, tmp_path: Path) -> None:
    _edit(checkout, HEAD, "_SHIFT = [0]\n\n\n" + HEAD + "    first = first + _SHIFT[0]\n")
    outcomes = {o.source: o for o in import_checkout(checkout, tmp_path / "out")}
    assert outcomes[APPEND_TASK].address is not None


SCALE_TASK = "triton2triton/vllm/fake_scale"
SCALE_KERNEL = Path("tasks") / SCALE_TASK / "source" / "fake_scale.py"


@pytest.mark.parametrize("returned", ["x[:]", "x.view(-1).view_as(x)"])
def test_a_kernel_that_returns_a_view_of_its_argument_written_in_place_is_refused(
    checkout: Path, returned: str
) -> None:
    """vllm `triton_gather_block_tables` writes `dst` and returns `dst[:n]`: the harness refuses an
    output whose storage is an input's, so the task is not imported."""
    _edit(checkout, "    out = torch.empty_like(x)\n    out.copy_(", "    x.copy_(", SCALE_KERNEL)
    _edit(checkout, "    return out\n", f"    return {returned}\n", SCALE_KERNEL)
    reason = _reason(checkout, SCALE_TASK)
    assert reason.startswith(f"{RETURNED_INPUT} 'x' (written in place) as its output 0 (line ")


def test_a_kernel_that_returns_its_argument_is_read_as_writing_it(checkout: Path) -> None:
    """`return x` itself: read as x written in place (arena.importer.returned_argument); this
    test's reference then reads x after the kernel wrote it, which stops it."""
    _edit(checkout, "    out = torch.empty_like(x)\n    out.copy_(", "    x.copy_(", SCALE_KERNEL)
    _edit(checkout, "    return out\n", "    return x\n", SCALE_KERNEL)
    assert _reason(checkout, SCALE_TASK).endswith("the reference reads 'x' after the kernel wrote into it")
