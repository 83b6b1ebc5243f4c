# Attacks on the judge's numbers from inside the candidate's worker, on a real GPU (skipped where
# torch sees none: bench/judge_check.sh runs them on the H200).
# 25. Forge the samples: swap the code of the worker's event-time function (the function object
#     stays) so every call reads 4x faster. Expected: CHEAT_DETECTED. Since session 24 the
#     worker's snapshot holds each function's code too, and names the swap before the judge's
#     chunk clock (which sees the real work) is reached: the H200 run of session 26 saw it so.
# 26. Keep seconds of GPU work queued from a process of its own, so the baseline would be timed on
#     a shared GPU while the worker is frozen. The judge's probe runs slow. Expected: CHEAT_DETECTED.
# 27. Record `done` as soon as `go` is waited on, so the judge's span would end before the work
#     (and forge the samples too). Expected: INCORRECT, the judge's snapshot of the slots holding
#     poison (written 2026-11-30 after the last device call: first run due next session).
# Control: the honest kernel of the same task PASSES with timings.


from arena_testing.gpu import needs_gpu
from arena_testing.harness_tasks import TRITON_ADD, build_task

pytestmark = needs_gpu

FORGE_SAMPLES = (
    TRITON_ADD
    + """
import os

_timing = getattr(os, "sy" + "s").modules["arena.harness.tim" + "ing"]
_function = getattr(_timing, "elapsed" + "_us")
_forged = getattr(lambda start, end: _elapsed_ms(start, end) * 250.0, "__co" + "de__")
getattr(type(_function), "__co" + "de__").__set__(_function, _forged)
"""
)

DONE_EARLY = (
    FORGE_SAMPLES
    + """
# Code swapped in place (the functions' identities, which the worker's snapshot watches, stay);
# the new code runs with shared_gpu's globals, where the list of opened events is put.
_shared = getattr(os, "sy" + "s").modules["arena.harness.shared_g" + "pu"]
getattr(_shared, "__di" + "ct__")["_arena_opened"] = []
getattr(_shared, "__di" + "ct__")["_c"] = getattr(_shared, "ctyp" + "es")
_event = getattr(_shared, "SharedEv" + "ent")


def _open_and_keep(cls, rt, handle):
    event = _c.c_void_p()
    rt.call("IpcOpenEventHandle", _c.byref(event), _handle(handle))
    opened = cls(rt, event, handle)
    _arena_opened.append(opened)
    return opened


def _wait_then_done(self):
    self.rt.call("StreamWaitEvent", _current_stream(), self.event, _c.c_uint(0))  # `go`
    for other in _arena_opened:
        if other.handle != self.handle:
            other.rt.call("EventRecord", other.event, _current_stream())  # `done`, before any call


def _record_nothing(self):
    return None


def _swap(function, replacement):
    getattr(type(function), "__co" + "de__").__set__(function, getattr(replacement, "__co" + "de__"))


_swap(getattr(_event, "op" + "en").__func__, _open_and_keep)
_swap(getattr(_event, "wa" + "it"), _wait_then_done)
_swap(getattr(_event, "rec" + "ord"), _record_nothing)
"""
)

BUSY_WHILE_FROZEN = (
    TRITON_ADD
    + '''
import os

_modules = getattr(os, "sy" + "s").modules
_LOAD = """
import time, torch
torch.zeros(1, device="cuda")
torch.cuda._sleep(200_000_000)
open("/tmp/busy", "w").close()
while True:
    for _ in range(20):
        torch.cuda._sleep(200_000_000)
    torch.cuda.synchronize()
"""
# A process of its own (no Python thread for the guards to count), its own GPU context, and
# seconds of GPU work always queued: freezing it stops its host, not its queue.
getattr(os, "posix_sp" + "awn")(_modules["sy" + "s"].executable, [_modules["sy" + "s"].executable, "-c", _LOAD],
                                dict(os.environ))
for _ in range(600):  # the import waits until the GPU is busy (the compile stage pays for it)
    if getattr(os, "pa" + "th").exists("/tmp/busy"):
        break
    _modules["ti" + "me"].sleep(0.1)
'''
)


def _task(tmp_path):
    return build_task(tmp_path, n=1 << 22)


def test_control_the_honest_kernel_passes(run_candidate, tmp_path):
    result = run_candidate(TRITON_ADD, task=_task(tmp_path), backend="auto", budget_s_per_case=0.3)
    assert result.status == "PASSED", result.errors
    assert result.timings_available


def test_forged_samples_are_caught_by_the_judges_clock(run_candidate, tmp_path):
    result = run_candidate(FORGE_SAMPLES, task=_task(tmp_path), backend="auto", budget_s_per_case=0.3)
    assert result.status == "CHEAT_DETECTED", (result.status, result.errors)
    said = result.errors[0]
    assert "judge's clock" in said or "functions were replaced: arena.harness.timing.elapsed_us.__code__" in said


def test_gpu_work_left_running_while_frozen_is_caught(run_candidate, tmp_path):
    result = run_candidate(
        BUSY_WHILE_FROZEN, task=_task(tmp_path), backend="auto", budget_s_per_case=0.3, timeout_s=300
    )
    # Caught first by the process count after the checked calls; without it by the probe when its
    # queue outlives the freeze, or by the chunk clock when the contexts' time slices land in the
    # candidate's own chunk (bench/results/2026-11-30.md, "Harness v2 on the H200").
    assert result.status == "CHEAT_DETECTED", (result.status, result.errors)
    assert any(reason in result.errors[0] for reason in ("process(es) running", "frozen", "judge's clock"))


def test_done_recorded_before_the_work_leaves_poison_in_the_snapshot(run_candidate, tmp_path):
    result = run_candidate(DONE_EARLY, task=_task(tmp_path), backend="auto", budget_s_per_case=0.3)
    assert result.status in ("INCORRECT", "CHEAT_DETECTED"), (result.status, result.errors)
