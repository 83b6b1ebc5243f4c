from arena.harness.forbidden import check_candidate

SOURCE = b"""
import torch
import triton.language as tl
import torch.nn.functional as F
from torch.cuda import Stream as S
import re


def f(x):
    a = F.softmax(x, -1)
    b = getattr(torch, "softmax")(x)
    c = x.softmax(-1)
    torch.cuda.Event.elapsed_time = None
    r = re.compile("ok")
    return tl.load
"""


def whats(files, baseline=None, forbidden=()):
    return [f.what for f in check_candidate(files, baseline or {}, forbidden)]


def test_task_rules_see_aliases_getattr_and_methods():
    found = whats({"k.py": SOURCE}, forbidden=["torch.nn.functional", "softmax"])
    assert any("torch.nn.functional.softmax" in w for w in found)
    assert any("torch.softmax" in w for w in found)
    assert any("x.softmax" in w for w in found)


def test_harness_rules():
    found = whats({"k.py": SOURCE})
    assert "imports torch.cuda.Stream" in found
    assert any("patches a module" in w for w in found)
    assert not any("re.compile" in w for w in found)  # .compile on a module is not the builtin


def test_baseline_exempts_harness_rules_but_not_task_rules():
    assert whats({"k.py": SOURCE}, {"k.py": SOURCE}) == []
    assert whats({"k.py": SOURCE}, {"k.py": SOURCE}, ["softmax"]) != []


def test_local_names_are_not_modules():
    assert whats({"k.py": b"def f(signal):\n    return signal.kill\n"}) == []


def test_hip_tokens_skip_comments_and_dotted_task_rules():
    source = b'// hipblasSgemm would be cheating\nextern "C" int add() { return 0; }\n'
    assert whats({"k.hip": source}, forbidden=["torch.add"]) == []
    assert whats({"k.hip": source + b"int g() { rocblas_sgemm(); std::thread t; }\n"}) == [
        "uses std::thread/async",
        "uses rocblas_sgemm",
    ]
    assert whats({"k.hip": b"int f() { hipMemcpy(); }"}, forbidden=["hipMemcpy"]) == [
        "uses hipMemcpy (forbidden by the task)"
    ]
