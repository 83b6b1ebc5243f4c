"""One job, start to finish, inside the harness child: the pipeline of stages.

setup (inputs, trusted code, reference outputs), compile (the candidate, called once), check
(every case, determinism), time (timing.py), profile (profile.py, for a candidate measured
faster), bench (a repository's own benchmark). A Verdict stops the pipeline with a status.
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.harness.families import Member, case_outcome, make_families

if TYPE_CHECKING:
    from arena.harness.job import Job

LOG_LIMIT = 16 * 1024


class Verdict(Exception):
    """Stops the run with a status (CHEAT_DETECTED, COMPILE_ERROR, ...) and a message."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status


def cut(text: str) -> str:
    return text if len(text) <= LOG_LIMIT else "...\n" + text[-LOG_LIMIT:]


class Run:
    """The job's state as the stages fill it in: stage logs, case outcomes, environment."""

    def __init__(self, job: Job) -> None:
        from arena.harness.settings import HarnessSettings
        from arena.task.codec import task_from_dict

        self.task = task_from_dict(dict(job.task))
        settings = dict(job.settings)
        settings["cases"] = tuple(settings.get("cases", ()))
        self.settings = HarnessSettings(**settings)
        self.secret_seed = job.secret_seed
        self.dirs = {name: Path(path) for name, path in job.dirs.items()}
        self.stage = "setup"
        self.compiled = False
        self.stages: list[Any] = []
        self.cases: list[Any] = []
        self.environment: dict[str, object] = {}
        self.timings_available = False
        self._stage_start = time.perf_counter()
        self._marks: list[str] = []

    def _mark(self, label: str) -> None:
        """Note how far into the current stage `label` was reached (goes into the stage's log)."""
        self._marks.append(f"{time.perf_counter() - self._stage_start:7.3f}s {label}")

    # -- the pipeline -------------------------------------------------------------------------
    def execute(self) -> Any:
        from arena.harness.device import open_device, read_clock_sample, select_backend, start_clock_sample

        backend = select_backend(self.settings.backend)
        if backend == "cpu":
            os.environ["TRITON_INTERPRET"] = "1"  # before triton is first imported
            if not self.task.category.is_hip:
                from arena.harness.backends.interpreter import allow_autotune

                allow_autotune()
        from arena.harness.environment import probe_environment

        self._mark("backend chosen")
        self.device = open_device(backend, self.settings.device)
        clock_sample = start_clock_sample(self.device)
        self._mark("device opened")
        if self.task.category.is_hip and backend == "cpu":
            self.environment = probe_environment(self.device)
            return self._compile_only()
        self.timed = self.device.timings_available and not self.settings.check_only
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
        self._end_stage("setup", True, f"{sum(len(f) for f in families)} input sets, references computed")
        from arena.harness import guard

        snapshot, threads = guard.take_snapshot(), guard.thread_count()
        self.stage = "compile"
        candidate = self._load_kernel(self.dirs["candidate"], "candidate")
        self.compiled = True
        self.stage = "first call"
        self._call(candidate, families[0][0], [t.clone() for t in families[0][0].inputs])
        self._end_stage("compile", True, "loaded, built and called once")
        self.stage = "check"
        outcomes = []
        for family in families:
            outcomes += self._check_family(candidate, family, record=True)  # every checked call
            self._mark(f"checked {family[0].case.name}")
        self._guard(snapshot, threads)
        self._mark("guards")
        self.cases = outcomes
        correct = all(o.correct for o in outcomes)
        self._end_stage(
            "check", correct, f"{sum(o.correct for o in outcomes)} of {len(outcomes)} cases correct"
        )
        if not correct:
            return self.finish("INCORRECT", [o.error for o in outcomes if o.error][:5])
        if self.timed:
            self.stage = "time"
            self._time(families, baseline, candidate)
            self._guard(snapshot, threads)
            self._profile(candidate, families, baseline)
            if self.task.category.value == "repository" and self.task.bench:
                self._run_own_bench()
        return self.finish("PASSED", [])

    def _profile(self, candidate: Any, families: list[list[Member]], baseline: Any) -> None:
        """One more call of the candidate under the profiler, when it was measured faster than the
        baseline on some timed case: all of its GPU work must be on our stream, and none of its
        kernels may come from a vendor library the baseline does not use (so the baseline's call
        is profiled too)."""
        from arena.harness.profile import describe, first_faster_case, library_kernels, off_stream, profile_call

        faster = first_faster_case(self.cases)
        if faster is None:
            return
        self.stage = "profile"
        member = next(f[0] for f in families if f[0].case.name == faster)
        try:
            operations = profile_call(
                lambda: self._call(candidate, member, [t.clone() for t in member.inputs]),
                self.device.torch_device,
                self._mark,
            )
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
        from arena.harness.backends.repository import run_repository_bench

        self.stage = "bench"
        ok, log = run_repository_bench(self.dirs["candidate"], self.task.bench)
        self._end_stage("bench", ok, log)

    def finish(self, status: str, errors: list[str]) -> Any:
        from arena.harness.result import HarnessResult

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
        from arena.harness.result import StageLog

        now = time.perf_counter()
        log = "\n".join(self._marks + [log])
        self.stages.append(
            StageLog(name=name, ok=ok, seconds=round(now - self._stage_start, 4), log=cut(log))
        )
        self._stage_start, self._marks = now, []

    def _compile_only(self) -> Any:
        """HIP on a machine without a GPU: prove the candidate compiles; checking needs a device."""
        from arena.harness.backends.hip import compile_hip

        self.stage = "compile"
        arch = next((a for a in self.task.archs if a.startswith("sm_")), "sm_90")
        source = self.dirs["candidate"] / self.task.entry.file
        ok, log = compile_hip(source, self.dirs["work"] / "candidate.so", "cuda", arch)
        self.compiled = ok
        self._end_stage("compile", ok, log)
        if ok:
            self._check_symbols(self.dirs["work"] / "candidate.so", "candidate", "cuda", arch)
        return self.finish("NEEDS_DEVICE" if ok else "COMPILE_ERROR", [] if ok else [cut(log)])

    def _check_symbols(self, library: Path, label: str, backend: str, arch: str) -> None:
        """A candidate's built library may not reach dlopen, Python, vendor libraries, threads or
        processes unless the baseline's does too (backends/symbols.py): the toolchain's own runtime
        (CUDA's static cudart uses dlopen and threads) shows up in both."""
        from arena.harness.backends.hip import compile_hip
        from arena.harness.backends.symbols import refused_symbols, undefined_symbols

        if label != "candidate":
            return
        baseline = self.dirs["work"] / "baseline.so"
        if not baseline.exists():
            ok, log = compile_hip(self.dirs["baseline"] / self.task.entry.file, baseline, backend, arch)
            if not ok:
                raise RuntimeError(f"the baseline does not compile:\n{cut(log)}")
        allowed = undefined_symbols(baseline.with_suffix(".o"))
        refused = refused_symbols(undefined_symbols(library.with_suffix(".o")), allowed)
        if refused:
            symbol, reaches = refused[0]
            raise Verdict("CHEAT_DETECTED", f"the candidate's code calls {symbol} ({reaches}); HIP candidates may not")

    def _make_families(self) -> list[list[Member]]:
        families = make_families(self.task, self.secret_seed, self.settings.hidden_seeds, self.device, self.timed)
        self.secret_seed = 0  # no longer needed; not left for the candidate to find
        return families

    def _load_trusted(self) -> tuple[Any, Any]:
        """(oracle, baseline): the reference (or the baseline as oracle) and, when timing, the baseline."""
        from arena.harness.backends.python_entry import load_python_entry

        baseline = (
            self._load_kernel(self.dirs["baseline"], "baseline")
            if self.timed or self.task.reference is None
            else None
        )
        if self.task.reference is None:
            return baseline, baseline
        return load_python_entry(self.dirs["task"], self.task.reference, "reference"), baseline

    def _load_kernel(self, directory: Path, label: str) -> Any:
        from arena.harness.backends.hip import compile_hip, load_hip_entry
        from arena.harness.backends.python_entry import load_python_entry
        from arena.harness.backends.repository import build_repository
        from arena.harness.device import device_arch

        if self.task.category.is_hip:
            library = self.dirs["work"] / f"{label}.so"
            ok, log = compile_hip(
                directory / self.task.entry.file, library, self.device.backend, device_arch(self.device)
            )
            if not ok:
                raise Verdict("COMPILE_ERROR", f"{label} does not compile:\n{cut(log)}")
            # Before loading: loading runs the library's static constructors.
            self._check_symbols(library, label, self.device.backend, device_arch(self.device))
            return load_hip_entry(library, self.task.entry.symbol, self.task, label)
        if self.task.category.value == "repository":
            ok, log = build_repository(directory, self.task.build)
            if not ok:
                raise Verdict("COMPILE_ERROR", f"{label} build failed:\n{cut(log)}")
        return load_python_entry(directory, self.task.entry, label)

    def _outputs(self, member: Member) -> list:
        import torch

        from arena.harness.inputs import spec_dtype, spec_shape, torch_dtype

        return [
            torch.empty(
                spec_shape(s, member.case),
                dtype=torch_dtype(spec_dtype(s, member.case)),
                device=self.device.torch_device,
            )
            for s in self.task.outputs
        ]

    def _call(self, kernel: Any, member: Member, working: list, record: bool = False) -> tuple[Any, set[str]]:
        """Call `kernel` once on `working`; (outputs or an error string, torch calls when recorded)."""
        from arena.harness import guard
        from arena.harness.check import poison_, split_outputs
        from arena.harness.inputs import make_scalars

        outputs = self._outputs(member) if kernel.harness_outputs else []
        for out in outputs:
            poison_(out)
        args = (working, make_scalars(self.task, member.case), outputs, dict(member.case.dims))
        ops: set[str] = set()
        if record:
            result, ops = guard.record_ops(lambda: kernel.invoke(*args))
        else:
            result = kernel.invoke(*args)
        self._synchronize()
        if guard.active_modes():
            raise Verdict("CHEAT_DETECTED", f"{kernel.label}: {guard.active_modes()}")
        if kernel.harness_outputs:
            return (tuple(outputs) if result == 0 else f"the launcher returned error {result}"), ops
        return split_outputs(result, len(self.task.outputs)), ops

    def _call_trusted(self, kernel: Any, member: Member) -> list:
        got, _ = self._call(kernel, member, [t.clone() for t in member.inputs])
        if isinstance(got, str):
            raise RuntimeError(f"the {kernel.label} failed on case {member.case.name}: {got}")
        return [t.contiguous() for t in got]

    def _check_family(self, kernel: Any, family: list[Member], record: bool) -> list[Any]:
        """Check every member on the same working buffers (new contents, same pointers), then
        call again on the first member's inputs: the outputs must be bitwise identical."""
        import torch

        from arena.harness import guard
        from arena.harness.check import changed_inputs, check_output_type, find_mismatch, same_bits, stale_output
        from arena.task.tolerance import tolerance_for

        working = [t.clone() for t in family[0].inputs]
        names = [s.name for s in self.task.inputs]
        outcomes, first = [], None
        returned: list[Any] = []  # every output the candidate returned in this family, held alive
        for index, member in enumerate(family):
            if member.timing_only:
                continue
            for work, pristine in zip(working, member.inputs):
                work.copy_(pristine)
            self._poison_allocator(member)
            got, ops = self._call(kernel, member, working, record=record)
            hits = guard.forbidden_ops(ops, self.task.forbidden)
            if hits:
                raise Verdict(
                    "CHEAT_DETECTED", f"the candidate called forbidden torch function(s): {', '.join(hits)}"
                )
            error = got if isinstance(got, str) else None
            for spec, g, want in zip(self.task.outputs, got if error is None else (), member.references):
                error = error or check_output_type(spec.name, g, want)
                if not kernel.harness_outputs:  # HIP launchers write into the harness's own buffers
                    error = error or stale_output(spec.name, g, working, returned)
                error = error or find_mismatch(
                    spec.name, g, want, tolerance_for(self.task, str(want.dtype).removeprefix("torch."))
                )
            error = error or changed_inputs(names, working, member.inputs)
            returned += [] if isinstance(got, str) else [g for g in got if isinstance(g, torch.Tensor)]
            if index == 0 and error is None:
                first = [t.clone() for t in got]
            outcomes.append(case_outcome(self.task, member, error))
        if first is not None:
            for work, pristine in zip(working, family[0].inputs):
                work.copy_(pristine)
            self._poison_allocator(family[0])
            again, _ = self._call(kernel, family[0], working)
            stale = None if isinstance(again, str) or kernel.harness_outputs else next(
                (e for e in (stale_output(str(i), a, working, returned) for i, a in enumerate(again)) if e), None
            )
            if stale:
                outcomes[0] = dataclasses.replace(outcomes[0], correct=False, error=stale)
            elif isinstance(again, str) or not all(same_bits(a, b) for a, b in zip(again, first)):
                outcomes[0] = dataclasses.replace(
                    outcomes[0],
                    correct=False,
                    error="not deterministic: a second call on the same inputs differs bitwise",
                )
        return outcomes

    def _poison_allocator(self, member: Member) -> None:
        """Free blocks of each output's size filled with 0xFF (NaN / -1), so an output allocated
        and left partly unwritten, or aliasing a freed buffer, holds poison rather than answers."""
        import torch

        blocks = [
            torch.full((r.numel() * r.element_size(),), 0xFF, dtype=torch.uint8, device=r.device)
            for r in member.references
        ]
        del blocks

    def _synchronize(self) -> None:
        import torch

        if self.device.backend != "cpu":
            torch.cuda.synchronize()

    def _guard(self, snapshot: Any, threads: int) -> None:
        from arena.harness import guard

        replaced = guard.replaced_names(snapshot)
        if replaced:
            raise Verdict(
                "CHEAT_DETECTED", f"harness-visible functions were replaced: {', '.join(replaced[:10])}"
            )
        if guard.thread_count() > threads:
            raise Verdict(
                "CHEAT_DETECTED",
                f"the candidate left {guard.thread_count() - threads} Python thread(s) running",
            )

    def _time(self, families: list[list[Member]], baseline: Any, candidate: Any) -> None:
        from arena.harness.device import read_clock_sample, start_clock_sample
        from arena.harness.flush import Flusher
        from arena.harness.inputs import make_scalars
        from arena.harness.timing import Bench, hidden_work, measure_event_overhead, time_case
        from arena.task.tolerance import tolerance_for

        flusher = Flusher(self.device)
        clock_sample = start_clock_sample(self.device)  # sampled while the GPU is under load
        event_overhead_us = measure_event_overhead(flusher)
        self.environment.update(flush_bytes=flusher.nbytes, event_overhead_us=event_overhead_us)
        for family in families:
            case = family[0].case
            if not case.timed:
                continue
            tolerances = [
                tolerance_for(self.task, str(r.dtype).removeprefix("torch.")) for r in family[0].references
            ]
            bench = Bench(
                flusher,
                [m.inputs for m in family],
                [m.references for m in family],
                tolerances,
                make_scalars(self.task, case),
                dict(case.dims),
            )
            timing = time_case(
                bench, baseline, candidate, self.settings.trials, self.settings.budget_s_per_case, event_overhead_us
            )
            if timing.error:
                raise Verdict("INCORRECT", f"case {case.name}: {timing.error}")
            # A note, not a verdict: host-side launch cost (autotuned kernels) explains wall time too.
            # Work really hidden on another stream is judged by the profiled call, which every
            # candidate measured faster gets.
            note = hidden_work(timing)
            if note:
                self._mark(f"case {case.name}: {note}")
            index = next(i for i, o in enumerate(self.cases) if o.name == case.name)
            self.cases[index] = dataclasses.replace(
                self.cases[index],
                baseline_us=timing.baseline_us,
                candidate_us=timing.candidate_us,
                baseline_wall_us=timing.baseline_wall_us,
                candidate_wall_us=timing.candidate_wall_us,
            )
        self.environment["clocks_under_load"] = read_clock_sample(clock_sample)
        self.timings_available = True
        self._end_stage("time", True, f"{sum(o.timed for o in self.cases)} timed case(s)")
