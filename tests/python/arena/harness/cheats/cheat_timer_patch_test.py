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


def test_an_inherited_method_shadowed_on_the_class_is_caught_at_run_time(run_candidate):
    """torch.Tensor.copy_ is torch._C.TensorBase's (the worker copies each output into the
    judge's slot with it): one set on torch.Tensor adds a name to the class rather than replacing
    one, and the snapshot held only the class's own names before: PASSED."""
    source = TRITON_ADD + (
        "\n_base = getattr(getattr(torch, '_' + 'C'), 'Tensor' + 'Base')\n"
        "type.__setattr__(torch.Tensor, 'co' + 'py_', lambda self, src, non_blocking=False: "
        "_base.copy_(self, src, non_blocking))\n"
    )
    result = run_candidate(source)
    assert result.status == "CHEAT_DETECTED", (result.status, result.errors)
    assert "torch.Tensor.copy_" in result.errors[0]


def test_a_function_whose_code_is_swapped_in_place_is_caught_at_run_time(run_candidate):
    """The forger of bench/forger.py: the worker's event-time function keeps its identity and
    gets another's code (samples read faster than the truth). The snapshot held only the
    function's id before: PASSED."""
    source = TRITON_ADD + (
        "\nimport os\n"
        "_timing = getattr(os, 'sy' + 's').modules['arena.harness.tim' + 'ing']\n"
        "_function = getattr(_timing, 'elapsed' + '_us')\n"
        "getattr(type(_function), '__co' + 'de__').__set__(_function, getattr(lambda start, end: 1.0, '__co' + 'de__'))\n"
    )
    result = run_candidate(source)
    assert result.status == "CHEAT_DETECTED", (result.status, result.errors)
    assert "arena.harness.timing.elapsed_us.__code__" in result.errors[0]
