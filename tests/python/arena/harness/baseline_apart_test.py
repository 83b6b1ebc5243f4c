"""The baseline timed in a worker of its own (settings.baseline_worker, baseline_apart.py): the
worker loads the side it is told to, the judge's own workers are never frozen or counted as the
candidate's, and on a GPU both sides run through the one chunk procedure."""

import re
import statistics

import pytest
import torch

from arena.harness import candidate_worker, judged_timing, lent
from arena.harness.candidate_worker import CandidateFailed, CandidateWorker, trust, untrust
from arena.harness.frames import unpack_tensors
from arena_testing.gpu import needs_gpu
from arena_testing.harness_tasks import HIP_ADD, TRITON_ADD, build_task, harness_job

SUBTRACT = TRITON_ADD.replace("mask=mask) + tl.load", "mask=mask) - tl.load")


def _started(job):
    worker = CandidateWorker()
    worker.request("start", {"task": dict(job.task), "dirs": dict(job.dirs), "backend": "cpu", "device": 0})
    return worker


def _call(worker, n):
    header, data = worker.request(
        "call",
        {"case": "small", "seed": 5, "outputs": [{"dtype": "float32", "shape": [n]}], "scalars": {}, "dims": {"N": n}},
    )
    assert "outcome" not in header, header
    return unpack_tensors(header["outputs"], data, torch.device("cpu"))[0]


def test_a_worker_told_the_baseline_side_loads_the_baseline_not_the_candidate(tmp_path, cpu):
    task = build_task(tmp_path)
    job = harness_job(tmp_path, task, SUBTRACT)  # the candidate subtracts; the baseline adds
    sides = {}
    for side in ("baseline", "candidate"):
        worker = _started(job)
        try:
            worker.request("load", {"side": side} if side == "baseline" else {})
            sides[side] = _call(worker, 129)
        finally:
            worker.close()
    from arena.harness.families import inputs_for

    x, y = inputs_for(task, task.cases[0], 5, torch.device("cpu"), True)
    assert torch.equal(sides["baseline"], x + y)
    assert torch.equal(sides["candidate"], x - y)


def test_the_judges_own_workers_are_neither_frozen_nor_counted_with_the_candidates(tmp_path, cpu, monkeypatch):
    """In a sandbox, freezing and the count of processes left running take every process of the
    sandbox but the judge's: a trusted worker's processes are passed over (else freezing the
    candidate would stop the baseline's worker, and its processes would read as the candidate's)."""
    monkeypatch.setattr(candidate_worker, "_TRUSTED", set())
    monkeypatch.setenv("ARENA_SANDBOXED", "1")  # freezing and counting as inside one sandbox
    job = harness_job(tmp_path, build_task(tmp_path), None)
    candidate, baseline = _started(job), _started(job)
    try:
        if len(baseline._own_processes()) == 1:
            pytest.skip("no user and PID namespaces here: each worker is the judge's child, passed over already")
        own = set(baseline._own_processes())
        assert own & set(candidate._sandbox_pids()) == own - {baseline.process.pid}
        trust(baseline)
        assert not own & set(candidate._sandbox_pids())
        assert set(candidate._own_processes()) & set(baseline._sandbox_pids())  # only as trusted as told
        untrust(baseline)  # closing: its pids may be given out again
        assert own & set(candidate._sandbox_pids()) == own - {baseline.process.pid}
    finally:
        candidate.close()
        baseline.close()


class _ApartLent:
    """The baseline's own worker's lent block, as Lent._apart_chunk uses it: its chunk clocked
    (call k's outputs written into slot k, its samples and errors replied), its slots snapshot."""

    def __init__(self, layout: lent.Layout, reply: dict, fail: Exception | None = None) -> None:
        self.outputs = type("Block", (), {"bytes": torch.zeros(layout.nbytes(), dtype=torch.uint8)})()
        self.snapshot_bytes = torch.zeros(layout.nbytes(), dtype=torch.uint8)
        self.staged: list = []
        self.reply, self.fail, self.poisoned = reply, fail, False

    def clocked(self, count: int):
        if self.fail is not None:
            raise self.fail
        self.poisoned = bool((self.outputs.bytes == 0xFF).all())  # every slot poisoned before the chunk
        self.snapshot_bytes.copy_(torch.arange(self.snapshot_bytes.numel()) % 251)
        return 900.0, self.reply


def _lent_with(layout: lent.Layout) -> lent.Lent:
    chunk = object.__new__(lent.Lent)
    chunk.layout, chunk.staged = layout, [["set 0"], ["set 1"]]
    chunk.reference_bytes = torch.zeros(layout.nbytes(), dtype=torch.uint8)
    chunk.landing = {side: {"aimed": 0, "landed": 0} for side in ("judge", "worker")}
    return chunk


