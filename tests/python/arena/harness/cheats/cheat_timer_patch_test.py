# Attack 11: monkey-patch the timer or the checker (Event.elapsed_time, torch.equal, ...).
# Static: assignments to attributes of imported modules are forbidden. At run time: the identity
# of every function the harness measures, checks and reports with is snapshotted before the
# candidate is imported and compared after each stage. Timing statistics are computed in the parent.
# Expected verdict: CHEAT_DETECTED.

from arena_testing.harness_tasks import TRITON_ADD


def test_assignment_is_caught_statically(run_candidate):
    source = TRITON_ADD + "\ntorch.cuda.Event.elapsed_time = lambda self, end: 0.001\n"
    result = run_candidate(source)
    assert result.status == "CHEAT_DETECTED"
    assert "patches a module" in " ".join(result.errors)


def test_patch_through_type_setattr_is_caught_at_run_time(run_candidate):
    source = TRITON_ADD + (
        "\ntype.__setattr__(getattr(torch.cuda, 'Ev' + 'ent'), 'elapsed' + '_time', lambda self, end: 0.001)\n"
        "type(torch).__setattr__(torch, 'equ' + 'al', lambda a, b: True)\n"
    )
    result = run_candidate(source)
    assert result.status == "CHEAT_DETECTED"
    assert "torch.cuda.Event.elapsed_time" in result.errors[0]
