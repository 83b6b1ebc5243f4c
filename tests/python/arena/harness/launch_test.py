from arena_testing.harness_tasks import TRITON_ADD


def test_baseline_as_candidate_passes_on_cpu(run_candidate):
    result = run_candidate(None)
    assert result.status == "PASSED", result.errors
    assert result.compiled and result.correct and not result.timings_available
    assert [c.name for c in result.cases] == ["small", "small~hidden0", "main", "main~hidden0"]
    assert [c.hidden for c in result.cases] == [False, True, False, True]
    assert result.environment["backend"] == "cpu"


def test_the_cases_asked_for_are_the_only_ones_run_and_an_unknown_one_is_refused(run_candidate):
    import pytest

    # Called straight, as a bench or an executor would: "main" (timed) is left out, not run.
    result = run_candidate(None, cases=("small",), hidden_seeds=1)
    assert result.status == "PASSED", result.errors
    assert [c.name for c in result.cases] == ["small", "small~hidden0"]
    with pytest.raises(ValueError, match="has no case named 'large'"):
        run_candidate(None, cases=("small", "large"))


def test_a_host_measurement_environment_runs_the_child(run_candidate, tmp_path, monkeypatch):
    """--python / ARENA_PYTHON: the child runs under that interpreter with only the arena package
    on its import path (torch and triton from the interpreter's own site-packages), inside the
    sandbox where this machine has one."""
    import os
    import sys

    from arena.environment.measurement import PYTHON_VARIABLE, current_measurement, forget_measurements

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv(PYTHON_VARIABLE, sys.executable)
    forget_measurements()
    try:
        assert current_measurement().kind == "host"
        result = run_candidate(None)
    finally:
        forget_measurements()
    assert result.status == "PASSED", result.errors
    monkeypatch.setenv(PYTHON_VARIABLE, os.path.join(str(tmp_path), "missing-python"))
    forget_measurements()
    try:
        import pytest

        from arena.errors import UnusableEnvironment

        with pytest.raises(UnusableEnvironment):
            run_candidate(None)  # refused before any child starts
    finally:
        forget_measurements()


def test_triton_candidate_passes(run_candidate):
    result = run_candidate(TRITON_ADD.replace("BLOCK=1024", "BLOCK=256").replace("1024)", "256)"))
    assert result.status == "PASSED", result.errors


# Hostile candidates: each must give a clear status, never hang or crash the parent. Names
# are built at run time where the static check would otherwise stop them first: these test the
# run-time defences.


def test_infinite_loop_times_out(run_candidate):
    # TIMEOUT comes only from the deadline; a harness that never stopped the loop would never return.
    result = run_candidate("def add(x, y):\n    while True:\n        pass\n", timeout_s=8)
    assert result.status == "TIMEOUT"


def test_segfault_is_a_runtime_error(run_candidate):
    result = run_candidate("import os\n\ndef add(x, y):\n    getattr(os, 'ki' + 'll')(os.getpid(), 11)\n")
    assert result.status == "RUNTIME_ERROR"
    assert "SIGSEGV" in result.errors[0]


def test_exit_before_the_result(run_candidate):
    result = run_candidate("import os\n\ndef add(x, y):\n    getattr(os, '_ex' + 'it')(0)\n")
    assert result.status == "RUNTIME_ERROR"
    assert "exited with code 0 without a result" in result.errors[0]


def test_huge_allocations_are_runtime_errors(run_candidate):
    result = run_candidate("import torch\n\ndef add(x, y):\n    return torch.empty(1 << 50)\n")
    assert result.status == "RUNTIME_ERROR"
    result = run_candidate("def add(x, y):\n    return bytearray(1 << 44)\n")
    assert result.status == "RUNTIME_ERROR" and "MemoryError" in result.errors[0]


def test_a_gigabyte_of_output_is_drained_and_cut(run_candidate):
    source = TRITON_ADD + "\nline = 'x' * (1 << 20)\nfor _ in range(1024):\n    print(line)\n"
    result = run_candidate(source)
    assert result.status == "PASSED", result.errors


