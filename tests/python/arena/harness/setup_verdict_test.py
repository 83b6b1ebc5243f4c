"""A verdict the judge raises in its own setup, before anything of the candidate's ran (its empty
chunks' calibration: only harness code in the worker), is the harness's fault, not the candidate's
RUNTIME_ERROR: the child ends with SETUP_FAILED, which the parent runs again and refunds. On an
H100 (2026-12-06) the calibration's empty chunk read as a worker held by the GPU scored an
exemplar RUNTIME_ERROR before its code was loaded."""

import subprocess
import sys
import textwrap

import pytest

from arena.harness.job import SETUP_FAILED

# child._executed on a stand-in Run: the stage it failed in and whether the candidate was touched.
_SCRIPT = textwrap.dedent("""
    import sys
    from arena.harness.child import _executed
    from arena.harness.verdict import Verdict

    class Run:
        def __init__(self, stage, touched):
            self.stage, self.candidate_touched = stage, touched

        def execute(self):
            raise Verdict("RUNTIME_ERROR", "the candidate's worker took 9 ms to queue 0 calls")

        def finish(self, status, errors):
            return status

        def close(self):
            pass

    print(_executed(Run(sys.argv[1], sys.argv[2] == "touched")))
""")


def _executed(stage: str, touched: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _SCRIPT, stage, touched], capture_output=True, text=True)


def test_a_verdict_in_the_judges_own_setup_leaves_no_verdict():
    done = _executed("setup", "untouched")
    assert done.returncode == SETUP_FAILED, (done.returncode, done.stdout, done.stderr)
    assert "took 9 ms to queue 0 calls" in done.stderr  # the traceback, in the log tail the parent keeps


@pytest.mark.parametrize(("stage", "touched"), [("setup", "touched"), ("check", "touched"), ("time", "touched")])
def test_a_verdict_once_the_candidate_is_touched_is_its_own(stage, touched):
    # A HIP candidate built beside the setup is touched there: its compiler's verdict stands.
    done = _executed(stage, touched)
    assert done.returncode == 0 and done.stdout.strip() == "RUNTIME_ERROR", (done.stdout, done.stderr)
