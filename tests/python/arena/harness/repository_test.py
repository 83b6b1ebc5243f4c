import time
from pathlib import Path

from arena.harness.backends.repository import BENCH_OUTPUT_BYTES, build_repository, run_repository_bench


def test_the_code_base_builds_with_its_own_command(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "ok.py").write_text("x = 1\n")
    assert build_repository(tmp_path, "python3 -m compileall -q pkg")[0]
    (tmp_path / "pkg" / "bad.py").write_text("def broken(:\n")
    ok, log = build_repository(tmp_path, "python3 -m compileall -q pkg")
    assert not ok and "bad.py" in log


def test_its_own_benchmark_is_run_and_recorded(tmp_path: Path) -> None:
    (tmp_path / "bench.py").write_text("print('shape 4096: 123.4 us')\n")
    ok, log = run_repository_bench(tmp_path, "python3 bench.py")
    assert ok and "$ python3 bench.py" in log and "123.4 us" in log
    assert run_repository_bench(tmp_path, "") == (True, "")


def test_the_benchmark_imports_the_code_base_beside_it(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # The harness child runs with PYTHONSAFEPATH=1 (its own `-m` processes keep the working folder
    # off their path); a code base's `python3 bench.py` must still import its own package.
    monkeypatch.setenv("PYTHONSAFEPATH", "1")
    (tmp_path / "mini").mkdir()
    (tmp_path / "mini" / "__init__.py").write_text("VALUE = 42\n")
    (tmp_path / "bench.py").write_text("from mini import VALUE\nprint('value', VALUE)\n")
    ok, log = run_repository_bench(tmp_path, "python3 bench.py")
    assert ok and "value 42" in log, log


def test_a_failing_or_hanging_benchmark_is_reported_not_raised(tmp_path: Path) -> None:
    ok, log = run_repository_bench(tmp_path, "python3 -c 'raise SystemExit(3)'")
    assert not ok and "python3 -c" in log
    started = time.monotonic()
    ok, log = run_repository_bench(tmp_path, "sleep 120; echo never", timeout_s=0.2)
    assert not ok and "stopped after 0.2 s" in log
    # A bound on a hang, not a speed: the sleep still held the output pipe, so a run that stopped
    # only the shell would have waited out all of its 120 s.
    assert time.monotonic() - started < 60


def test_a_flood_of_output_keeps_its_start_and_end_not_all_of_it(tmp_path: Path) -> None:
    """The bench is candidate code: what it prints, the judge keeps only so much of."""
    flood = "import sys; sys.stdout.write('first line\\n' + 'x' * 20_000_000 + '\\nlast line\\n')"
    (tmp_path / "bench.py").write_text(flood + "\n")
    ok, log = run_repository_bench(tmp_path, "python3 bench.py")
    assert ok and "first line" in log and "last line" in log
    assert "bytes of output left out" in log and len(log) < BENCH_OUTPUT_BYTES + 200, len(log)


def test_output_that_is_not_text_is_kept_not_raised(tmp_path: Path) -> None:
    (tmp_path / "bench.py").write_text("import sys; sys.stdout.buffer.write(b'\\xff\\xfe 1.5 us\\n')\n")
    ok, log = run_repository_bench(tmp_path, "python3 bench.py")
    assert ok and "\ufffd" in log and "1.5 us" in log, log


def test_a_build_writes_byte_code_under_scratch_not_in_the_code_base(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # In the sandbox the baseline's code base is read-only: compileall must write elsewhere.
    scratch, code = tmp_path / "scratch", tmp_path / "code"
    (code / "pkg").mkdir(parents=True)
    (code / "pkg" / "ok.py").write_text("x = 1\n")
    monkeypatch.setenv("TMPDIR", str(scratch))
    assert build_repository(code, "python3 -m compileall -q pkg")[0]
    assert not list(code.rglob("*.pyc"))
    assert list((scratch / "pycache").rglob("ok*.pyc"))
