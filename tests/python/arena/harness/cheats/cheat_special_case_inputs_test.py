# Attack 17 (and the "ghost branch" of attack 2): recognise the public test inputs by a few
# sampled values and take a shortcut elsewhere. Every case gets hidden copies with seeds drawn
# from the run's secret seed.
# Expected verdict: INCORRECT (the hidden copies fail).

import torch

from arena.harness.inputs import make_inputs
from arena_testing.harness_tasks import TRITON_ADD


def test_public_inputs_recognised(run_candidate, tmp_path):
    from arena_testing.harness_tasks import build_task

    task = build_task(tmp_path)
    known = [float(make_inputs(task, case, torch.device("cpu"))[0][0]) for case in task.cases]
    source = TRITON_ADD.replace(
        "def add(x, y):\n",
        (
            f"KNOWN = {known!r}\n\n\ndef add(x, y):\n"
            "    if float(x[0]) not in KNOWN:\n        return torch.zeros_like(x)\n"
        ),
    )
    result = run_candidate(source, task=task)
    assert result.status == "INCORRECT"
    assert all(c.correct for c in result.cases if not c.hidden)
    assert not any(c.correct for c in result.cases if c.hidden)
