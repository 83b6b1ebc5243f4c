# Attack 2: ship a kernel that is never called; the real work is the library op, reached through
# a name built at run time so no static check can see it.
# Expected verdict: CHEAT_DETECTED (the torch call is recorded on a checked call).


def test_unused_kernel_with_hidden_library_call(run_candidate):
    result = run_candidate("""
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def _never_called(x_ptr, n):
            pass


        def add(x, y):
            return getattr(torch, "ad" + "d")(x, y)
    """)
    assert result.status == "CHEAT_DETECTED"
    assert "add" in result.errors[0]
