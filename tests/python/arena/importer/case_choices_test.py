"""A bool or a string the test passes that differs between cases (vLLM's `triton_ssd_bmm`:
`causal` unpacked from TEST_SHAPES; rocmbench's `test_iv_dependent_matmul`: `type` from
`parametrize`): arena's scalars are numbers, so the entry takes the index of the case's value
among the cases' values, a dim each case sets, and looks the value up again before it calls the
kernel as the test does (arena.importer.scalar_arguments); the reference looks it up alike."""

from __future__ import annotations

from pathlib import Path

import torch

from arena.importer.importer import import_checkout
from arena.task.load import load_task
from arena.task.task import Task
from arena_testing.aka_refusal import refusal
from arena_testing.modules import load_module

TASK = "triton2triton/vllm/fake_scale"
ADDRESS = f"tasks/{TASK}:fake_scale"
FOLDER = Path("tasks") / TASK

KERNEL = '''"""A fake kernel file: x and w combined as `mode` says, negated or not."""
import torch


def scale_rows(x: torch.Tensor, w: torch.Tensor, mode: str = "add", negate: bool = False):
    y = x * w if mode == "mul" else x + w
    return -y if negate else y
'''

RUNNER = '''#!/usr/bin/env python3
"""Task runner for triton2triton/fake_scale, given a string and a bool by case."""
import importlib

raise RuntimeError("arena import aka ran the task runner")


def load_module():  # the kernel file, as AKA's runners load it (never run here)
    return importlib.import_module("fake_scale")


TEST_SHAPES = [
    (4, 64, "mul", False),
    (8, 256, SECOND_MODE, True),
    (4, 32, "mul", THIRD_NEGATE),
]


def reference_scale(x, w, mode, negate):
    y = x.double() * w.double() if mode == "mul" else x.double() + w.double()
    return (-y if negate else y).float()


def run_correctness():
    import torch
    mod = load_module()
    device = "cuda"
    for i, (rows, cols, mode, negate) in enumerate(TEST_SHAPES):
        torch.manual_seed(42 + i)
        x = torch.randn(rows, cols, device=device, dtype=torch.float32)
        w = torch.randn(cols, device=device, dtype=torch.float32)
        result = mod.scale_rows(x, w, mode=mode, negate=negate)
        ref = reference_scale(x, w, mode, negate)
        if not torch.allclose(result, ref):
            return False, f"Shape {i + 1}: mismatch"
    return True, None
'''


def _write(checkout: Path, second_mode: str = '"add"', third_negate: str = "True") -> None:
    (checkout / FOLDER / "source" / "fake_scale.py").write_text(KERNEL)
    runner = RUNNER.replace("SECOND_MODE", second_mode).replace("THIRD_NEGATE", third_negate)
    (checkout / FOLDER / "scripts" / "task_runner.py").write_text(runner)


def _imported(checkout: Path, out: Path, task: str = TASK, address: str = ADDRESS) -> Task:
    outcomes = {o.source: o for o in import_checkout(checkout, out)}
    assert outcomes[task].address == address, outcomes[task].reason
    return load_task(out, address)


def test_a_string_and_a_bool_that_differ_by_case_are_given_by_their_index(checkout: Path, tmp_path: Path) -> None:
    _write(checkout)
    out = tmp_path / "out"
    task = _imported(checkout, out)
    assert str(task.entry) == "source/fake_scale.py:scale_rows_scalars"
    assert dict(task.scalars) == {"mode": "mode", "negate": "negate"}
    # each case's index among the values in the order the cases first give them: ("mul", "add"), (False, True)
    assert [dict(c.dims) for c in task.cases] == [
        {"rows": 4, "cols": 64, "mode": 0, "negate": 0},
        {"rows": 8, "cols": 256, "mode": 1, "negate": 1},
        {"rows": 4, "cols": 32, "mode": 0, "negate": 1},
    ]
    kernel_text = (out / FOLDER / "source" / "fake_scale.py").read_text()
    assert kernel_text.startswith(KERNEL.rstrip("\n"))  # the kernel file unchanged, the function appended
    assert kernel_text.endswith(
        "# Appended by `arena import aka`: `scale_rows` called as the test calls it, given what arena's\n"
        "# inputs and scalars hold: its tensors by position (with a 0/1 flag `<name>_given` where the test\n"
        "# gives None in some cases), a list's elements as separate numbers, a dtype as the test writes it,\n"
        "# a bool or string that differs between cases as the index of the case's value; the task's entry.\n"
        "def scale_rows_scalars(x, w, *, mode, negate):\n"
        "    return scale_rows(x, w, mode=('mul', 'add')[mode], negate=(False, True)[negate])\n"
    )
    reference_text = (out / FOLDER / "reference.py").read_text()
    assert "    mode = ('mul', 'add')[mode]\n" in reference_text
    assert "    negate = (False, True)[negate]\n" in reference_text
    copied = load_module(out / FOLDER / "source" / "fake_scale.py")
    reference = load_module(out / FOLDER / "reference.py")
    x, w = torch.randn(8, 256), torch.randn(256)
    for mode, negate, as_tested in [(0, 0, ("mul", False)), (1, 1, ("add", True)), (0, 1, ("mul", True))]:
        got = copied.scale_rows_scalars(x, w, mode=mode, negate=negate)
        assert torch.equal(got, copied.scale_rows(x, w, mode=as_tested[0], negate=as_tested[1]))
        assert torch.allclose(got, reference.reference(x, w, mode=mode, negate=negate))


