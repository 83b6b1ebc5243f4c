"""Is the task's tolerance one its own reference meets? Reference in the case dtype vs in float64.

On each chosen case, the reference is called on the case's inputs and on the same inputs cast to
float64; the first answer must match the second within the task's tolerance for the output's
dtype. A reference that fails this sets a bar no candidate can reliably clear.

The check runs in a child process (`python -m arena.validation.reference_check`), so torch and
the task's reference code never load into the caller; `check_reference_precision` starts it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator, Sequence

from arena.environment.measurement import current_measurement
from arena.task.task import Task

_CHILD_TIMEOUT_S = 600


def check_reference_precision(task: Task, repo_root: Path, cases: Sequence[str]) -> dict[str, str]:
    """Case name -> error for each case whose float64 check fails ("" where it passes)."""
    # The child runs where harness children do (the measurement environment), and imports arena
    # and torch from there: inside a PEX the bundled ones live in the PEX's own folders, which only
    # the measurement's path names (a plain `python -m` beside it found no torch).
    measurement = current_measurement()
    command = [measurement.python, "-m", "arena.validation.reference_check", str(repo_root), task.address, *cases]
    source_root = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(dict.fromkeys([source_root, *measurement.path]))
    env = {**os.environ, "PYTHONPATH": path}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=_CHILD_TIMEOUT_S, check=False, env=env)
    except subprocess.TimeoutExpired:
        return {name: f"the float64 check took over {_CHILD_TIMEOUT_S} s" for name in cases}
    try:
        found = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        tail = (done.stderr or done.stdout).strip()[-2000:]
        return {name: f"the float64 check crashed (exit {done.returncode}): {tail}" for name in cases}
    return {str(name): str(error) for name, error in found.items()}


def load_reference(task: Task, task_dir: Path) -> Any:
    """The reference function, imported from `task_dir` under a name of its own."""
    assert task.reference is not None
    path = task_dir / task.reference.file
    spec = importlib.util.spec_from_file_location(f"arena_reference_{task.name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path.name}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, task.reference.symbol)


def check_case_precision(task: Task, reference: Any, case_name: str) -> str:
    """Empty when the reference in the case's dtype matches itself in float64, else why not."""
    import torch

    from arena.harness.check import called_outputs, find_mismatch
    from arena.harness.inputs import make_inputs, make_scalars, spec_dtype
    from arena.task.tolerance import tolerance_for

    case = next(c for c in task.cases if c.name == case_name)
    inputs = make_inputs(task, case, torch.device("cpu"))
    scalars = make_scalars(task, case)
    wide = [x.double() if x.is_floating_point() else x for x in inputs]
    with torch.no_grad():
        got = called_outputs(task, reference, inputs, scalars)
        want = _in_float64(task, reference, wide, scalars)
    if isinstance(got, str) or isinstance(want, str):
        return f"the reference: {got if isinstance(got, str) else want}"
    for spec, mine, exact in zip(task.outputs, got, want):
        if not isinstance(mine, torch.Tensor) or not isinstance(exact, torch.Tensor):
            return f"output {spec.name}: the reference did not return a tensor"
        tolerance = tolerance_for(task, spec_dtype(spec, case))
        error = find_mismatch(spec.name, mine, exact.to(mine.device), tolerance)
        if error:
            return f"{case.dtype} against float64: {error}"
    return ""


def _in_float64(task: Task, reference: Any, wide: list[Any], scalars: dict[str, Any]) -> Any:
    """The reference's outputs on float64 inputs. One that fixes a narrower float type inside
    (`p.float()` then `.half()`, a float32 tensor it makes) raises on mixing it with float64; it is
    run again with every float16, bfloat16 and float32 it asks for kept at float64 (widened), and
    only if that fails too is its first error the answer."""
    from arena.harness.check import called_outputs

    try:
        return called_outputs(task, reference, wide, scalars)
    except RuntimeError as error:
        first = error
    try:
        with widened():
            return called_outputs(task, reference, wide, scalars)
    except Exception:
        raise first from None


@contextlib.contextmanager
def widened() -> Iterator[None]:
    """torch with the narrower float types a reference asks for (a cast, a dtype=, a factory's
    default) made float64; other types (integers, float8, booleans) as asked."""
    import torch
    from torch.overrides import TorchFunctionMode

    narrow = (torch.float16, torch.bfloat16, torch.float32)
    casts = (torch.Tensor.half, torch.Tensor.float, torch.Tensor.bfloat16)

    class Float64(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            kwargs = {k: torch.float64 if v in narrow else v for k, v in (kwargs or {}).items()}
            if func in casts:  # x.half(), x.float(), x.bfloat16()
                return args[0].double()
            if func in (torch.Tensor.to, torch.Tensor.type):
                args = tuple(torch.float64 if a in narrow else a for a in args)
            return func(*args, **kwargs)

    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        with Float64():
            yield
    finally:
        torch.set_default_dtype(default)


def main(argv: Sequence[str]) -> int:
    from arena.task.load import load_task

    repo_root, address, *cases = argv
    task = load_task(Path(repo_root), address)
    reference = load_reference(task, Path(repo_root) / task.task_dir)
    found = {}
    for name in cases:
        try:
            found[name] = check_case_precision(task, reference, name)
        except Exception as error:  # a process edge: every failure becomes a line in the report
            found[name] = f"the reference raised {type(error).__name__}: {error}"
    print(json.dumps(found))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
