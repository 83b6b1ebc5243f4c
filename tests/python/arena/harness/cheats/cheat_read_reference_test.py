# Attack 24: find the expected outputs in the process's memory (gc reached through names built at
# run time, past the static screen) and return a copy: any tensor that is not an input but has the
# output's shape and dtype. Before harness v2 the references lived in the candidate's process.
# Now the judge holds them and the candidate runs in a worker of its own: there is nothing to find.
# Expected verdict: INCORRECT (what it found is not the answer), never PASSED.

FIND_REFERENCE = """
import os
import torch

def add(x, y):
    collector = getattr(os, "sy" + "s").modules["g" + "c"]
    for thing in getattr(collector, "get_" + "objects")():
        if type(thing) is torch.Tensor and thing.shape == x.shape and thing.dtype == x.dtype:
            if thing.data_ptr() not in (x.data_ptr(), y.data_ptr()) and bool(thing.abs().sum() > 0):
                return thing.clone()
    return torch.zeros_like(x)
"""


def test_the_references_are_not_in_the_candidates_process(run_candidate):
    result = run_candidate(FIND_REFERENCE)
    assert result.status == "INCORRECT", (result.status, result.errors)


def test_the_judge_cannot_be_read_through_proc(run_candidate):
    # The judge is the worker's parent and non-dumpable: the kernel refuses to open its memory to the
    # worker (same user, no capabilities). Had the read worked, the candidate returns zeros.
    source = """
import os
import torch

def add(x, y):
    parent = getattr(os, "getp" + "pid")()
    fd = getattr(os, "op" + "en")(f"/proc/{parent}/m" + "em", os.O_RDONLY)
    getattr(os, "clo" + "se")(fd)
    return torch.zeros_like(x)
"""
    result = run_candidate(source)
    assert result.status == "RUNTIME_ERROR", (result.status, result.errors)
    assert "PermissionError" in " ".join(result.errors)
