"""The candidate worker: the one process where candidate code runs.

The judge (run.py, in the harness child) starts it, sends requests on one pipe and reads replies
on another (frames.py). It holds only the candidate, the inputs the judge hands it and buffers
the judge lends it on the GPU (shared_gpu.py); never a reference output, a seed, the result
channel or the baseline. Everything it replies is untrusted data to the judge, which checks the
outputs itself and bounds the timings by its own clock (timing.py). The checks it runs itself
(output types, stored answers, guards, the torch operation recorder) are a first line that saves
the judge work; the judge does not rely on them.

Requests: start, build, load, call (CPU only), profile, guard, bind, chunk, unbind, exit. On a GPU
every call of the candidate, checked or timed, is one of a chunk's, through one procedure.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from arena.harness.frames import pack_tensors, receive, send

if TYPE_CHECKING:  # the worker imports torch and the harness only once it runs apart (main)
    import torch

    from arena.harness.backends.kernel import Kernel
    from arena.harness.device import Device
    from arena.harness.guard import OpRecorder
    from arena.task.task import Task

# Earlier calls' outputs held for the stale-output check, across chunks, and let go of only
# between chunks: freed mid-chunk, their blocks were best fit for the Spacer's large block, and
# the call's outputs missed the reserve (placement.make_room; session 37).
_RECENT_OUTPUTS = 8


class Worker:
    def __init__(self) -> None:
        self.task: Task
        self.device: Device
        self.dirs: dict[str, Path]
        self.kernel: Kernel  # the candidate, watched by the recorder (load)
        self.loaded = False  # whether load has made self.kernel (the calibration's chunks come before)
        self.side = "candidate"  # what load loaded: "baseline" in a baseline's own worker
        self.recorder: OpRecorder  # every call's torch functions (load)
        self.returned: list[torch.Tensor] = []  # the outputs returned in the current family, held alive
        self.family = ""
        self.working: list[torch.Tensor] = []
        self.recent: list[tuple[torch.Tensor, ...]] = []  # earlier calls' outputs, for check.stale_output
        self.bound: dict[str, Any] = {}
        self.mirrored: list[Any] = []  # blocks lent to the judge (mirror), kept for this process's life

    # -- requests ---------------------------------------------------------------------------------
    def start(self, header: dict[str, Any], blobs: list[bytearray]) -> dict[str, Any]:
        """The job's task and backend; the device opened. The reply says when this process was
        born, had imported torch and was asked to start (time.time(): the judge's setup log)."""
        asked = time.time()
        from arena.harness.child import set_limits
        from arena.harness.device import open_device
        from arena.task.codec import task_from_dict

        set_limits(header["backend"])
        import torch

        # No thread pool of torch's grows later: the judge counts this process's threads after the
        # candidate's first call and after the checked calls, and a pool that a later case's CPU
        # work (an input drawn on the CPU) started would read as threads the candidate left.
        torch.set_num_threads(1)
        with contextlib.suppress(RuntimeError):  # refused once inter-op work has run: it has not yet
            torch.set_num_interop_threads(1)
        self.task = task_from_dict(header["task"])
        self.dirs = {name: Path(path) for name, path in header["dirs"].items()}
        backend = header["backend"]
        if backend == "cpu":
            os.environ["TRITON_INTERPRET"] = "1"  # before triton is first imported
            if not self.task.category.is_hip:
                from arena.harness.backends.interpreter import prepare_interpreter

                prepare_interpreter()
        self.device = open_device(backend, int(header["device"]))
        if self.device.backend != "cpu":
            torch.empty(1, device=self.device.torch_device)  # the context made here, not in the first call
        return {
            "born": _BORN, "imported": _IMPORTED[0] if _IMPORTED else asked, "asked": asked, "ready": time.time(),
            "apart": _APART[0] if _APART else "", "scoped": _SCOPED[0] if _SCOPED else "",
        }  # fmt: skip

    def build(self, header: dict[str, Any], blobs: list[bytearray]) -> dict[str, Any]:
        from arena.harness.loading import build_side

        directory, work = self.dirs["candidate"], self.dirs["work"]
        build_side(self.task, directory, work, "candidate", self.device.backend, header["arch"])
        return {}

    def load(self, header: dict[str, Any], blobs: list[bytearray]) -> dict[str, Any]:
        """The candidate loaded, or with `side` "baseline" the baseline, as the judge built it
        (settings.baseline_worker: this worker then times the baseline, baseline_apart.py)."""
        from arena.harness import guard
        from arena.harness.loading import load_side

        side = "baseline" if header.get("side") == "baseline" else "candidate"
        if side == "baseline":  # its pipes and memory closed to processes of its uid, as the judge's are
            from arena.harness.candidate_worker import not_dumpable

            not_dumpable()
        self.snapshot, self.threads = guard.take_snapshot(), guard.thread_count()
        self.recorder = guard.OpRecorder()
        self.kernel = _watched(load_side(self.task, self.dirs[side], self.dirs["work"], side), self.recorder)
        self.loaded, self.side = True, side
        return {"harness_outputs": self.kernel.harness_outputs}

    def call(
        self, header: dict[str, Any], blobs: list[bytearray]
    ) -> tuple[dict[str, Any], Sequence[bytes | memoryview]]:
        """One checked call on the CPU (the Triton interpreter), the outputs sent back for the judge
        to check. On a GPU every call of the candidate is a chunk's (chunk), checked ones too."""
        import torch

        if self.device.backend != "cpu":
            return {"error": "on a GPU the candidate is called only in chunks"}, []

        from arena.harness import guard
        from arena.harness.check import changed_inputs, made_outputs, returned_outputs, with_written

        working, pristine = self._working_set(header)
        every = self._wants(header["outputs"])
        wants = [every[i] for i in made_outputs(self.task)]  # not the inputs written in place
        _poison_allocator(wants)
        outputs = [torch.empty_like(w) for w in wants] if self.kernel.harness_outputs else []
        from arena.harness.check import poison_

        for out in outputs:
            poison_(out)
        result = self.kernel.invoke(working, header["scalars"], outputs, header["dims"])
        self._synchronize()
        if guard.active_modes():
            return {"verdict": "CHEAT_DETECTED", "outcome": f"candidate: {guard.active_modes()}"}, []
        if self.kernel.harness_outputs:
            got: tuple[object, ...] | str = tuple(outputs) if result == 0 else f"the launcher returned error {result}"
        else:
            got = returned_outputs(self.task, result)
        reply: dict[str, Any] = {"ops": self.recorder.take()}
        if isinstance(got, str):
            return dict(reply, outcome=got), []
        error = self._output_error(range(len(wants)), got, wants, working, self.returned)
        if error:
            return dict(reply, outcome=error), []
        writable = {s.name for s in self.task.outputs if s.inplace}
        changed = changed_inputs([s.name for s in self.task.inputs], working, pristine, writable)
        if changed:
            return dict(reply, outcome=changed), []
        self.returned += [] if self.kernel.harness_outputs else list(got)
        got = with_written(self.task, got, working)
        meta, data = pack_tensors(got)
        return dict(reply, outputs=meta), data

    def _working_set(self, header: dict[str, Any]) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """(working, pristine): the checked call's set, drawn here, copied into the buffers every
        call of its family gets (new contents in the same memory: an answer cached on a pointer is
        then wrong for the next set)."""
        pristine = self._draw(header["case"], int(header["seed"]))
        if header.get("family") != self.family or [t.shape for t in pristine] != [t.shape for t in self.working]:
            self.family, self.returned = header.get("family", ""), []
            self.working = [t.clone() for t in pristine]
        for work, source in zip(self.working, pristine):
            work.copy_(source)
        return self.working, pristine

    def _output_error(
        self,
        labels: Sequence[int],
        got: Sequence[object],
        wants: Sequence[torch.Tensor],
        working: Sequence[torch.Tensor],
        earlier: Sequence[torch.Tensor],
    ) -> str:
        """Why one of a call's outputs is refused (its type, or an input or an `earlier` output
        handed back as it), or "": the same rule for checked and timed calls."""
        from arena.harness.check import check_output_type, stale_output

        for index, g, want in zip(labels, got, wants):
            error = check_output_type(str(index), g, want)
            if not error and not self.kernel.harness_outputs:
                error = stale_output(str(index), g, working, earlier)
            if error:
                return error
        return ""

    def profile(self, header: dict[str, Any], blobs: list[bytearray]) -> dict[str, Any]:
        import torch

        from arena.harness.check import made_outputs
        from arena.harness.profile import profile_call

        working = self._draw(header["case"], int(header["seed"]))
        every = self._wants(header["outputs"])
        wants = [every[i] for i in made_outputs(self.task)]
        outputs = [torch.empty_like(w) for w in wants] if self.kernel.harness_outputs else []
        operations = profile_call(
            lambda: self.kernel.invoke(working, header["scalars"], outputs, header["dims"]), self.device.torch_device
        )
        return {
            "operations": [[o.name, o.kind, o.stream, o.start_ns] for o in operations],
            "ops": self.recorder.take(),
        }

    def guard(self, header: dict[str, Any], blobs: list[bytearray]) -> dict[str, Any]:
        from arena.harness import guard

        return {"replaced": guard.replaced_names(self.snapshot)[:10], "threads": guard.thread_count() - self.threads}

    def bind(self, header: dict[str, Any], blobs: list[bytearray]) -> dict[str, Any]:
        """Map the judge's output slots and events for the timed chunks of one case."""
        from arena.harness.flush import Flusher
        from arena.harness.placement import reserve
        from arena.harness.shared_gpu import SharedBlock, SharedEvent, runtime, typed_view

        self.unbind()
        rt = runtime()
        outputs = SharedBlock.open(rt, bytes.fromhex(header["outputs"]["handle"]), header["outputs"]["nbytes"])
        self.bound = {
            "blocks": (outputs,),
            "case": header["case"],
            "sets": [],
            "slots": [[typed_view(outputs.bytes, t) for t in s] for s in header["outputs"]["slots"]],
            "go": SharedEvent.open(rt, bytes.fromhex(header["go"])),
            "done": SharedEvent.open(rt, bytes.fromhex(header["done"])),
            "flusher": Flusher(self.device),
            "spin": int(header["spin_cycles"]),
            "scalars": header["scalars"],
            "dims": header["dims"],
            "warm": bool(header.get("warm")),
        }
        # The empty chunk touches one drawn set per call when the case's inputs are warmed (a
        # baseline's worker is loaded before its empty chunks run).
        empty = self.bound["warm"] and (not self.loaded or self.side == "baseline")
        self.bound["empty_inputs"] = self._draw(header["case"], 0, fresh=True) if empty else []
        # Outputs returned by this case's calls, checked and timed alike (a stored answer handed
        # back is refused: check.stale_output), and free blocks of the outputs' sizes poisoned, so
        # an output left partly unwritten reads poison: once a case, before any of its chunks.
        self.recent = []
        # As the judge's Lent does for its side: room for each call's large outputs at a new place.
        reserve(len(self.bound["slots"]), sum(t.nbytes for t in self.bound["slots"][0]), self.device.torch_device)
        _poison_allocator(self.bound["slots"][0])
        return {}

    def mirror(self, header: dict[str, Any], blobs: list[bytearray]) -> dict[str, Any]:
        """A block of this process's, exported for the judge to map (settings.mirror_lent, mirror.py),
        as the judge's blocks are for this one; asked before the candidate loads, never touched."""
        from arena.harness.shared_gpu import SharedBlock, runtime

        block = SharedBlock.allocate(runtime(), int(header["nbytes"]))
        self.mirrored.append(block)
        return {"handle": block.handle.hex(), "nbytes": block.nbytes}

    def _lent_sets(self, inputs: dict[str, Any]) -> list[list[Any]]:
        """The chunk's input sets: views of the pool the judge lends (mapped on first sight), where
        its stream copies the values just before `go`; until then they hold the last chunk's."""
        from arena.harness.shared_gpu import SharedBlock, runtime, typed_view

        pool = self.bound.get("pool")
        if pool is None or pool.handle.hex() != inputs["handle"]:
            pool = SharedBlock.open(runtime(), bytes.fromhex(inputs["handle"]), int(inputs["nbytes"]))
            self.bound["pool"] = pool
            self.bound["blocks"] += (pool,)
        return [[typed_view(pool.bytes, place) for place in one] for one in inputs["sets"]]

    def unbind(self, header: dict[str, Any] | None = None, blobs: Sequence[bytes] = ()) -> dict[str, Any]:
        import torch

        if self.bound:
            torch.cuda.synchronize()
        for block in self.bound.get("blocks", ()):
            block.close()
        self.bound = {}
        return {}

    def chunk(self, header: dict[str, Any], blobs: list[bytearray], reply_fd: int) -> dict[str, Any]:
        """The timed calls of one chunk (call k on set k), queued behind the judge's `go` and ahead
        of `done`. Before the candidate is loaded, the empty chunk: the same steps with no call, or
        with launches[k % len] empty kernels in call k's place (timing.empty_launches); the empty
        chunk may have more calls than slots (call k hands over in slot k modulo the slots)."""
        import torch

        from arena.harness import guard
        from arena.harness.check import made_outputs
        from arena.harness.placement import landing, make_room
        from arena.harness.timing import elapsed_us, empty_launches, run_calls

        b = self.bound
        count = int(header["count"])
        calls = bool(header.get("calls", True))
        kernel = self.kernel if calls else empty_launches([int(n) for n in header.get("launches", [0])])
        # Harness-allocated outputs (HIP) are poisoned before every call, in the empty chunk too.
        poisoned = self.kernel.harness_outputs if calls else bool(header.get("poison"))
        slot = b["slots"][0]  # empty in the empty procedure's own layout (no outputs handed over)
        outputs = [torch.empty_like(slot[i]) for i in made_outputs(self.task) if i < len(slot)] if poisoned else []
        blank = [torch.zeros_like(t) for t in b["slots"][0]]
        errors: list[str] = []

        def after(k: int, j: int, result: object) -> None:
            if not calls:
                for slot, zero in zip(b["slots"][k % len(b["slots"])], blank):
                    slot.copy_(zero)  # what a call's outputs cost to hand over
            else:
                self._to_slot(k, result, b["sets"][j], outputs, errors)

        b["sets"] = self._lent_sets(header["inputs"]) if calls else [b["empty_inputs"]] * count
        sets = b["sets"]
        landed_before = dict(landing)
        plugs = make_room(self.device.torch_device)  # before `go` (allocating may wait on the GPU), held to the end
        b["go"].wait()
        pairs, host_us = run_calls(
            kernel,
            list(range(count)),
            sets,
            None,
            outputs,
            after,
            b["flusher"],
            b["spin"],
            b["scalars"],
            b["dims"],
            warm=b["warm"],
        )
        b["done"].record()
        send(reply_fd, {"ok": True, "queued": True})
        torch.cuda.synchronize()
        del plugs, self.recent[:-_RECENT_OUTPUTS]  # earlier outputs let go between chunks only
        return {
            "times_us": [elapsed_us(s, e) for s, e in pairs],
            "host_us": host_us,
            "errors": errors[:5],
            "ops": self.recorder.take() if calls else [],
            "modes": guard.active_modes() if calls else "",
            "landing": {key: landing[key] - landed_before[key] for key in landing},
        }

    def _to_slot(
        self, k: int, result: object, working: list[torch.Tensor], outputs: list[torch.Tensor], errors: list[str]
    ) -> None:
        from arena.harness.check import made_outputs, returned_outputs, with_written

        slot = self.bound["slots"][k]
        made = made_outputs(self.task)
        if self.kernel.harness_outputs:
            got: Sequence[object] | str = outputs if result == 0 else f"the launcher returned error {result}"
        else:
            got = returned_outputs(self.task, result)
        if isinstance(got, str):
            errors.append(got)
            return
        # The last eight only: the host compares them while the chunk queues.
        earlier = [t for held in self.recent[-_RECENT_OUTPUTS:] for t in held]
        error = self._output_error(made, got, [slot[i] for i in made], working, earlier)
        if error:
            errors.append(error)
            return
        for place, g in zip(slot, with_written(self.task, got, working)):
            place.copy_(g)
        if not self.kernel.harness_outputs:
            self.recent.append(tuple(got))

    # -- helpers ----------------------------------------------------------------------------------
    def _draw(self, case_name: str, seed: int, fresh: bool = False) -> list[torch.Tensor]:
        from arena.harness.families import inputs_for

        case = next((c for c in self.task.cases if c.name == case_name), None)
        if case is None:
            raise ValueError(f"no case {case_name!r} in the task")
        return inputs_for(self.task, case, seed, self.device.torch_device, fresh)

    def _wants(self, specs: list[dict[str, Any]]) -> list[torch.Tensor]:
        import torch

        return [
            torch.empty(s["shape"], dtype=getattr(torch, s["dtype"]), device=self.device.torch_device) for s in specs
        ]

    def _synchronize(self) -> None:
        import torch

        if self.device.backend != "cpu":
            torch.cuda.synchronize()


def _watched(kernel: Kernel, recorder: OpRecorder) -> Kernel:
    """The candidate's kernel with every call watched by `recorder`."""
    from arena.harness.backends.kernel import Kernel

    def invoke(
        inputs: Sequence[torch.Tensor],
        scalars: Mapping[str, Any],
        outputs: Sequence[torch.Tensor],
        dims: Mapping[str, int],
    ) -> object:
        return recorder.watch(lambda: kernel.invoke(inputs, scalars, outputs, dims))

    return Kernel(label=kernel.label, invoke=invoke, harness_outputs=kernel.harness_outputs)


def _poison_allocator(wants: Sequence[torch.Tensor]) -> None:
    """Free blocks of each output's size filled with 0xFF, so an output left partly unwritten, or
    aliasing a freed buffer, holds poison rather than an earlier answer."""
    import torch

    blocks = [torch.full((w.numel() * w.element_size(),), 0xFF, dtype=torch.uint8, device=w.device) for w in wants]
    del blocks


def serve(requests: int, replies: int) -> None:
    worker = Worker()
    while True:
        header, blobs = receive(requests)
        op = header.get("op")
        if op == "exit":
            return
        data: Sequence[bytes | memoryview] = []
        try:
            if op == "chunk":
                reply, data = worker.chunk(header, blobs, replies), []
            elif op == "call":
                reply, data = worker.call(header, blobs)
            elif op in {"start", "build", "load", "profile", "guard", "bind", "unbind", "mirror"}:
                reply, data = getattr(worker, op)(header, blobs), []
            else:
                reply, data = {"error": f"unknown request {op!r}"}, []
            send(replies, dict(reply, ok="error" not in reply), data)
        except BaseException as error:  # noqa: BLE001 - candidate code failed; the judge decides
            send(replies, _failure(error))


# A failure's message, and each line of its trace, cut to these characters: with the trace's last
# 8000 they fit the judge's log limit (loading.LOG_LIMIT), which keeps a text's end.
ERROR_CHARACTERS, TRACE_LINE_CHARACTERS = 4000, 1000


def _failure(error: BaseException) -> dict[str, Any]:
    """The reply to a request that failed, cut to fit: an honest exception whose message is
    megabytes (a tensor's values) would otherwise pass the pipe's header limit and read as a
    tampered pipe (frames.HEADER_LIMIT), and its trace's last line, the message again, would crowd
    out the rest of what the judge keeps."""
    kind = type(error).__name__[:200]
    try:
        message = f"{kind}: {error}"
    except BaseException:  # noqa: BLE001 - a __str__ that fails is the candidate's too
        message = f"{kind}: (its message could not be read)"
    if len(message) > ERROR_CHARACTERS:
        message = f"{message[:ERROR_CHARACTERS]} ... ({len(message) - ERROR_CHARACTERS} characters cut)"
    try:
        lines = traceback.TracebackException.from_exception(error).format()
        trace = "".join(line[:TRACE_LINE_CHARACTERS] for line in lines)[-8000:]
    except BaseException:  # noqa: BLE001 - as above
        trace = ""
    return {"ok": False, "error": message, "kind": kind, "trace": trace}


_BORN = time.time()
_IMPORTED: list[float] = []  # when torch and the harness's modules were imported (time.time())
_APART: list[str] = []  # how this worker runs apart from the judge (apart.py: "" not at all)
_SCOPED: list[str] = []  # how it is kept from the judge's processes (scope.py), for the log


def main() -> None:
    from arena.harness.apart import die_with_parent, separate
    from arena.harness.child import leave_working_folder_off_the_path
    from arena.harness.scope import scope

    die_with_parent()
    leave_working_folder_off_the_path()
    requests, replies = int(sys.argv[1]), int(sys.argv[2])
    # Namespaces of its own before torch or any candidate code: no pid of the judge's to signal.
    _APART.append(separate((requests, replies)))
    _SCOPED.append(scope()[1])  # and, wherever it runs, no signal or ptrace out of its own processes
    import torch  # noqa: F401 - before any candidate code, like the judge

    from arena.harness import check, device, inputs, timing  # noqa: F401

    _IMPORTED.append(time.time())
    serve(requests, replies)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # no candidate atexit hook or finalizer runs


if __name__ == "__main__":
    main()
