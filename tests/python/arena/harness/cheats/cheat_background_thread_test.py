# Attack 9: return at once and let a background thread finish the work after the timer stops.
# Static: threading/_thread/concurrent imports are forbidden. At run time: no Python thread may
# outlive the checked calls (and the outputs are checked after the call returns).
# Expected verdict: CHEAT_DETECTED.
# The threads and processes the candidates leave behind sleep an hour: longer than a test can run
# (Pants stops it at 600 s), so the judge's count never depends on how fast its calls were.

from arena_testing.gpu import needs_gpu
from arena_testing.harness_tasks import TRITON_ADD


def test_threading_import_is_caught_statically(run_candidate):
    result = run_candidate("import threading\nimport torch\n\ndef add(x, y):\n    return torch.empty_like(x)\n")
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
            threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
            return z
    """)
    assert result.status == "CHEAT_DETECTED"
    assert "thread" in result.errors[0]


def test_a_process_left_running_beside_the_calls(run_candidate):
    # A helper process instead of a thread (it could keep a GPU busy while the baseline is timed):
    # the judge counts the candidate's processes through the OS, where the candidate cannot hide them.
    spawn = (
        "\nimport os\n"
        "_sys = getattr(os, 'sy' + 's')\n"
        "getattr(os, 'posix_sp' + 'awn')(_sys.executable, [_sys.executable, '-c', 'import time; time.sleep(3600)'], {})\n"
    )
    result = run_candidate(TRITON_ADD + spawn)
    assert result.status == "CHEAT_DETECTED", (result.status, result.errors)
    assert "process(es) running beside its calls" in result.errors[0]
    assert all(case.correct for case in result.cases)  # caught for the process, not for its answers


def test_a_thread_python_does_not_know_of_is_counted_by_the_kernel(run_candidate):
    # Attack 28: a thread started through _thread (reached by a built name) is in no list of the
    # threading module, so the worker's own count never sees it; the judge counts the worker's
    # threads in /proc/<pid>/task after its first call and again after the checked calls.
    sneaky = TRITON_ADD.replace(
        "def add(x, y):\n",
        "import os as _os\n_low = getattr(_os, 'sy' + 's').modules['_thr' + 'ead']\n\n\ndef add(x, y):\n"
        "    getattr(_low, 'start_new_' + 'thread')(getattr(_os, 'sy' + 's').modules['time'].sleep, (3600,))\n",
    )
    assert "'start_new_' + 'thread'" in sneaky
    result = run_candidate(sneaky)
    assert result.status == "CHEAT_DETECTED", (result.status, result.errors)
    assert "counted by the kernel" in result.errors[0], result.errors


@needs_gpu  # timed chunks run only on a GPU
def test_a_thread_that_waits_between_chunks(run_candidate):
    # A thread started after the first call (its third, a checked call: a candidate cannot tell
    # those from timed ones) that lives a few seconds and then ends: it could work beside the next
    # chunk's calls; it has ended before the judge's last count, so only the count after every
    # chunk, checked or timed, sees it. (Threads the first call leaves are taken as a library's
    # pool: settle.)
    waiter = TRITON_ADD.replace(
        "def add(x, y):\n",
        "import os as _os\n_sys = getattr(_os, 'sy' + 's')\n_low = _sys.modules['_thr' + 'ead']\n_calls = []\n\n\n"
        "def add(x, y):\n    _calls.append(1)\n    if len(_calls) == 3:\n"
        "        getattr(_low, 'start_new_' + 'thread')(_sys.modules['time'].sleep, (3,))\n",
    )
    result = run_candidate(waiter, backend="cuda", budget_s_per_case=0.2)
    assert result.status == "CHEAT_DETECTED", (result.status, result.errors)
    assert "after a chunk" in result.errors[0] and "counted by the kernel" in result.errors[0]


def test_a_python_thread_started_when_the_candidate_is_imported(run_candidate):
    # A thread started through _thread while the candidate's module loads, running Python: the
    # kernel's count is settled after the first call (a library's pools exist by then), so it reads
    # as such a pool there; the worker's Python count (threads running Python code, whatever
    # started them) finds it after the checked calls.
    at_import = TRITON_ADD.replace(
        "def add(x, y):\n",
        "import os as _os\n_sys = getattr(_os, 'sy' + 's')\n\n\ndef _wait():\n    while True:\n"
        "        _sys.modules['time'].sleep(1)\n\n\n"
        "getattr(_sys.modules['_thr' + 'ead'], 'start_new_' + 'thread')(_wait, ())\n\n\ndef add(x, y):\n",
    )
    result = run_candidate(at_import)
    assert result.status == "CHEAT_DETECTED", (result.status, result.errors)
    assert "Python thread" in result.errors[0], result.errors
