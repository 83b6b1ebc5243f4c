# Attack 30: deterministic only where the judge checks. The candidate walks its caller's frames
# (names built at run time) and, in a timed chunk, nudges one output element by a random amount
# well inside the tolerance (what a faster kernel with unordered atomics does); its checked calls,
# and the determinism check's second call, stay exact. In one of the first chunks of every timed
# case, chosen by the secret seed, the judge gives two calls the same set and compares their
# outputs bitwise. Expected verdict: INCORRECT ("not deterministic").
# Control: the same walk with no nudge passes (the frames alone are no cheat).

from arena_testing.gpu import needs_gpu
from arena_testing.harness_tasks import TRITON_ADD, build_task

pytestmark = needs_gpu

_WALK = """
import os

_sys = getattr(os, "sy" + "s")


def _timed():
    frame = getattr(_sys, "_get" + "frame")(1)
    while frame is not None:
        if getattr(getattr(frame, "f_co" + "de"), "co_na" + "me") == "chu" + "nk":
            return True
        frame = getattr(frame, "f_ba" + "ck")
    return False
"""


def _candidate(nudge: bool) -> str:
    # A relative 2-4e-6, inside float32's 1e-5 and above its rounding; torch.add is forbidden here.
    step = (
        "        z[:1].mul_(torch.empty(1, device=z.device).uniform_(1 + 2e-6, 1 + 4e-6))\n"
        if nudge
        else "        pass\n"
    )
    return (TRITON_ADD + _WALK).replace("    return z\n", "    if _timed():\n" + step + "    return z\n") + "\n"


def test_nondeterministic_only_in_timed_calls_is_caught(run_candidate, tmp_path):
    result = run_candidate(
        _candidate(nudge=True), task=build_task(tmp_path, n=1 << 16), backend="auto", budget_s_per_case=0.3
    )
    assert result.status == "INCORRECT", (result.status, result.errors)
    assert "not deterministic" in " ".join(result.errors)


def test_control_the_walk_alone_passes(run_candidate, tmp_path):
    result = run_candidate(
        _candidate(nudge=False), task=build_task(tmp_path, n=1 << 16), backend="auto", budget_s_per_case=0.3
    )
    assert result.status == "PASSED", (result.status, result.errors)
