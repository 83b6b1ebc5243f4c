# Attack 29: work on a timed chunk's inputs before the judge's clock starts. The candidate leaves
# a hook in its worker (a profile function, set at import through built names) that runs where
# the worker's harness code takes in a chunk's sets, and works on them there on a stream of its
# own, not behind `go`; its timed calls then hand back what was made ahead. Threads are not
# needed for this, so the per-chunk thread count does not see it. The judge copies the sets into
# the worker's lent pool only after the worker has queued its chunk, just before `go`:
# 1. Sums made as soon as the sets are known are of whatever the pool held (the last chunk's
#    sets; on a GPU checked calls are chunks too, so the first checked one already shows it).
#    Expected: INCORRECT (when the worker drew its own sets before `go`: PASSED, faster).
# 2. Memory-heavy work on its own stream from then on, to meet the values as they land: the
#    judge's copies of the sets share the GPU with it and run slow; where it runs on into the
#    span the judge's clock sees it, and past the span the frozen worker's GPU work slows the
#    judge's probe. Expected: CHEAT_DETECTED. (A first try, 100 passes, all ran within the
#    judge's wait, before the copies: PASSED, and harmless.)

from arena_testing.gpu import needs_gpu

_HOOK = """
import os

_sys = getattr(os, "sy" + "s")
_torch = _sys.modules["torch"]
_ahead = {}
_side = []


def _hook(frame, event, arg):
    if event != "return" or frame.f_code.co_name != "_lent" + "_sets" or not isinstance(arg, list):
        return
    if not _side:
        _side.append(_torch.cuda.Stream())
    with _torch.cuda.stream(_side[0]):
        wanted = _work(arg)
    if wanted:
        _torch.cuda.current_stream().wait_stream(_side[0])  # the timed calls wait for its results


getattr(_sys, "set" + "profile")(_hook)


def add(x, y):
    made = _ahead.pop(x.data_ptr(), None)
    return made if made is not None else x - (-y)
"""

SUMS_AHEAD = (
    _HOOK
    + """

def _work(sets):
    for x, y in sets:
        _ahead[x.data_ptr()] = x - (-y)
    return True
"""
)

BESIDE_THE_COPIES = (
    _HOOK
    + """
_buffer = []


def _work(sets):
    if not _buffer:
        _buffer.append(_torch.empty(1 << 28, dtype=_torch.uint8, device="cuda"))
    for _ in range(400):  # about 0.1 ms each on an H200: past the judge's wait and its copies
        _buffer[0].mul_(1)
    return False  # not waited for: the timed calls are honest, the GPU is shared from here on
"""
)


@needs_gpu  # timed chunks run only on a GPU
def test_sums_made_before_the_clock_are_of_no_inputs(run_candidate):
    result = run_candidate(SUMS_AHEAD, backend="cuda", budget_s_per_case=0.2)
    assert result.status == "INCORRECT", (result.status, result.errors)
    # The hook runs wherever the worker takes in lent sets: the checked calls' chunks too.
    errors = " ".join(result.errors)
    assert "timed call" in errors or "elements differ" in errors, errors


@needs_gpu
def test_gpu_work_beside_the_copies_of_the_inputs_is_caught(run_candidate):
    result = run_candidate(BESIDE_THE_COPIES, backend="cuda", budget_s_per_case=0.2)
    assert result.status == "CHEAT_DETECTED", (result.status, result.errors)
    # Which defence fires depends on where the work lands: beside the copies (they run slow),
    # inside the span (the judge's clock sees more than the samples: on the H200, 1151.58 us a
    # call against 304.50 claimed), or still running at the next freeze (the probe runs slow).
    caught_by = ("ran beside them", "judge's clock saw", "frozen")
    assert any(words in result.errors[0] for words in caught_by), result.errors
