# Attack 23: tamper with the benchmark itself: rewrite the harness's own source files so later
# runs measure differently. The parent hashes the trusted packages (arena.harness, arena.task,
# arena.candidate) before and after each run.
# Expected verdict: CHEAT_DETECTED.

import arena.harness.launch as launch
from arena.harness.version import TRUSTED_PACKAGES, packages_digest
from arena_testing.harness_tasks import TRITON_ADD


def test_editing_trusted_sources_is_detected(run_candidate, tmp_path, monkeypatch):
    trusted = tmp_path / "trusted"
    (trusted / "harness").mkdir(parents=True)
    (trusted / "harness" / "check.py").write_text("# trusted\n")
    # The parent digests a copy the candidate can reach (the real sources may be read-only).
    monkeypatch.setattr(launch, "trusted_digest", lambda: packages_digest(TRUSTED_PACKAGES, trusted))
    source = (
        TRITON_ADD
        + f"\nimport pathlib\npathlib.Path({str(trusted / 'harness' / 'check.py')!r}).write_text('# edited')\n"
    )
    result = run_candidate(source)
    assert result.status == "CHEAT_DETECTED"
    assert "source files changed" in result.errors[0]
