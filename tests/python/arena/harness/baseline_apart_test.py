"""The baseline timed in a worker of its own (settings.baseline_worker, baseline_apart.py): the
worker loads the side it is told to, the judge's own workers are never frozen or counted as the
candidate's, and on a GPU both sides run through the one chunk procedure."""

import re
import statistics

import pytest
import torch

from arena.harness import candidate_worker
from arena.harness.candidate_worker import CandidateWorker, trust, untrust
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
