# Attack 1: call the library op instead of writing a kernel (torch.add here, which the task forbids),
# directly (caught by the static check) or through a string-built name / an operator (caught at
# run time: the torch functions and Tensor methods a checked call runs are matched against the
# forbidden list). A C function that torch.nn.functional or torch.linalg exports (F.linear is
# torch._C._nn.linear) is recorded under that namespace's name too, so a whole forbidden namespace
# covers it however its name was built.
# On a GPU, a library call the recorder cannot see (torch function handling switched off by a
# name built at run time) is caught by its kernels: the profiled call names cuBLAS's.
# Expected verdict: CHEAT_DETECTED.


import pytest

from arena_testing.gpu import needs_gpu
from arena_testing.harness_tasks import TRITON_MATMUL, build_matmul_task

HIDDEN_MM = """
import torch


def matmul(a, b):
    with getattr(getattr(torch, "_" + "C"), "Disable" + "TorchFunction")():
        return getattr(torch, "m" + "m")(a, b)
"""


LINEAR_BY_BUILT_NAMES = """
import torch


def matmul(a, b):
    namespace = getattr(torch.nn, "function" + "al")
    return getattr(namespace, "lin" + "ear")(a, b.t())
"""

LINALG_BY_BUILT_NAMES = """
import torch


def matmul(a, b):
    return getattr(getattr(torch, "lin" + "alg"), "mat" + "mul")(a, b)
"""


def test_direct_call_is_caught_statically(run_candidate):
    result = run_candidate("import torch\n\ndef add(x, y):\n    return torch.add(x, y)\n")
    assert result.status == "CHEAT_DETECTED"
    assert "torch.add" in result.errors[0]


def test_operator_is_caught_at_run_time(run_candidate):
    result = run_candidate("def add(x, y):\n    return x + y\n")
    assert result.status == "CHEAT_DETECTED"
    assert "forbidden torch function" in result.errors[0]


@needs_gpu  # the kernels' names come from its profiler
def test_a_library_call_hidden_from_the_recorder_is_caught_by_its_kernels(run_candidate, tmp_path):
    task = build_matmul_task(tmp_path)
    result = run_candidate(HIDDEN_MM, task=task, backend="auto", budget_s_per_case=0.3)
    assert result.status == "CHEAT_DETECTED", (result.status, result.errors)
    assert "cuBLAS" in result.errors[0] and "which its baseline does not use" in result.errors[0]
    # The control: the same task's honest Triton kernel, faster than the baseline, is no cheat.
    honest = TRITON_MATMUL.replace("BM=32, BN=32, BK=32", "BM=128, BN=128, BK=32").replace(
        "triton.cdiv(M, 32), triton.cdiv(N, 32)", "triton.cdiv(M, 128), triton.cdiv(N, 128)"
    )
    result = run_candidate(honest, task=task, backend="auto", budget_s_per_case=0.3)
    assert result.status == "PASSED", (result.status, result.errors)
    assert any(stage.name == "profile" for stage in result.stages)  # it was faster, so it was profiled


# Matrix products the matmul task's list leaves out: the family it marks forbids them too.
CHAIN_MATMUL = """
import torch


def matmul(a, b):
    return torch.chain_matmul(a, b)
"""

RMATMUL = """
def matmul(a, b):
    return b.__rmatmul__(a)
"""


def test_a_matrix_product_the_list_leaves_out_is_caught_statically(run_candidate, tmp_path):
    result = run_candidate(CHAIN_MATMUL, task=build_matmul_task(tmp_path, size=64))
    assert result.status == "CHEAT_DETECTED", (result.status, result.errors)
    assert "torch.chain_matmul" in result.errors[0]


@pytest.mark.parametrize(
    ("source", "name"),
    [
        (LINEAR_BY_BUILT_NAMES, "torch.nn.functional.linear"),
        (LINALG_BY_BUILT_NAMES, "torch.linalg.matmul"),
        (RMATMUL, "torch.rmatmul"),
        (CHAIN_MATMUL.replace("torch.chain_matmul", 'getattr(torch, "chain_" + "matmul")'), "chain_matmul"),
    ],
)
def test_a_namespace_function_reached_by_built_names_is_caught_at_run_time(run_candidate, tmp_path, source, name):
    """The matmul task forbids torch.nn.functional and torch.matmul: F.linear was recorded as
    "torch.linear" and torch.linalg.matmul as "torch.linalg_matmul" before, and PASSED."""
    result = run_candidate(source, task=build_matmul_task(tmp_path, size=64))
    assert result.status == "CHEAT_DETECTED", (result.status, result.errors)
    assert name in result.errors[0] and "forbidden torch function" in result.errors[0]
