# Attack 13: read the secret seed (environment, command line) to reproduce the hidden inputs.
# The seed reaches the child on stdin only, is dropped after the inputs are drawn, and the inputs
# exist before the candidate is imported.
# Expected verdict: PASSED for a candidate that only looks (it finds nothing): the seed is in
# neither the environment nor the command line.

from arena_testing.harness_tasks import TRITON_ADD

SECRET = 918273645546372819
LOOK = f'''import os


def add(x, y):
    cmdline = getattr(os, "op" + "en")("/proc/self/cmdline", os.O_RDONLY)
    seen = repr(dict(os.environ)) + repr(os.read(cmdline, 1 << 16))
    if "{SECRET}" in seen:
        return x
'''


def test_seed_is_not_in_environment_or_argv(run_candidate):
    source = TRITON_ADD.replace("def add(x, y):\n", LOOK)
    result = run_candidate(source, secret_seed=SECRET)
    assert result.status == "PASSED", result.errors


def test_control_the_look_would_see_a_planted_value(run_candidate, monkeypatch):
    monkeypatch.setenv("LANG", f"C.{SECRET}")  # LANG is passed through to the child
    result = run_candidate(TRITON_ADD.replace("def add(x, y):\n", LOOK), secret_seed=SECRET)
    assert result.status == "INCORRECT"
