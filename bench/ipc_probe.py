"""Can a judge process own the buffers and the clock while a sandboxed worker runs the calls?

Two questions, on the GPU machine (NVIDIA, through cuda-bindings):
1. Does legacy CUDA IPC (memory and event handles exported by the judge) open in a worker that
   runs in bubblewrap: sharing the judge's PID namespace, and in a PID namespace of its own?
2. The chunked clock: the judge records `start` after a GPU spin (so the worker has queued the
   whole chunk), then an interprocess `go`; the worker waits on `go`, runs B calls (each with a
   flush and its own in-process event pair), records `done`; the judge waits on `done` and records
   `end`. Does (span of a chunk of B calls) less (span of an empty chunk) over B match the
   worker's in-process per-call time, and is two copies / one copy still 2.0?

Usage: python3 bench/ipc_probe.py  (prints one table; needs torch with CUDA and cuda-bindings)
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys

import torch

try:
    from cuda.bindings import runtime as cudart  # pants: no-infer-dep
except ImportError:  # older cuda-python
    from cuda import cudart  # type: ignore[no-redef]  # pants: no-infer-dep

MiB = 1 << 20


def check(result):
    err, *rest = result
    if int(err) != 0:
        raise RuntimeError(f"CUDA runtime error {err}")
    return rest[0] if len(rest) == 1 else rest


class Raw:
    """A device pointer seen by torch as a uint8 tensor, without a copy."""

    def __init__(self, ptr: int, nbytes: int) -> None:
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False), "version": 3}


def as_tensor(ptr: int, nbytes: int) -> torch.Tensor:
    return torch.as_tensor(Raw(ptr, nbytes), device="cuda")


def ipc_event():
    flags = cudart.cudaEventInterprocess | cudart.cudaEventDisableTiming
    return check(cudart.cudaEventCreateWithFlags(flags))


def stream_handle():
    return cudart.cudaStream_t(torch.cuda.current_stream().cuda_stream)


# -- the worker -----------------------------------------------------------------------------------
def worker() -> None:
    torch.cuda.init()
    torch.zeros(1, device="cuda")
    hello = json.loads(sys.stdin.readline())
    mem = cudart.cudaIpcMemHandle_t()
    mem.reserved = bytes.fromhex(hello["mem"])
    ptr = int(check(cudart.cudaIpcOpenMemHandle(mem, cudart.cudaIpcMemLazyEnablePeerAccess)))
    events = {}
    for name in ("go", "done"):
        handle = cudart.cudaIpcEventHandle_t()
        handle.reserved = bytes.fromhex(hello[name])
        events[name] = check(cudart.cudaIpcOpenEventHandle(handle))
    arena = as_tensor(ptr, hello["nbytes"])
    seen = int(arena[:4].sum().item())
    arena[:4].fill_(7)
    torch.cuda.synchronize()
    print(json.dumps({"opened": True, "seen": seen, "pid": os.getpid()}), flush=True)
    flush = torch.empty(256 * MiB, dtype=torch.uint8, device="cuda")
    stream = stream_handle()
    for line in sys.stdin:
        order = json.loads(line)
        if order.get("stop"):
            break
        size, copies, calls = order["size"], order["copies"], order["calls"]
        src, dst = arena[:size], arena[size : 2 * size]
        pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(calls)]
        check(cudart.cudaStreamWaitEvent(stream, events["go"], 0))
        for start, end in pairs:
            flush.zero_()
            start.record()
            for _ in range(copies):
                dst.copy_(src)
            end.record()
        check(cudart.cudaEventRecord(events["done"], stream))
        print(json.dumps({"queued": True}), flush=True)
        torch.cuda.synchronize()
        times = [s.elapsed_time(e) * 1000.0 for s, e in pairs]
        print(json.dumps({"median_us": statistics.median(times)}), flush=True)


# -- the judge ------------------------------------------------------------------------------------
def spawn(wrapper: list[str]) -> subprocess.Popen:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.Popen(
        [*wrapper, sys.executable, os.path.abspath(__file__), "worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )


def tell(child: subprocess.Popen, message: dict) -> None:  # type: ignore[type-arg]
    assert child.stdin is not None
    child.stdin.write(json.dumps(message) + "\n")
    child.stdin.flush()


def hear(child: subprocess.Popen) -> str:  # type: ignore[type-arg]
    assert child.stdout is not None
    return str(child.stdout.readline())


def bwrap(own_pid_namespace: bool) -> list[str]:
    command = ["bwrap", "--dev-bind", "/", "/", "--unshare-user", "--unshare-net", "--die-with-parent"]
    if own_pid_namespace:
        command += ["--unshare-pid", "--proc", "/proc"]
    return command


def judge() -> None:
    torch.zeros(1, device="cuda")
    nbytes = 2 * 128 * MiB + MiB
    ptr = int(check(cudart.cudaMalloc(nbytes)))
    arena = as_tensor(ptr, nbytes)
    arena.fill_(1)
    torch.cuda.synchronize()
    mem = check(cudart.cudaIpcGetMemHandle(ptr))
    events = {name: ipc_event() for name in ("go", "done")}
    hello: dict[str, object] = {
        name: bytes(check(cudart.cudaIpcGetEventHandle(e)).reserved).hex() for name, e in events.items()
    }
    hello.update(mem=bytes(mem.reserved).hex(), nbytes=nbytes)
    rows = []
    ways: list[tuple[str, list[str]]] = [("plain subprocess", [])]
    if shutil.which("bwrap"):
        ways += [("bwrap, judge's PID namespace", bwrap(False)), ("bwrap, own PID namespace", bwrap(True))]
    for label, wrapper in ways:
        arena[:4].fill_(1)
        torch.cuda.synchronize()
        child = spawn(wrapper)
        tell(child, hello)
        answer = hear(child)
        if not answer:
            child.wait()
            rows.append((label, f"worker failed (exit {child.returncode})"))
            continue
        torch.cuda.synchronize()
        written = int(arena[:4].sum().item())
        opened = json.loads(answer)
        rows.append((label, f"opened; worker saw {opened['seen']} (want 4); judge sees {written} (want 28)"))
        if label == "plain subprocess" or "own PID" in label:
            rows += [(f"{label}: {r[0]}", r[1]) for r in chunk_clock(child, events)]
        tell(child, {"stop": True})
        child.wait()
    for label, text in rows:
        print(f"| {label} | {text} |")


def chunk_clock(child: subprocess.Popen, events: dict) -> list[tuple[str, str]]:
    stream = stream_handle()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    cycles = cycles_per_us()

    def span(size: int, copies: int, calls: int) -> tuple[float, float]:
        torch.cuda._sleep(int(30_000 * cycles))  # 30 ms: the worker queues the chunk meanwhile
        start.record()
        check(cudart.cudaEventRecord(events["go"], stream))
        tell(child, {"size": size, "copies": copies, "calls": calls})
        assert json.loads(hear(child))["queued"]
        check(cudart.cudaStreamWaitEvent(stream, events["done"], 0))
        end.record()
        torch.cuda.synchronize()
        inner = json.loads(hear(child))["median_us"]
        return start.elapsed_time(end) * 1000.0, inner

    rows = []
    calls = 200
    for size_mib in (1, 16, 128):
        size = size_mib * MiB
        figures = {}
        for copies in (0, 1, 2):
            spans, inners = zip(*(span(size, copies, calls) for _ in range(5)))
            figures[copies] = (statistics.median(spans), statistics.median(inners))
        empty = figures[0][0]
        per_call = {c: (figures[c][0] - empty) / calls for c in (1, 2)}
        inner = {c: figures[c][1] - figures[0][1] for c in (1, 2)}
        rows.append(
            (
                f"{size_mib} MiB copy, {calls} calls",
                f"empty chunk {empty / 1000:.2f} ms; chunk clock one {per_call[1]:.2f} us, two/one "
                f"{per_call[2] / per_call[1]:.3f}; in-process one {inner[1]:.2f} us, two/one {inner[2] / inner[1]:.3f}",
            )
        )
    return rows


def cycles_per_us() -> float:
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(1000)
    a.record()
    torch.cuda._sleep(1_000_000)
    b.record()
    torch.cuda.synchronize()
    return 1_000_000 / (a.elapsed_time(b) * 1000.0)


if __name__ == "__main__":
    worker() if sys.argv[1:] == ["worker"] else judge()