def test_a_string_the_same_in_every_case_is_passed_as_written_and_a_bool_stays_a_flag(
    checkout: Path, tmp_path: Path
) -> None:
    _write(checkout, second_mode='"mul"', third_negate="False")
    _edit_runner(checkout, ('(8, 256, "mul", True)', '(8, 256, "mul", False)'))
    out = tmp_path / "out"
    task = _imported(checkout, out)
    assert dict(task.scalars) == {"negate": False}  # a flag, passed as the test passes it
    assert [dict(c.dims) for c in task.cases][0] == {"rows": 4, "cols": 64}
    kernel_text = (out / FOLDER / "source" / "fake_scale.py").read_text()
    assert kernel_text.endswith(
        "def scale_rows_scalars(x, w, *, negate):\n    return scale_rows(x, w, mode='mul', negate=negate)\n"
    )
    assert "    mode = 'mul'\n" in (out / FOLDER / "reference.py").read_text()


def _edit_runner(checkout: Path, *pairs: tuple[str, str]) -> None:
    path = checkout / FOLDER / "scripts" / "task_runner.py"
    text = path.read_text()
    for old, new in pairs:
        assert old in text
        text = text.replace(old, new)
    path.write_text(text)


def test_a_value_that_is_a_string_in_one_case_and_not_in_another_is_refused(checkout: Path) -> None:
    _write(checkout, second_mode="None")
    assert refusal(checkout, TASK) == (
        "argument mode='mul' is not a number or a bool; arena scalars are numbers, dims or flags"
    )


def test_a_name_bound_inside_the_loop_is_read_from_the_cases_followed(checkout: Path, tmp_path: Path) -> None:
    """vLLM's `triton_fla_layernorm_gated` unpacks `activation` from `TEST_CASES[case_idx]` inside the
    loop: its value at the call, in each case followed, is what is looked up."""
    _write(checkout)
    _edit_runner(
        checkout, ("        torch.manual_seed(42 + i)\n", "        torch.manual_seed(42 + i)\n        mode = mode\n")
    )
    out = tmp_path / "out"
    task = _imported(checkout, out)
    assert [dict(c.dims)["mode"] for c in task.cases] == [0, 1, 0]
    assert "    mode = ('mul', 'add')[mode]\n" in (out / FOLDER / "reference.py").read_text()


LAUNCH_TASK = "triton2triton/rocmbench/fake_softmax"
LAUNCH_ADDRESS = f"tasks/{LAUNCH_TASK}:fake_softmax"
TEST_FILE = Path("tasks") / LAUNCH_TASK / "fake_softmax.py"


def test_a_string_that_differs_by_case_in_a_launch_is_looked_up_in_the_launch_function(
    checkout: Path, tmp_path: Path
) -> None:
    """rocmbench's `test_iv_dependent_matmul`: `type=type` from `parametrize("type", [...])`."""
    path = checkout / TEST_FILE
    text = path.read_text()
    for old, new in [
        (
            "    y_triton = softmax(x)\n",
            "    y_triton = torch.empty(M, N, device=device)\n"
            '    stages = 4 if kind == "wide" else 3\n'
            "    softmax_kernel[(M,)](y_triton, x, N, BLOCK=32, kind=kind, num_stages=stages)\n",
        ),
        (
            '@pytest.mark.parametrize("scale", [2.0])',
            '@pytest.mark.parametrize("scale, kind", [(2.0, "narrow"), (2.0, "wide")])',
        ),
        ("def test_softmax(M, N, scale, request", "def test_softmax(M, N, scale, kind, request"),
    ]:
        assert old in text
        text = text.replace(old, new)
    path.write_text(text)
    out = tmp_path / "out"
    task = _imported(checkout, out, LAUNCH_TASK, LAUNCH_ADDRESS)
    assert dict(task.scalars)["kind"] == "kind"
    assert {dict(c.dims)["kind"] for c in task.cases} == {0, 1}
    folder = out / "tasks" / LAUNCH_TASK
    launch_text = (folder / "arena_launch.py").read_text()
    assert (
        "    # Looked up by `arena import aka`: a bool or string that differs between cases is given as the\n"
        "    # index of the case's value (arena's scalars are numbers); the test's statements follow.\n"
        "    kind = ('narrow', 'wide')[kind]\n"
        "    stages = 4 if kind == 'wide' else 3\n"
    ) in launch_text
    launches: list[dict] = []
    namespace: dict = {}  # the kernel, by the grid the function launches it on: records the keywords
    exec(launch_text.replace("from fake_softmax import softmax_kernel\n", ""), namespace)
    namespace["softmax_kernel"] = {(4,): lambda *args, **kwargs: launches.append(kwargs)}
    namespace["softmax_kernel_launch"](torch.zeros(4, 16), torch.randn(4, 16), M=4, N=16, kind=1)
    assert launches == [{"BLOCK": 32, "kind": "wide", "num_stages": 4}]
