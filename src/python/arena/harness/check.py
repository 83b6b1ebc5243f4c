"""Correctness: exact output types, values within the task's tolerance, untouched inputs.

All comparisons run on the device as tensor ops, so the per-call validation in the timed
loop can be enqueued without a host sync. A float output element passes when
|got - want| <= atol + rtol * |want|; NaN only where the reference is NaN; an infinity only
where the reference holds the same infinity. Integer and bool outputs must match exactly.
"""

from __future__ import annotations

from typing import Callable, Collection, Sequence

import torch

from arena.task.task import Task, Tolerance

# Outputs are filled with this before a call so a kernel that leaves elements unwritten fails.
POISON_BYTE = 0x5A


def poison_(tensor: torch.Tensor) -> None:
    if tensor.is_floating_point():
        tensor.fill_(float("nan"))
    else:
        tensor.reshape(-1).view(torch.uint8).fill_(POISON_BYTE)


def split_outputs(result: object, count: int) -> tuple[object, ...] | str:
    """The entry's return value as `count` outputs, or an error saying what came back."""
    if count == 0 and result is None:  # every output is an input written in place
        return ()
    if count == 1 and not isinstance(result, (tuple, list)):
        return (result,)
    if isinstance(result, (tuple, list)) and len(result) == count:
        return tuple(result)
    return f"the entry returned {type(result).__name__}; expected {count} output tensor(s)"


def returned_outputs(task: Task, result: object) -> tuple[object, ...] | str:
    """What a Python entry's call `result` holds of the outputs it makes (`made_outputs`, in order),
    or an error: nothing where the task declares the entry's return ignored (every output is then
    an input it writes in place). Every path that calls an entry reads its return through this."""
    if task.entry.return_ignored:
        return ()
    return split_outputs(result, len(made_outputs(task)))


def written_inputs(task: Task) -> dict[int, int]:
    """Output index -> input index, for each output that is an input the kernel writes in place."""
    names = [spec.name for spec in task.inputs]
    return {index: names.index(spec.name) for index, spec in enumerate(task.outputs) if spec.inplace}


def made_outputs(task: Task) -> list[int]:
    """The outputs a call makes: a Python entry returns them, a HIP launcher gets them allocated."""
    return [index for index, spec in enumerate(task.outputs) if not spec.inplace]


def with_written(task: Task, made: Sequence[object], inputs: Sequence[object]) -> tuple[object, ...]:
    """Every output in declared order: the ones the call made (`made`, in order) and the inputs
    it wrote in place, as it left them."""
    written, rest = written_inputs(task), iter(made)
    return tuple(inputs[written[index]] if index in written else next(rest) for index in range(len(task.outputs)))


def called_outputs(
    task: Task, function: Callable[..., object], inputs: Sequence[torch.Tensor], scalars: dict
) -> tuple[object, ...] | str:
    """A Python function (a reference, a Python entry) called as the harness calls an entry, on
    copies of `inputs`: every output in declared order, or an error saying what came back."""
    working = [x.clone() for x in inputs]
    got = split_outputs(function(*working, **scalars), len(made_outputs(task)))
    return got if isinstance(got, str) else with_written(task, got, working)


def check_output_type(name: str, got: object, want: torch.Tensor) -> str | None:
    """An error unless `got` is a plain, contiguous torch.Tensor shaped and placed like `want`."""
    if type(got) is not torch.Tensor:  # subclasses and proxies could defer work past the timer
        return f"output {name}: got {type(got).__module__}.{type(got).__name__}, expected a plain torch.Tensor"
    if got.layout != torch.strided or not got.is_contiguous():
        return f"output {name}: not a contiguous strided tensor"
    if got.dtype != want.dtype:
        return f"output {name}: dtype {got.dtype}, expected {want.dtype}"
    if tuple(got.shape) != tuple(want.shape):
        return f"output {name}: shape {tuple(got.shape)}, expected {tuple(want.shape)}"
    if got.device != want.device:
        return f"output {name}: on {got.device}, expected {want.device}"
    return None


def _span(tensor: torch.Tensor) -> tuple[torch.device, int, int]:
    storage = tensor.untyped_storage()
    return tensor.device, storage.data_ptr(), storage.data_ptr() + storage.nbytes()


def shares_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    """True when the two tensors' storages overlap (one is the other, a view of it, or a slice)."""
    (da, lo_a, hi_a), (db, lo_b, hi_b) = _span(a), _span(b)
    return da == db and lo_a < hi_b and lo_b < hi_a


def stale_output(
    name: str, got: torch.Tensor, inputs: Sequence[torch.Tensor], earlier: Sequence[torch.Tensor]
) -> str | None:
    """An error when an output is not new memory: an input's storage (or a view of it), or the
    storage of an output an earlier call returned and the harness still holds. A computed answer
    is written into fresh memory each call; a stored one comes back in the same place."""
    for index, tensor in enumerate(inputs):
        if shares_storage(got, tensor):
            return f"output {name}: its storage is input {index}'s; each call must return new output tensors"
    if any(shares_storage(got, tensor) for tensor in earlier):
        return f"output {name}: the storage of an earlier call's output, returned again (a stored answer)"
    return None


def mismatch_mask(got: torch.Tensor, want: torch.Tensor, tol: Tolerance) -> torch.Tensor:
    """True where `got` fails against `want` (same shape and dtype already checked)."""
    if not want.is_floating_point():
        return got != want
    g, w = got.double(), want.double()
    close = (g - w).abs() <= tol.atol + tol.rtol * w.abs()  # False wherever g is NaN or inf
    nan_ok = torch.isnan(w) & torch.isnan(g)
    inf_ok = torch.isinf(w) & (g == w)
    return ~((torch.isfinite(w) & close) | nan_ok | inf_ok)


def find_mismatch(name: str, got: torch.Tensor, want: torch.Tensor, tol: Tolerance) -> str | None:
    """None when every element passes; else how many fail and the first: index, got, want."""
    mask = mismatch_mask(got, want, tol)
    count = int(mask.sum())
    if count == 0:
        return None
    flat = int(mask.flatten().nonzero()[0])
    index = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), tuple(want.shape)))
    return (
        f"output {name}: {count} of {want.numel()} elements differ; first at {list(index)}: "
        f"got {got.flatten()[flat].item()!r}, want {want.flatten()[flat].item()!r} "
        f"(atol {tol.atol:g}, rtol {tol.rtol:g})"
    )


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bitwise equality (NaN payloads included), for determinism and untouched inputs."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(torch.equal(a.reshape(-1).view(torch.uint8), b.reshape(-1).view(torch.uint8)))


def changed_inputs(
    names: Sequence[str],
    working: Sequence[torch.Tensor],
    pristine: Sequence[torch.Tensor],
    writable: Collection[str] = (),
) -> str | None:
    """An error naming the first input the call modified, of those not `writable` (written in place)."""
    for name, now, before in zip(names, working, pristine):
        if name not in writable and not same_bits(now, before):
            return f"input {name} was modified by the call (inputs are read-only)"
    return None


def changed_in_calls(
    names: Sequence[str],
    calls: Sequence[Sequence[torch.Tensor]],
    drawn: Sequence[Sequence[torch.Tensor]],
    writable: Collection[str] = (),
) -> str | None:
    """changed_inputs over a chunk's calls (each call's inputs as it left them, and as drawn): an
    error naming the first call and input modified."""
    for index, (now, before) in enumerate(zip(calls, drawn)):
        changed = changed_inputs(names, now, before, writable)
        if changed:
            return f"call {index} of a chunk: {changed}"
    return None
