"""What the trusted kernel layer saves: an autotuned baseline compiled once, not every evaluation.

    PYTHONPATH=src/python python3 bench/kernel_cache_check.py --out kernel_cache.json

A row-sum task whose baseline is autotuned over 24 Triton configs, on a GPU, through the real
parent (arena.harness.launch.run_harness: a fresh child per run, sandboxed where bubblewrap
works). A candidate (a different kernel) is evaluated three times with the layer empty (every
run compiles the baseline's 24 configs), then once as a no-op (its kernels are promoted into the
layer), then three times again with the layer filled. Reported: each run's wall time and its
stages' seconds. The layer lives in a fresh folder (ARENA_KERNEL_CACHE), so nothing from earlier
runs of anything counts.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import textwrap
import time
from pathlib import Path

KERNEL = """
import torch
import triton
import triton.language as tl

{decorator}
@triton.jit
def _row_sum(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        total += tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(y_ptr + row, tl.sum(total, axis=0))


def row_sum(x):
    y = torch.empty(x.shape[0], device=x.device, dtype=torch.float32)
    {launch}
    return y
"""
AUTOTUNED = KERNEL.format(
    decorator="@triton.autotune(configs=[triton.Config({'BLOCK': b}, num_warps=w, num_stages=s) "
    "for b in (256, 512, 1024, 2048) for w in (2, 4, 8) for s in (1, 2)], key=['n_cols'])",
    launch="_row_sum[(x.shape[0],)](x, y, x.shape[1])",
)
CANDIDATE = KERNEL.format(decorator="", launch="_row_sum[(x.shape[0],)](x, y, x.shape[1], BLOCK=1024, num_warps=4)")
REFERENCE = "import torch\n\n\ndef row_sum(x):\n    return x.float().sum(dim=1)\n"
BUILD = """
kernel_task(
    name="row_sum",
    category="triton2triton",
    description="Row sums of a float32 matrix.",
    baseline=["kernel.py"],
    entry="kernel.py:row_sum",
    signature="row_sum(x: [M, N] float32) -> [M] float32",
    reference="reference.py:row_sum",
    sources=["reference.py"],
    inputs=[{"name": "x", "shape": ["M", "N"]}],
    outputs=[{"name": "y", "shape": ["M"]}],
    cases=[
        {"name": "small", "dims": {"M": 7, "N": 1000}, "dtype": "float32", "seed": 1},
        {"name": "big", "dims": {"M": 8192, "N": 4096}, "dtype": "float32", "seed": 2, "timed": True},
    ],
    tolerances={"float32": {"atol": 1e-3, "rtol": 1e-4}},
)
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="kernel-cache-"))
    os.environ["ARENA_KERNEL_CACHE"] = str(root / "layer")  # before the harness reads it
    from arena.candidate.candidate import Candidate
    from arena.environment.probe import sandbox_tool
    from arena.harness.launch import run_harness
    from arena.harness.settings import HarnessSettings
    from arena.task.load import load_task

    task_dir = root / "repo" / "tasks" / "triton2triton" / "row_sum"
    task_dir.mkdir(parents=True)
    (root / "repo" / "tasks" / "triton2triton" / "BUILD").write_text("")
    (task_dir / "BUILD").write_text(textwrap.dedent(BUILD))
    (task_dir / "kernel.py").write_text(AUTOTUNED)
    (task_dir / "reference.py").write_text(REFERENCE)
    repo = root / "repo"
    task = load_task(repo, "tasks/triton2triton/row_sum")
    candidate = Candidate(task.address, {"kernel.py": CANDIDATE.encode()})
    settings = HarnessSettings(backend="auto", budget_s_per_case=0.3, timeout_s=300)

    def run(label: str, chosen: Candidate | None) -> dict:
        begin = time.perf_counter()
        result = run_harness(task, chosen, repo, settings)
        row = {
            "run": label,
            "status": result.status,
            "wall_s": round(time.perf_counter() - begin, 3),
            "stages": {s.name: round(s.seconds, 3) for s in result.stages},
            "errors": list(result.errors)[:2],
        }
        print(json.dumps(row), flush=True)
        return row

    rows = [run(f"empty layer {i + 1}", candidate) for i in range(args.runs)]
    rows.append(run("no-op (fills the layer)", None))
    layer = root / "layer"
    kernels = sum(1 for p in layer.iterdir() if p.is_dir()) if layer.exists() else 0
    rows += [run(f"filled layer {i + 1}", candidate) for i in range(args.runs)]
    report = {"sandbox": sandbox_tool() or "none", "kernels_in_layer": kernels, "runs": rows}
    args.out.write_text(json.dumps(report, indent=1))
    print(f"kernels in the layer: {kernels}; wrote {args.out}")


if __name__ == "__main__":
    main()