def test_exceptions_and_exit_calls(run_candidate):
    result = run_candidate("def add(x, y):\n    raise ValueError('boom')\n")
    assert result.status == "RUNTIME_ERROR" and "ValueError: boom" in result.errors[0]
    result = run_candidate("def add(x, y):\n    raise SystemExit(3)\n")
    assert result.status == "RUNTIME_ERROR" and "SystemExit" in result.errors[0]


def test_an_exception_with_a_huge_message_is_the_candidates_error_not_a_cheat(run_candidate):
    """An honest bug whose message is megabytes (a tensor's values in an assertion) reads as what
    it is: the worker cuts the text; a reply over the pipe's header limit would read as tampering."""
    result = run_candidate("def add(x, y):\n    raise ValueError('values: ' + '1, ' * (1 << 20))\n")
    assert result.status == "RUNTIME_ERROR", result.errors
    assert "ValueError: values: 1, 1, " in result.errors[0] and len(result.errors[0]) < 40_000


def test_compile_errors(run_candidate):
    assert run_candidate("def add(x, y)\n    return x\n").status == "COMPILE_ERROR"
    assert run_candidate("def plus(x, y):\n    return x\n").status == "COMPILE_ERROR"
    broken = TRITON_ADD.replace("tl.arange(0, BLOCK)", "tl.arange(0, BLOCK) + undefined_name")
    result = run_candidate(broken)  # a GPU build reports COMPILE_ERROR; the CPU interpreter meets it at run time
    assert result.status in ("COMPILE_ERROR", "RUNTIME_ERROR") and "undefined_name" in " ".join(result.errors)


def test_background_process_holding_the_pipes(run_candidate):
    import time

    begin = time.monotonic()
    source = TRITON_ADD + "\nimport os\ngetattr(os, 'sys' + 'tem')('sleep 300 &')\n"
    result = run_candidate(source, timeout_s=60)
    # The run ends though the process holds the inherited pipes (a harness that waited for them
    # would end in TIMEOUT at 60 s), and the process itself, still running beside the calls, is
    # the verdict.
    assert result.status == "CHEAT_DETECTED", result.errors
    assert "process(es) running" in result.errors[0]
    # A bound on a hang, not a speed: a harness past its own deadline would wait out the 300 s sleep.
    assert time.monotonic() - begin < 200


def test_hip_compiles_without_a_gpu(run_candidate):
    import shutil

    import pytest

    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not installed")
    result = run_candidate(None, hip=True)
    assert result.status == "NEEDS_DEVICE" and result.compiled, result.errors
    from arena_testing.harness_tasks import HIP_ADD

    broken = run_candidate(HIP_ADD.replace("z[i] = x[i] + y[i];", "z[i] = x[i] + ;"), hip=True)
    assert broken.status == "COMPILE_ERROR" and not broken.compiled


def test_children_read_the_installed_byte_code_and_write_none(tmp_path):
    """No pycache prefix for the interpreters: on an empty one every child and worker compiled
    torch and triton from source (twice the import time); PYTHONDONTWRITEBYTECODE still holds."""
    from arena.environment.measurement import current_measurement
    from arena.harness.launch import _child_env

    env = _child_env(tmp_path, current_measurement())
    assert "PYTHONPYCACHEPREFIX" not in env
    assert env["PYTHONDONTWRITEBYTECODE"] == "1" and env["TMPDIR"] == str(tmp_path / "work")


def test_a_judge_that_fails_in_its_own_setup_leaves_no_verdict(run_candidate, tmp_path):
    """A failure of the judge's own before any candidate code (here a reference that raises; on a
    node, a GPU runtime that refuses the judge's interprocess event) is the harness's fault, run
    again and refunded: never RUNTIME_ERROR charged to a candidate none of whose code ran."""
    from arena_testing.harness_tasks import build_task

    task = build_task(tmp_path)
    broken = "def add(x, y):\n    raise RuntimeError('the reference is broken')\n"
    (tmp_path / "tasks" / "t" / "add" / "reference.py").write_text(broken)
    result = run_candidate(TRITON_ADD, task=task)
    assert result.harness_fault, result
    assert "failed in the judge's own setup, before any candidate code" in result.errors[0]
    assert "the reference is broken" in result.errors[1]  # the child's log tail
