# Attack 1 in native code, past the source check: a HIP candidate reaches a library, the Python
# runtime or a thread through names the preprocessor builds (token pasting) or strings handed to
# dlsym, often from a static constructor that runs when the library is loaded. Defence: the built
# sources are checked again after the compiler's preprocessor (names whole), and the built
# library's undefined dynamic symbols are read (nm) before it is loaded: dlopen/dlsym, the
# Python C API, vendor BLAS/DNN entry points and thread or process creation are refused.
# Expected verdict: CHEAT_DETECTED, naming the symbol; on a CPU machine too (compile-only path).

import shutil

import pytest

from arena_testing.harness_tasks import HIP_ADD

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc to build HIP")

# The names are built by the preprocessor and at run time, so the source check sees none of them.
PASTED_DLSYM = (
    "#define JOIN(a, b) a##b\n"
    'extern "C" void* JOIN(dl, sym)(void*, const char*);\n'
    "static const char name[] = {'c', 'u', 'b', 'l', 'a', 's', 'S', 'g', 'e', 'm', 'm', 0};\n"
    "static void* reach = JOIN(dl, sym)((void*)0, name);\n" + HIP_ADD
)
THREAD_FROM_CONSTRUCTOR = (
    "#define JOIN(a, b) a##b\n"
    'extern "C" int JOIN(pthread_, create)(void*, const void*, void* (*)(void*), void*);\n'
    "static void* idle(void*) { return 0; }\n"
    "static unsigned long handle;\n"
    "static int started = JOIN(pthread_, create)(&handle, 0, idle, 0);\n" + HIP_ADD
)
PYTHON_API = 'extern "C" int Py_IsInitialized(void);\nstatic int alive = Py_IsInitialized();\n' + HIP_ADD


@pytest.mark.parametrize(
    ("source", "symbol"),
    [(PASTED_DLSYM, "dlsym"), (THREAD_FROM_CONSTRUCTOR, "pthread_create"), (PYTHON_API, "Py_IsInitialized")],
    ids=["token-pasted dlsym", "a thread from a static constructor", "Python C API"],
)
def test_the_built_library_may_not_reach_outside(run_candidate, source, symbol):
    result = run_candidate(source, hip=True)
    assert result.status == "CHEAT_DETECTED", result.errors
    # The preprocessor's output names it first where a harness rule covers the name (dlsym,
    # pthread_create); the built library's symbols catch the rest (the Python C API).
    assert f"calls {symbol} " in result.errors[0] or f"uses {symbol}" in result.errors[0], result.errors


# A side stream made through a pasted name: the static source check sees `cudaStream` and
# `Create`; the library's symbols cannot tell it from the runtime the baseline links too; the
# preprocessor's output spells it whole.
PASTED_STREAM = (
    "#define JOIN(a, b) a##b\n"
    "static cudaStream_t side;\n"
    "static int made = (int)JOIN(cudaStream, Create)(&side);\n" + HIP_ADD
)


def test_a_name_pasted_by_the_preprocessor_is_seen_whole(run_candidate):
    result = run_candidate(PASTED_STREAM, hip=True)
    assert result.status == "CHEAT_DETECTED", result.errors
    assert "after the preprocessor" in result.errors[0] and "cudaStreamCreate" in result.errors[0], result.errors


def test_a_plain_hip_candidate_is_not_refused(run_candidate):
    result = run_candidate(HIP_ADD.replace("256", "128"), hip=True)
    assert result.status in ("PASSED", "NEEDS_DEVICE"), result.errors