def test_the_baseline_chunk_in_its_own_worker_gives_the_chunk_its_references():
    """Lent._apart_chunk: the candidate's staged sets lent to the baseline's worker, its slots
    poisoned first, its snapshot taken as the chunk's references, its landing as the baseline's."""
    layout = lent.Layout.of([torch.empty(3, dtype=torch.float32)], 2)
    chunk = _lent_with(layout)
    apart = _ApartLent(layout, {"times_us": [4.0, 5.0], "errors": [], "landing": {"aimed": 2, "landed": 1}})
    assert chunk._apart_chunk(apart) == (900.0, [4.0, 5.0])  # type: ignore[arg-type]  # a stand-in
    assert apart.staged is chunk.staged and apart.poisoned
    assert torch.equal(chunk.reference_bytes, apart.snapshot_bytes) and int(chunk.reference_bytes.sum()) > 0
    assert chunk.landing == {"judge": {"aimed": 2, "landed": 1}, "worker": {"aimed": 0, "landed": 0}}


@pytest.mark.parametrize(
    "reply, fail, why",
    [
        ({"times_us": [4.0, 5.0], "errors": ["boom"]}, None, "failed in a timed call in its own worker: boom"),
        ({"times_us": [4.0]}, None, "did not return one time per timed call"),
        ({}, CandidateFailed("it died"), "the baseline's own worker failed in a timed chunk: it died"),
    ],
)
def test_a_failing_baseline_worker_is_the_harnesss_error_never_the_candidates_verdict(reply, fail, why):
    """Its failures are RuntimeErrors of the judge's (never a CandidateFailed, which the run reads as
    the candidate's worker failing), and the references are left as they were."""
    layout = lent.Layout.of([torch.empty(3, dtype=torch.float32)], 2)
    chunk = _lent_with(layout)
    with pytest.raises(RuntimeError, match=why) as raised:
        chunk._apart_chunk(_ApartLent(layout, reply, fail))  # type: ignore[arg-type]
    assert not isinstance(raised.value, CandidateFailed) and int(chunk.reference_bytes.sum()) == 0


@pytest.mark.parametrize("apart, excess", [(None, 100.0), (object(), 0.0)])
def test_the_baselines_own_excess_takes_off_switches_only_where_its_worker_was_clocked(apart, excess):
    """Judge._baseline_excess: the judge's clock around the baseline's chunk, less its empty procedure
    and spin a call and its samples; where the baseline ran in its own worker, that span holds two
    context switches too (measured as the candidate's are), which come off as well."""
    judge = object.__new__(judged_timing.Judge)
    judge.apart, judge.apart_switch_us, judge.judge_empty_us = apart, 100.0, {"c": 10.0}
    tally = judged_timing._Tally(baseline=[100.0] * 4, baseline_spans=[2 * (10.0 + 20.0 + 100.0) + 100.0] * 2)
    tally.spin_us = 20.0
    assert judge._baseline_excess("c", tally, 2) == [excess, excess]


class _Apart:
    def __init__(self) -> None:
        self.done: list[str] = []

    def load(self) -> None:
        self.done.append("load")

    def close(self) -> None:
        self.done.append("close")


@pytest.mark.parametrize(
    "started, kept",
    [
        ({"apart": "apart, its own /proc", "scoped": ""}, True),
        (
            {
                "apart": "",
                "scoped": "signals, ptrace and abstract sockets scoped to its own processes (Landlock ABI 7)",
            },
            True,
        ),
        (
            {
                "apart": "",
                "scoped": "not scoped: ...; signals to the judge's processes refused (a seccomp filter, x86_64)",
            },
            False,
        ),
        ({"apart": "", "scoped": ""}, False),
    ],
)
def test_the_baseline_gets_a_worker_of_its_own_only_where_the_candidates_cannot_name_it(tmp_path, started, kept):
    """Run._load_apart reads the candidate's worker's start: in PID namespaces of its own, or under
    Landlock's scopes, it cannot signal another worker; under the seccomp filter alone (which names
    the judge) it could, so the judge times the baseline itself and closes the other worker."""
    from arena.harness.run import Run

    run = Run.__new__(Run)
    run._marks, run._stage_start, run.task = [], 0.0, build_task(tmp_path)
    apart = run.apart = _Apart()  # type: ignore[assignment]
    run._load_apart(started)
    assert (run.apart is apart) == kept
    assert apart.done == (["load"] if kept else ["close"])
    assert any("the baseline timed in the judge" in mark for mark in run._marks) != kept


@needs_gpu
@pytest.mark.parametrize("hip", [False, True])
def test_a_noop_with_the_baseline_in_a_worker_of_its_own_reads_one(run_candidate, tmp_path, hip):
    """The baseline is loaded in its worker before the judge deletes its built library (HIP), its
    chunks and the candidate's run through the same procedure, and a no-op reads 1.00 within a
    small case's noise."""
    task = build_task(tmp_path, n=1 << 16, hip=hip)
    source = HIP_ADD if hip else None
    result = run_candidate(source, task=task, hip=hip, backend="auto", budget_s_per_case=0.3, baseline_worker=True)
    assert result.status == "PASSED", result.errors
    setup = next(s.log for s in result.stages if s.name == "setup")
    timed = next(s.log for s in result.stages if s.name == "time")
    assert "the baseline loaded in a worker of its own" in setup, setup
    assert "the baseline timed in a worker of its own" in timed, timed
    switches = re.search(r"worker of its own \(settings.baseline_worker.*switches (\d+) us a chunk", timed)
    assert switches and int(switches.group(1)) > 0, timed
    main = next(c for c in result.cases if c.name == "main")
    assert 0.85 < statistics.median(main.baseline_us) / statistics.median(main.candidate_us) < 1.15
