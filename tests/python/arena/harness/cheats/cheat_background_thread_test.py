# Attack 9: return at once and let a background thread finish the work after the timer stops.
# Static: threading/_thread/concurrent imports are forbidden. At run time: no Python thread may
# outlive the checked calls (and the outputs are checked after the call returns).
# Expected verdict: CHEAT_DETECTED.


def test_threading_import_is_caught_statically(run_candidate):
    result = run_candidate(
        "import threading\nimport torch\n\ndef add(x, y):\n    return torch.empty_like(x)\n"
    )
    assert result.status == "CHEAT_DETECTED"


def test_thread_started_through_a_back_door(run_candidate):
    result = run_candidate("""
        import os
        import time
        import torch
        import triton
        import triton.language as tl

        threading = getattr(os, "sy" + "s").modules["thread" + "ing"]


        @triton.jit
        def _k(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
            o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = o < n
            tl.store(z_ptr + o, tl.load(x_ptr + o, mask=m) + tl.load(y_ptr + o, mask=m), mask=m)


        def add(x, y):
            z = torch.empty_like(x)
            _k[(triton.cdiv(x.numel(), 1024),)](x, y, z, x.numel(), BLOCK=1024)
            threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
            return z
    """)
    assert result.status == "CHEAT_DETECTED"
    assert "thread" in result.errors[0]
