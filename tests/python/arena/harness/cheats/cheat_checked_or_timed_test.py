# Attack 28, second form: tell a checked call from a timed one by anything in the worker's process
# (the caller frames, the worker's state) and be honest only where the check looks. On a GPU every
# call of the candidate, the first, the checked, the repeated and the timed ones, goes through the
# one chunk procedure (lent.Lent.checked_call): the stack and the worker's state are the same, and
# the checks that ran in the worker's own `call` (inputs untouched, no stored answer, no torch mode
# left on, the recorder) run on the chunk's outputs and lent inputs.
# Expected: the stack watcher sees one stack and PASSES; the planted faults are caught on the GPU.

from arena_testing.gpu import needs_gpu
from arena_testing.harness_tasks import STORED_ADD, TRITON_ADD

pytestmark = needs_gpu
GPU = {"backend": "cuda", "budget_s_per_case": 0.2}

# Honest while every call it has seen came from one stack; wrong from the first call whose stack
# differs (a checked call's `call` frame against a timed chunk's, as before the procedures met).
STACK_WATCHER = """
import os

_frame = getattr(getattr(os, "sy" + "s"), "_get" + "frame")
_stacks = set()


def add(x, y):
    names, frame = [], _frame(1)
    while frame is not None:
        names.append(frame.f_code.co_name)
        frame = frame.f_back
    _stacks.add(tuple(names))
    return x - (-y) if len(_stacks) == 1 else x - (-y) + 1
"""


def test_checked_and_timed_calls_come_from_one_stack(run_candidate):
    result = run_candidate(STACK_WATCHER, **GPU)
    assert result.status == "PASSED", (result.status, result.errors)
    assert any(case.candidate_us for case in result.cases), "no case was timed: the test proves nothing"


def test_an_input_changed_in_a_checked_chunk_is_caught(run_candidate):
    result = run_candidate(TRITON_ADD.replace("    return z", "    y.fill_(0.0)\n    return z"), **GPU)
    assert result.status == "INCORRECT", (result.status, result.errors)
    assert "input y was modified" in result.cases[0].error


def test_an_input_changed_only_in_timed_chunks_is_caught(run_candidate):
    """Honest in the first 20 calls (every checked one), then it writes an input after reading it:
    the lent inputs of every timed chunk are compared with the sets as drawn, as a checked one's."""
    source = TRITON_ADD.replace("def add(x, y):", "_calls = [0]\n\n\ndef add(x, y):").replace(
        "    return z", "    _calls[0] += 1\n    if _calls[0] > 20:\n        y.fill_(0.0)\n    return z"
    )
    result = run_candidate(source, **GPU)
    assert result.status == "INCORRECT", (result.status, result.errors)
    assert "of a chunk: input y was modified" in result.errors[0], result.errors


def test_a_stored_answer_in_a_checked_chunk_is_caught(run_candidate):
    stored = STORED_ADD
    assert "_answers[key]" in stored
    result = run_candidate(stored, **GPU)
    assert result.status == "INCORRECT", (result.status, result.errors)
    assert any("an earlier call's output, returned again" in c.error for c in result.cases), result.cases


def test_a_forbidden_op_in_the_first_chunk_is_caught(run_candidate):
    source = "_calls = [0]\n\n\ndef add(x, y):\n    _calls[0] += 1\n    return x + y if _calls[0] == 1 else x - (-y)\n"
    result = run_candidate(source, **GPU)
    assert result.status == "CHEAT_DETECTED", (result.status, result.errors)
    assert "forbidden torch function(s) in a checked call (first call)" in result.errors[0]


# A torch function mode entered in the first call and never left: every later torch call of the
# worker's would run under it, unrecorded by the judge's own recorder.
MODE_LEFT_ON = """
import torch

_Mode = getattr(torch, "over" + "rides").TorchFunctionMode


class _Quiet(_Mode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


_on = []


def add(x, y):
    if not _on:
        _on.append(_Quiet())
        _on[0].__enter__()  # and never left
    return x - (-y)
"""


def test_a_torch_mode_left_on_in_a_checked_chunk_is_caught(run_candidate):
    result = run_candidate(MODE_LEFT_ON, **GPU)
    assert result.status == "CHEAT_DETECTED", (result.status, result.errors)
    assert "mode(s) left active" in result.errors[0]
