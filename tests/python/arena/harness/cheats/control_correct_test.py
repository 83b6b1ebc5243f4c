# Control: a correct, different Triton candidate (block size 256, 4 warps of work per program).
# Expected verdict: PASSED.


def test_correct_candidate_passes(run_candidate):
    result = run_candidate("""
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def _k(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
            o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = o < n
            tl.store(z_ptr + o, tl.load(y_ptr + o, mask=m) + tl.load(x_ptr + o, mask=m), mask=m)


        def add(x, y):
            z = torch.empty_like(x)
            _k[(triton.cdiv(x.numel(), 256),)](x, y, z, x.numel(), BLOCK=256)
            return z
    """)
    assert result.status == "PASSED", result.errors
    assert result.correct and all(c.correct for c in result.cases)
