# Attack 18: pin data in L2 with a persisting access window so the flush does not evict it.
# Static (HIP/C++ tokens): stream attributes, access-policy windows and device limits are
# forbidden; Python candidates cannot reach the CUDA runtime (cuda, ctypes, cupy... forbidden).
# At run time on CUDA the judge sets the persisting-L2 limit to 0 and resets persisting lines
# before every timed chunk (judged_timing.Judge.reset_l2).
# Expected verdict: CHEAT_DETECTED.

from arena_testing.harness_tasks import HIP_ADD


def test_access_policy_window_in_hip_source(run_candidate):
    source = HIP_ADD.replace(
        "    hipLaunchKernelGGL",
        "    hipStreamAttrValue v; v.accessPolicyWindow.num_bytes = 1 << 20;\n"
        "    hipStreamSetAttribute(stream, hipStreamAttributeAccessPolicyWindow, &v);\n    hipLaunchKernelGGL",
    )
    result = run_candidate(source, hip=True)
    assert result.status == "CHEAT_DETECTED"
    assert "hipStreamSetAttribute" in " ".join(result.errors)


def test_cuda_runtime_from_python(run_candidate):
    result = run_candidate(
        "from cuda.bindings import runtime\nimport torch\n\ndef add(x, y):\n    return torch.empty_like(x)\n"
    )
    assert result.status == "CHEAT_DETECTED"
