"""HIP entries: compile the source to a shared library, call its extern "C" launcher via ctypes.

ROCm: hipcc --offload-arch=<gfx>. CUDA (and CPU-only machines, compile only): nvcc with
arena_hip.h pre-included, which maps the HIP runtime subset onto CUDA. The launcher gets the
arguments named by the task's `abi` (docs/task-format.md) and a final stream.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path
from typing import Mapping, Sequence

import torch

from arena.harness.backends.kernel import Kernel
from arena.task.task import Task

HEADER = Path(__file__).with_name("arena_hip.h")


def compile_commands(source: Path, library: Path, backend: str, arch: str) -> list[list[str]]:
    """Compile to an object (library.o, whose undefined symbols are the candidate's own code's:
    symbols.py), then link it into `library` with the toolchain's runtime."""
    obj = str(library.with_suffix(".o"))
    if backend == "rocm":
        return [
            ["hipcc", "-O3", "-fPIC", f"--offload-arch={arch}", "-c", "-o", obj, str(source)],
            ["hipcc", "-shared", "-fPIC", f"--offload-arch={arch}", "-o", str(library), obj],
        ]
    return [
        [
            "nvcc",
            "-O3",
            "-Xcompiler",
            "-fPIC",
            f"-arch={arch}",
            "-include",
            str(HEADER),
            "-x",
            "cu",
            "-c",
            "-o",
            obj,
            str(source),
        ],
        ["nvcc", "-shared", f"-arch={arch}", "-o", str(library), obj],
    ]


def preprocess_command(source: Path, backend: str, arch: str) -> list[str]:
    """The compile's own preprocessor run, output on stdout (the same headers and macros)."""
    if backend == "rocm":
        return ["hipcc", "-E", f"--offload-arch={arch}", str(source)]
    return ["nvcc", "-E", f"-arch={arch}", "-include", str(HEADER), "-x", "cu", str(source)]


def preprocess_hip(source: Path, backend: str, arch: str) -> tuple[bool, str]:
    """(preprocessed, the preprocessed text or the compiler's complaint)."""
    command = preprocess_command(source, backend, arch)
    if shutil.which(command[0]) is None:
        return False, f"{command[0]} is not installed"
    done = subprocess.run(command, capture_output=True, text=True, cwd=source.parent, errors="replace")
    return done.returncode == 0, done.stdout if done.returncode == 0 else done.stderr[-4000:]


def compile_hip(source: Path, library: Path, backend: str, arch: str) -> tuple[bool, str]:
    """(compiled, compiler log)."""
    log = ""
    for command in compile_commands(source, library, backend, arch):
        if shutil.which(command[0]) is None:
            return False, f"{command[0]} is not installed"
        done = subprocess.run(command, capture_output=True, text=True, cwd=source.parent)
        log += f"$ {' '.join(command[:6])} ...\n{done.stdout}{done.stderr}"
        if done.returncode != 0:
            return False, log
    return library.exists(), log


def load_hip_entry(library: Path, symbol: str, task: Task, label: str) -> Kernel:
    launcher = getattr(ctypes.CDLL(str(library)), symbol)  # AttributeError when the symbol is missing
    launcher.restype = ctypes.c_int
    inputs = [spec.name for spec in task.inputs]
    # The outputs the harness allocates; one written in place is its input's pointer (the abi names it once).
    outputs = [spec.name for spec in task.outputs if not spec.inplace]

    def invoke(
        ins: Sequence[torch.Tensor],
        scalars: Mapping[str, object],
        outs: Sequence[torch.Tensor],
        dims: Mapping[str, int],
    ) -> int:
        tensors = dict(zip(inputs, ins)) | dict(zip(outputs, outs))
        args: list[object] = []
        for name in task.abi:
            if name in tensors:
                args.append(ctypes.c_void_p(tensors[name].data_ptr()))
            elif name in dims:
                args.append(ctypes.c_int64(dims[name]))
            elif isinstance(scalars.get(name), float):
                args.append(ctypes.c_double(scalars[name]))  # type: ignore[arg-type]
            else:
                args.append(ctypes.c_int64(int(scalars[name])))  # type: ignore[call-overload]
        args.append(ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
        return int(launcher(*args))

    return Kernel(label=label, invoke=invoke, harness_outputs=True)
