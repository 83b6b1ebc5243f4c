from conftest import TRITON_ADD


def test_baseline_as_candidate_passes_on_cpu(run_candidate):
    result = run_candidate(None)
    assert result.status == "PASSED", result.errors
    assert result.compiled and result.correct and not result.timings_available
    assert [c.name for c in result.cases] == ["small", "small~hidden0", "main", "main~hidden0"]
    assert [c.hidden for c in result.cases] == [False, True, False, True]
    assert result.environment["backend"] == "cpu"


def test_triton_candidate_passes(run_candidate):
    result = run_candidate(TRITON_ADD.replace("BLOCK=1024", "BLOCK=256").replace("1024)", "256)"))
    assert result.status == "PASSED", result.errors
