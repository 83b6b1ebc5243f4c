"""One job, start to finish, inside the harness child, which is the judge: the pipeline of stages.

The judge holds the inputs, the seeds, the trusted code (reference and baseline), the reference
outputs and the result channel; the candidate runs only in its worker (worker.py), a process of
its own that the judge asks to build, call, profile and time it. Stages: setup (inputs, trusted
code, reference outputs, the worker started), compile (the candidate built, loaded and called
once, in the worker), check (every case: outputs sent back and compared here; determinism),
time (judged_timing.py), profile (profile.py, for a candidate measured faster), bench (a
repository's own benchmark). A Verdict stops the pipeline with a status.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import subprocess
import time
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence, TypeVar

import torch

from arena.harness import guard
from arena.harness.backends.hip import compile_hip, preprocess_hip
from arena.harness.backends.interpreter import prepare_interpreter
from arena.harness.backends.kernel import Kernel
from arena.harness.backends.python_entry import load_python_entry
from arena.harness.backends.repository import run_repository_bench
from arena.harness.backends.symbols import refused_symbols, undefined_symbols
from arena.harness.baseline_apart import BaselineApart
from arena.harness.candidate_worker import CandidateFailed, CandidateWorker, listed
from arena.harness.check import (
    check_output_type,
    find_mismatch,
    poison_,
    returned_outputs,
    same_bits,
    with_written,
)
from arena.harness.device import device_arch, open_device, read_clock_sample, select_backend, start_clock_sample
from arena.harness.environment import probe_environment
from arena.harness.families import Member, case_outcome, fresh_seeds, make_families
from arena.harness.forbidden import check_preprocessed
from arena.harness.frames import WorkerError, WorkerGone, unpack_tensors
from arena.harness.inputs import make_scalars, spec_dtype, spec_shape, torch_dtype
from arena.harness.job import Job
from arena.harness.judged_timing import Judge
from arena.harness.lent import QueueBlocked
from arena.harness.loading import (  # noqa: F401 - LOG_LIMIT: the cap callers read here
    LOG_LIMIT,
    BuildFailed,
    build_side,
    cut,
    library_path,
    load_side,
)
from arena.harness.matching import Workers, may_replace
from arena.harness.mirror import Mirror
from arena.harness.profile import GpuOperation, describe, first_faster_case, library_kernels, off_stream, profile_call
from arena.harness.result import CaseOutcome, HarnessResult, StageLog
from arena.harness.scope import LANDLOCK_SCOPED
from arena.harness.settings import HarnessSettings
from arena.harness.timing import measure_event_overhead
from arena.harness.verdict import Verdict
from arena.task.archs import NOT_HERE, refusal
from arena.task.codec import task_from_dict
from arena.task.tolerance import tolerance_for

# A call's outputs as it returned them, not yet checked (check_output_type), or what went wrong.
Called = Sequence[object] | str

ClockSample = Optional[subprocess.Popen]  # type: ignore[type-arg]  # device.start_clock_sample's

_T = TypeVar("_T")


class Run:
    """The job's state as the stages fill it in: stage logs, case outcomes, environment."""

    def __init__(self, job: Job, worker: CandidateWorker | None = None) -> None:
        self.task_dict = dict(job.task)
        self.task = task_from_dict(self.task_dict)
        settings = dict(job.settings)
        settings["cases"] = tuple(settings.get("cases", ()))
        self.settings = HarnessSettings(**settings)
        self.secret_seed = job.secret_seed
        self.dirs = {name: Path(path) for name, path in job.dirs.items()}
        self.stage = "setup"
        self.compiled = False
        self.stages: list[StageLog] = []
        self.cases: list[CaseOutcome] = []
        self.environment: dict[str, object] = {}
        self.timings_available = False
        self._stage_start = time.perf_counter()
        self._marks: list[str] = []
        self.workers = Workers(self._mark, worker)  # the worker, given when the child started it ahead
        self.judge: Judge | None = None
        self.mirror: Mirror | None = None  # settings.mirror_lent: the worker's block, mapped here
        self.apart: BaselineApart | None = None  # settings.baseline_worker: the baseline's own worker
        self._allowed: set[str] | None = None
        self.baseline_build = ""  # how the HIP baseline's library came: compiled, or from the trusted builds
        self.on_candidate: Callable[[], None] = lambda: None  # candidate code may run from its call on
        # HIP on a GPU: the candidate's build is asked with the worker's start (_build_early);
        # what its reply raised waits here for the compile stage.
        self._built_early = False
        self._build_failure: BaseException | None = None

    @property
    def worker(self) -> CandidateWorker:
        """The candidate's worker (matching.Workers: it may be replaced until the candidate loads)."""
        return self.workers.current

    @property
    def candidate_touched(self) -> bool:
        """Something of the candidate's has run: its sources handed to a compiler (_build_early) in
        the setup, and from the compile stage on, its code."""
        return self._built_early or self.stage != "setup"

    def _mark(self, label: str) -> None:
        """Note how far into the current stage `label` was reached (goes into the stage's log)."""
        self._marks.append(f"{time.perf_counter() - self._stage_start:7.3f}s {label}")

    # -- the pipeline -------------------------------------------------------------------------
    def execute(self) -> HarnessResult:
        backend, clock_sample = self._open_device()
        foreign = refusal(self.task.archs, device_arch(self.device))
        if foreign:  # a GPU the task is not declared for: nothing of the candidate's runs (task/archs.py)
            self.environment = probe_environment(self.device)
            return self.finish("NEEDS_DEVICE", [NOT_HERE + foreign])
        if self.task.category.is_hip and backend == "cpu":
            self.environment = probe_environment(self.device)
            return self._compile_only()
        self.timed = self.device.timings_available and not self.settings.check_only
        families, baseline = self._setup(backend, clock_sample)
        self.stage = "compile"
        self.on_candidate()  # the parent learns that a judge ending from here on is the candidate's (child.py)
        self._load_candidate()
        self.compiled = True
        self.stage = "first call"
        with self._candidate_calls(families[0][0]) as call:
            call(families[0][0])
        # Thread pools a library makes on its first use exist now: threads beyond these after the
        # checked calls are the candidate's, left running (counted by the kernel, not by Python).
        # On CUDA every thread counts, whatever its name: in 114 exemplar evaluations on an H100
        # (2026-12-06) no runtime started a thread after the first call; ROCm's are not yet seen.
        self.worker.settle(every_thread=self.device.backend == "cuda")
        self._end_stage("compile", True, "loaded, built and called once")
        outcomes = self._check(families)
        if not all(o.correct for o in outcomes):
            return self.finish("INCORRECT", [o.error for o in outcomes if o.error][:5])
        if self.timed and baseline is not None:  # timed: the baseline was loaded (_load_trusted)
            self.stage = "time"
            self._time(families, baseline)
            self._guard()
            self._profile(families, baseline)
            if self.task.category.value == "repository" and self.task.bench:
                self._run_own_bench()
        return self.finish("PASSED", [])

    def _open_device(self) -> tuple[str, ClockSample]:
        """The backend chosen and its device opened: (backend, a clock sample started on it)."""
        backend = select_backend(self.settings.backend)
        if backend == "cpu":
            os.environ["TRITON_INTERPRET"] = "1"  # before triton is first imported
            if not self.task.category.is_hip:
                prepare_interpreter()
        self._mark("backend chosen")
        self.device = open_device(backend, self.settings.device)
        clock_sample = start_clock_sample(self.device)
        self._mark("device opened")
        return backend, clock_sample

    def _setup(self, backend: str, clock_sample: ClockSample) -> tuple[list[list[Member]], Kernel | None]:
        """Before any candidate code: the worker started, the inputs drawn, the trusted code loaded
        and its reference outputs computed, and (timing) the judge calibrated: (families, baseline)."""
        spares = may_replace(self.timed, self.settings.match_launches, backend)
        self.workers.start(self._start_request(backend), spares)
        if self.timed and self.settings.baseline_worker and backend != "cpu":
            self.apart = BaselineApart(self._start_request(backend))  # loaded with the judge's baseline
        self._build_early()
        families = self._make_families()
        self._mark("inputs drawn")
        oracle, baseline = self._load_trusted()
        self._mark("trusted code loaded")
        for family in families:
            for member in family:
                member.references = self._call_trusted(oracle, member)
                self._mark(f"reference for {member.case.name}")
        self._synchronize()
        self.environment = probe_environment(
            self.device, read_clock_sample(clock_sample), nvcc=self.task.category.is_hip
        )
        self._mark("environment probed")
        started, _ = self.worker.receive()  # started: torch imported there, its device opened
        self._mark(f"worker started ({_worker_times(started, self._stage_start)})")
        apart = str(started.get("apart") or "")
        self._mark(f"worker in namespaces of its own ({apart})" if apart else "worker in the judge's namespaces")
        self._mark(f"worker {started.get('scoped') or 'not scoped: it did not say'}")
        if self._built_early:  # before the calibration: its chunks must not wait on a compiler
            self._receive_build()
            self._mark("the candidate's HIP library built beside the setup")
        self._load_apart(started)
        if self.device.backend != "cpu":
            self._calibrate(families)
        self._end_stage("setup", True, f"{sum(len(f) for f in families)} input sets, references computed")
        return families, baseline

    def _calibrate(self, families: list[list[Member]]) -> None:
        """On a GPU, the judge made (every call of the candidate goes through its chunks) and, when
        timing, its worker matched to its launch kind if asked (matching.Workers.match) and each timed case's
        empty calls measured: only harness code in the worker."""
        self.judge = Judge(self.device, self.worker, self.task, self.settings.warm_inputs)
        self.judge.clock.same_places = self.settings.same_places
        if self.apart is not None:
            self.apart.calibrate(self.device, self.task, self.settings.same_places)
            self.judge.apart = self.apart
        self._mark("judge calibrated")
        if not self.timed:
            return
        timed = [(f[0].case, f[0].references) for f in families if f[0].case.timed]
        judge = self.judge
        if timed and self.settings.match_launches:
            reading = partial(judge.later_launch_us, *timed[0])

            def read() -> dict[str, float]:
                return self._held_once(reading, "a later launch's reading")

            self.environment["launch_match"] = self.workers.match(
                read, self.settings.match_launches, self._ready, judge.use_worker
            )
        self.workers.close_spare()
        if self.settings.mirror_lent:  # before the empty procedure is measured, as it will be timed
            free, _ = torch.cuda.mem_get_info(self.device.torch_device)
            self.mirror, line = Mirror.of(self.worker, free)
            self._mark(line)
        for case, references in timed:
            self._held_once(partial(judge.measure_empty, case, references), f"empty calls for {case.name}")
            self._mark(f"empty calls measured for {case.name} ({judge.empty_phases.get(case.name, '')})")
        self.environment["switch_us"] = round(judge.switch_us, 1)
        self.environment["warm_inputs_bytes"] = judge.warm_bytes

    def _ready(self, worker: CandidateWorker) -> None:
        """A replacement readied (matching.Workers.match): its start read, the judge's clock bound
        to it. A HIP library built beside the setup is a file in the job's work folder that any
        worker loads, so only a build that failed is asked again (building it again for every
        replacement made matching four workers take a median 6.77 s on HIP tasks against 3.47 s on
        Triton; without it 3.81 s, sessions 42 and 43)."""
        rebuild = self._built_early and self._build_failure is not None
        if rebuild:
            self._build_failure = None
            worker.send("build", {"arch": device_arch(self.device)})
        started, _ = worker.receive()
        self._mark(f"a fresh worker started ({_worker_times(started, self._stage_start)})")
        if rebuild:
            self._receive_build()
        assert self.judge is not None
        self.judge.use_worker(worker)

    def _held_once(self, step: Callable[[], _T], what: str) -> _T:
        """A step of the judge's own calibration (harness code only in the worker), taken once
        more where the worker's host was held by the GPU: a stall of the machine's (one setup was
        held on an H200 while another process made its context: bench/results/2026-12-07.md,
        session 41) costs a step again rather than the whole job; held twice, it is the setup's
        fault as before."""
        try:
            return step()
        except QueueBlocked as blocked:
            if not blocked.on_gpu:
                raise
            self._mark(f"{what} held: {blocked}; read once more")
            return step()

    def _check(self, families: list[list[Member]]) -> list[CaseOutcome]:
        """Every case checked (every call recorded), then the guards: the outcomes, also in self.cases."""
        self.stage = "check"
        outcomes = []
        for family in families:
            outcomes += self._check_family(family)
            self._mark(f"checked {family[0].case.name}")
        self.cases = outcomes  # recorded before the guards, so a verdict keeps the checked cases
        self._guard()
        self._mark("guards")
        correct = all(o.correct for o in outcomes)
        self._end_stage("check", correct, f"{sum(o.correct for o in outcomes)} of {len(outcomes)} cases correct")
        return outcomes

    # -- the candidate, through its worker --------------------------------------------------------
    def _start_request(self, backend: str) -> dict[str, Any]:
        dirs = {name: str(path) for name, path in self.dirs.items()}
        return {"task": self.task_dict, "dirs": dirs, "backend": backend, "device": self.settings.device}

    def _ask(
        self, op: str, header: dict[str, Any] | None = None, blobs: Sequence[bytes] = ()
    ) -> tuple[dict[str, Any], list[bytearray]]:
        """A request to the worker; a failure of the candidate's code becomes this stage's verdict."""
        with self._worker_faults():
            return self.worker.request(op, header, blobs)

    @contextlib.contextmanager
    def _worker_faults(self) -> Iterator[None]:
        try:
            yield
        except CandidateFailed as failure:
            compiling = self.stage == "compile" or (self.stage == "first call" and "Compil" in failure.kind)
            detail = f"{failure}\n{cut(failure.trace)}" if failure.trace else str(failure)
            raise Verdict("COMPILE_ERROR" if compiling else "RUNTIME_ERROR", f"{self.stage}: {detail}") from None
        except WorkerGone:
            ended = self.worker.how_it_ended()
            raise Verdict("RUNTIME_ERROR", f"{self.stage}: the candidate's worker {ended}") from None
        except WorkerError as error:  # only the candidate's code writes anything else on that pipe
            raise Verdict(
                "CHEAT_DETECTED",
                f"{self.stage}: the candidate's worker sent a malformed message (the pipe to the "
                f"judge was tampered with): {error}",
            ) from None

    def _build_early(self) -> None:
        """HIP on a GPU: the candidate's library compiled in its worker while the judge draws the
        inputs and computes the references (a compiler reads its source; none of its code runs
        until `load`); the reply is read before the calibration (_receive_build) and judged in
        the compile stage, as a build asked for there would be."""
        if self.task.category.is_hip and self.device.backend != "cpu":
            self.worker.send("build", {"arch": device_arch(self.device)})
            self._built_early = True

    def _receive_build(self) -> None:
        try:
            self.worker.receive()
        except (CandidateFailed, WorkerGone, WorkerError) as failure:
            self._build_failure = failure

    def _load_candidate(self) -> None:
        try:
            if not self._built_early:
                self._ask("build", {"arch": device_arch(self.device)})
            elif self._build_failure is not None:
                with self._worker_faults():
                    raise self._build_failure
        except Verdict as verdict:
            text = str(verdict)
            raise Verdict("COMPILE_ERROR", text.split("BuildFailed: ", 1)[-1]) from None
        if self.task.category.is_hip:  # before loading: loading runs the library's static constructors
            self._check_preprocessed(self.device.backend, device_arch(self.device))
            self._check_symbols(
                library_path(self.dirs["work"], "candidate"), "candidate", self.device.backend, device_arch(self.device)
            )
        self._ask("load")

    @contextlib.contextmanager
    def _candidate_calls(self, first: Member) -> Iterator[Callable[[Member], Called]]:
        """call(member): the candidate called once in its worker on `member`'s inputs (members of
        `first`'s case): its outputs here, or an error string. Every call's torch functions are
        recorded; a forbidden one, or a torch mode left active, is a verdict. On a GPU each call is
        one of a chunk's, the timed chunks' steps (lent.Lent.checked_call): nothing in the worker
        tells a checked call from a timed one but the judge's clock, which it cannot see."""
        where = f"in a checked call ({self.stage})"
        if self.judge is None:  # the CPU: the worker's own call, its outputs through the pipe
            yield lambda member: self._call_on_cpu(member, first.case.name, where)
            return
        writable = [s.name for s in self.task.outputs if s.inplace]
        with self._worker_faults(), self.judge.checking(first.case, first.references, *self._call_args(first)) as lent:

            def call(member: Member) -> Called:
                lent.stage_given([member.inputs])
                return lent.checked_call(writable, where)

            yield call

    def _call_on_cpu(self, member: Member, family: str, where: str) -> Called:
        header, data = self._ask("call", dict(self._drawn(member), family=family))
        if header.get("verdict") == "CHEAT_DETECTED":
            raise Verdict("CHEAT_DETECTED", str(header.get("outcome", ""))[:2000])
        forbidden = guard.forbidden_in(header.get("ops"), self.task.forbidden, where)
        if forbidden:
            raise Verdict("CHEAT_DETECTED", forbidden)
        if "outcome" in header:  # the call returned, with something wrong in what came back
            return str(header["outcome"])[:4000]
        try:
            return unpack_tensors(header.get("outputs"), data, self.device.torch_device)
        except WorkerError as error:
            return f"the candidate's outputs could not be read: {error}"

    def _call_args(self, member: Member) -> tuple[dict[str, Any], dict[str, Any]]:
        return make_scalars(self.task, member.case), dict(member.case.dims)

    def _drawn(self, member: Member) -> dict[str, Any]:
        """What the worker needs to draw `member`'s inputs itself (the same set the judge drew: same
        task, case, seed and device) and to call on them."""
        return {
            "case": member.case.name.split("~", 1)[0],
            "seed": member.case.seed,
            "outputs": self._output_specs(member),
            "scalars": make_scalars(self.task, member.case),
            "dims": dict(member.case.dims),
        }

    def _output_specs(self, member: Member) -> list[dict[str, Any]]:
        return [
            {"dtype": spec_dtype(s, member.case), "shape": list(spec_shape(s, member.case))} for s in self.task.outputs
        ]

    def _profile(self, families: list[list[Member]], baseline: Kernel) -> None:
        """One more call of the candidate under the profiler, when it was measured faster than the
        baseline on some timed case: all of its GPU work must be on our stream, and none of its
        kernels may come from a vendor library the baseline does not use (so the baseline's call
        is profiled too)."""
        faster = first_faster_case(self.cases)
        if faster is None:
            return
        self.stage = "profile"
        member = next(f[0] for f in families if f[0].case.name == faster)
        header, _ = self._ask("profile", self._drawn(member))
        forbidden = guard.forbidden_in(header.get("ops"), self.task.forbidden, "in the profiled call")
        if forbidden:
            raise Verdict("CHEAT_DETECTED", forbidden)
        try:
            operations = [
                GpuOperation(str(name), str(kind), int(stream), int(start))
                for name, kind, stream, start in header.get("operations", [])
            ]
        except (TypeError, ValueError):
            raise Verdict("CHEAT_DETECTED", "the worker's profile is malformed") from None
        self._mark("candidate profiled in its worker")
        frozen = self.judge.clock.candidate_frozen() if self.judge else contextlib.nullcontext()
        try:
            with frozen:  # the baseline may compile here, from caches the candidate can write
                trusted = profile_call(
                    lambda: self._call(baseline, member, [t.clone() for t in member.inputs]), self.device.torch_device
                )
        except Verdict:
            raise
        except Exception as error:  # the profiler cannot run (or the candidate broke it): not PASSED
            raise Verdict(
                "RUNTIME_ERROR", f"the profiled call failed (a faster candidate must pass it): {error}"
            ) from error
        escaped = off_stream(operations)
        borrowed = library_kernels(operations, trusted)
        self._end_stage("profile", not (escaped or borrowed), f"case {member.case.name}: {describe(operations)}")
        if escaped:
            raise Verdict(
                "CHEAT_DETECTED",
                f"{len(escaped)} GPU operation(s) of the candidate ran off the harness's stream, where its "
                f"events do not see them (first: {escaped[0].kind} {escaped[0].name[:120]})",
            )
        if borrowed:
            library, name = borrowed[0]
            raise Verdict(
                "CHEAT_DETECTED",
                f"the candidate ran {library} kernel(s), which its baseline does not use: {name[:160]}",
            )

    def _run_own_bench(self) -> None:
        """A repository's own benchmark, once on the candidate after timing: recorded, not scored."""
        self.stage = "bench"
        ok, log = run_repository_bench(self.dirs["candidate"], self.task.bench)
        self._end_stage("bench", ok, log)

    def finish(self, status: str, errors: list[str]) -> HarnessResult:
        stage = "compile" if self.stage == "first call" else self.stage
        if status != "PASSED" and stage not in {s.name for s in self.stages}:
            self._end_stage(stage, False, "\n".join(errors))
        return HarnessResult(
            status=status,
            compiled=self.compiled,
            correct=status == "PASSED",
            stages=tuple(self.stages),
            cases=tuple(self.cases),
            errors=tuple(cut(e) for e in errors if e),
            environment=self.environment,
            timings_available=self.timings_available,
        )

    # -- steps ----------------------------------------------------------------------------------
    def _end_stage(self, name: str, ok: bool, log: str) -> None:
        now = time.perf_counter()
        log = "\n".join(self._marks + [log])
        self.stages.append(StageLog(name=name, ok=ok, seconds=round(now - self._stage_start, 4), log=cut(log)))
        self._stage_start, self._marks = now, []

    def _compile_only(self) -> HarnessResult:
        """HIP on a machine without a GPU: prove the candidate compiles; checking needs a device."""
        self.stage = "compile"
        arch = next((a for a in self.task.archs if a.startswith("sm_")), "sm_90")
        source = self.dirs["candidate"] / self.task.entry.file
        ok, log = compile_hip(source, self.dirs["work"] / "candidate.so", "cuda", arch)
        self.compiled = ok
        if ok:
            self._baseline_symbols("cuda", arch)  # the baseline built (or found) for the symbol check
            log += f"\nthe baseline's library: {self.baseline_build}"
        self._end_stage("compile", ok, log)
        if ok:
            self._check_preprocessed("cuda", arch)
            self._check_symbols(self.dirs["work"] / "candidate.so", "candidate", "cuda", arch)
        return self.finish("NEEDS_DEVICE" if ok else "COMPILE_ERROR", [] if ok else [cut(log)])

    def _check_symbols(self, library: Path, label: str, backend: str, arch: str) -> None:
        """A candidate's built library may not reach dlopen, Python, vendor libraries, threads or
        processes unless the baseline's does too (backends/symbols.py): the toolchain's own runtime
        (CUDA's static cudart uses dlopen and threads) shows up in both."""
        if label != "candidate":
            return
        refused = refused_symbols(undefined_symbols(library.with_suffix(".o")), self._baseline_symbols(backend, arch))
        if refused:
            symbol, reaches = refused[0]
            raise Verdict("CHEAT_DETECTED", f"the candidate's code calls {symbol} ({reaches}); HIP candidates may not")

    def _check_preprocessed(self, backend: str, arch: str) -> None:
        """The static native rules again on what the compiler's preprocessor made of the sources:
        a name built by token pasting or a macro is whole there (forbidden.check_preprocessed)."""
        texts = {}
        for side in ("candidate", "baseline"):
            ok, text = preprocess_hip(self.dirs[side] / self.task.entry.file, backend, arch)
            if not ok:
                raise Verdict("COMPILE_ERROR", f"the {side}'s preprocessor run failed:\n{cut(text)}")
            texts[side] = text
        findings = check_preprocessed(
            texts["candidate"],
            str(self.dirs["candidate"]),
            texts["baseline"],
            str(self.dirs["baseline"]),
            self.task.forbidden,
        )
        if findings:
            raise Verdict("CHEAT_DETECTED", f"after the preprocessor, the candidate's code {findings[0].what}")

    def _baseline_symbols(self, backend: str, arch: str) -> set[str]:
        """The undefined symbols of the baseline's object file (built here if it was not loaded)."""
        if self._allowed is None:
            baseline = self.dirs["work"] / "baseline.so"
            if not baseline.exists():
                try:
                    self.baseline_build = build_side(
                        self.task, self.dirs["baseline"], self.dirs["work"], "baseline", backend, arch
                    )
                except BuildFailed as failed:
                    raise RuntimeError(str(failed)) from None
            self._allowed = undefined_symbols(baseline.with_suffix(".o"))
        return self._allowed

    def _make_families(self) -> list[list[Member]]:
        return make_families(self.task, self.secret_seed, self.settings.hidden_seeds, self.device, self.timed)

    def _load_trusted(self) -> tuple[Kernel, Kernel | None]:
        """(oracle, baseline): the reference (or the baseline as oracle) and, when timing, the baseline."""
        if self.task.reference is None:
            oracle = self._load_kernel(self.dirs["baseline"], "baseline")
            return oracle, oracle
        baseline = self._load_kernel(self.dirs["baseline"], "baseline") if self.timed else None
        return load_python_entry(self.dirs["task"], self.task.reference, "reference"), baseline

    def _load_kernel(self, directory: Path, label: str) -> Kernel:
        """A trusted side (the baseline), built and loaded in the judge."""
        try:
            came = build_side(
                self.task, directory, self.dirs["work"], label, self.device.backend, device_arch(self.device)
            )
        except BuildFailed as failed:
            raise RuntimeError(str(failed)) from None
        if came:
            self._mark(f"{label}'s library {came}")
        kernel = load_side(self.task, directory, self.dirs["work"], label)
        if self.task.category.is_hip:
            self._baseline_symbols(self.device.backend, device_arch(self.device))
            if self.apart is None:  # else once the baseline's own worker has it mapped too (_load_apart)
                self._drop_built(label)
        return kernel

    def _drop_built(self, label: str) -> None:
        """A HIP side's built files deleted once mapped, before any code of the candidate's runs: the
        candidate, in the same sandbox, could otherwise rewrite the library under a mapping of it,
        or its symbol list."""
        library = library_path(self.dirs["work"], label)
        for built in (library, library.with_suffix(".o")):
            built.unlink(missing_ok=True)

    def _load_apart(self, started: dict[str, Any]) -> None:
        """settings.baseline_worker: the baseline loaded in its own worker, once that worker has
        imported torch beside the setup (asked earlier, the judge waited 1.6 s for it on an H100),
        then a HIP baseline's built files deleted. Only where the candidate's worker cannot name
        it (`started`, its start reply: PID namespaces of its own, or Landlock's scopes); a seccomp
        filter refuses signals to the judge alone, so there the judge times the baseline itself."""
        if self.apart is None:
            return
        if not (started.get("apart") or str(started.get("scoped") or "").startswith(LANDLOCK_SCOPED)):
            self.apart.close()
            self.apart = None
            self._mark("the baseline timed in the judge: the candidate's worker could signal a worker of its own")
        else:
            self.apart.load()
            self._mark("the baseline loaded in a worker of its own")
        if self.task.category.is_hip:
            self._drop_built("baseline")

    def _outputs(self, member: Member) -> list[torch.Tensor]:
        """A HIP launcher's outputs, allocated for it (not the inputs it writes in place)."""
        return [
            torch.empty(
                spec_shape(s, member.case),
                dtype=torch_dtype(spec_dtype(s, member.case)),
                device=self.device.torch_device,
            )
            for s in self.task.outputs
            if not s.inplace
        ]

    def _call(self, kernel: Kernel, member: Member, working: list[torch.Tensor]) -> Called:
        """Call a trusted `kernel` once on `working`: its outputs or an error string."""
        outputs = self._outputs(member) if kernel.harness_outputs else []
        for out in outputs:
            poison_(out)
        args = (working, make_scalars(self.task, member.case), outputs, dict(member.case.dims))
        result = kernel.invoke(*args)
        self._synchronize()
        if guard.active_modes():
            raise Verdict("CHEAT_DETECTED", f"{kernel.label}: {guard.active_modes()}")
        if kernel.harness_outputs:
            got = tuple(outputs) if result == 0 else f"the launcher returned error {result}"
        else:
            got = returned_outputs(self.task, result)
        return got if isinstance(got, str) else with_written(self.task, got, working)

    def _call_trusted(self, kernel: Kernel, member: Member) -> list[torch.Tensor]:
        got = self._call(kernel, member, [t.clone() for t in member.inputs])
        if isinstance(got, str):
            raise RuntimeError(f"the {kernel.label} failed on case {member.case.name}: {got}")
        tensors = [t for t in got if isinstance(t, torch.Tensor)]
        if len(tensors) != len(got):
            raise RuntimeError(f"the {kernel.label} returned an output that is not a tensor on case {member.case.name}")
        return [t.contiguous() for t in tensors]

    def _check_family(self, family: list[Member]) -> list[CaseOutcome]:
        """Every member called in the worker and its outputs compared here with the reference; then
        the first member again: the outputs must be bitwise identical."""
        with self._candidate_calls(family[0]) as call:
            return self._check_calls(family, call)

    def _check_calls(self, family: list[Member], call: Callable[[Member], Called]) -> list[CaseOutcome]:
        outcomes, first = [], None
        for index, member in enumerate(family):
            if member.timing_only:
                continue
            got = call(member)
            error = got if isinstance(got, str) else None
            for spec, g, want in zip(self.task.outputs, got if error is None else (), member.references):
                error = error or check_output_type(spec.name, g, want)
                error = error or find_mismatch(
                    spec.name, g, want, tolerance_for(self.task, str(want.dtype).removeprefix("torch."))
                )
            if index == 0 and error is None:
                first = got
            outcomes.append(case_outcome(self.task, member, error))
        if first is not None:
            again = call(family[0])
            if isinstance(again, str) and "earlier call" in again:
                outcomes[0] = dataclasses.replace(outcomes[0], correct=False, error=again)
            elif isinstance(again, str) or not all(same_bits(a, b) for a, b in zip(again, first)):
                outcomes[0] = dataclasses.replace(
                    outcomes[0],
                    correct=False,
                    error="not deterministic: a second call on the same inputs differs bitwise",
                )
        return outcomes

    def _synchronize(self) -> None:
        if self.device.backend != "cpu":
            torch.cuda.synchronize()

    def _guard(self) -> None:
        """The worker's own guards (its identity snapshot and Python thread count: a first line
        only), then the processes the candidate started and left running, counted here."""
        header, _ = self._ask("guard")
        replaced = [str(n) for n in header.get("replaced", [])] if isinstance(header.get("replaced"), list) else []
        if replaced:
            raise Verdict("CHEAT_DETECTED", f"harness-visible functions were replaced: {', '.join(replaced[:10])}")
        threads = header.get("threads", 0)
        if isinstance(threads, int) and threads > 0:
            raise Verdict("CHEAT_DETECTED", f"the candidate left {threads} Python thread(s) running")
        left = self.worker.left_running()  # counted by the OS, outside the candidate's reach
        if left:
            raise Verdict("CHEAT_DETECTED", left)

    def _time(self, families: list[list[Member]], baseline: Kernel) -> None:
        judge = self.judge
        if judge is None:
            raise RuntimeError("timing without a calibrated judge")
        clock_sample = start_clock_sample(self.device)  # sampled while the GPU is under load
        event_overhead_us = measure_event_overhead(judge.clock.flusher)
        self.environment.update(flush_bytes=judge.clock.flusher.nbytes, event_overhead_us=event_overhead_us)
        for family in families:
            case = family[0].case
            if not case.timed:
                continue
            references = family[0].references
            tolerances = [tolerance_for(self.task, str(r.dtype).removeprefix("torch.")) for r in references]
            with self._worker_faults():
                try:
                    timing = judge.time_case(
                        baseline,
                        case,
                        fresh_seeds(self.secret_seed, case.name),
                        references,
                        tolerances,
                        make_scalars(self.task, case),
                        dict(case.dims),
                        self.settings.trials,
                        self.settings.budget_s_per_case,
                    )
                except Verdict as verdict:
                    raise Verdict(verdict.status, f"case {case.name}: {verdict}") from None
            self._mark(f"case {case.name}: {timing.log}")
            index = next(i for i, o in enumerate(self.cases) if o.name == case.name)
            self.cases[index] = dataclasses.replace(
                self.cases[index],
                baseline_us=timing.baseline_us,
                candidate_us=timing.candidate_us,
                baseline_wall_us=timing.baseline_mean_us,
                candidate_wall_us=timing.judged_us,
                calls_a_chunk=timing.calls_a_chunk,
            )
        self.environment["clocks_under_load"] = read_clock_sample(clock_sample)
        self.timings_available = True
        named = self.worker.named_since_settled()
        if named:
            self._mark(
                f"threads started since the first call under other names (counted on CUDA only): {listed(named)}"
            )
        self._end_stage("time", True, f"{sum(o.timed for o in self.cases)} timed case(s)")

    def close(self) -> None:
        """The worker ends with the run (in a sandbox, its PID namespace ends whatever it started);
        its block, mapped here, is let go first."""
        try:
            if self.mirror is not None:
                self.mirror.close()
            self.workers.close()
        finally:
            if self.apart is not None:
                self.apart.close()


def _worker_times(reply: dict[str, Any], stage_start: float) -> str:
    """When the worker was born, had imported torch, was asked to start and was ready, in seconds
    from the setup stage's start (its clock is time.time(): another process's perf_counter
    differs): where a slow setup's time went."""
    now_wall, now = time.time(), time.perf_counter()
    marks = []
    for name in ("born", "imported", "asked", "ready"):
        value = reply.get(name)
        if isinstance(value, (int, float)):
            marks.append(f"{name} {value - now_wall + now - stage_start:+.3f}s")
    return ", ".join(marks) or "no times"
