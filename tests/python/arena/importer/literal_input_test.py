"""An input the test builds with `torch.tensor(<a list>, dtype=...)` (vLLM's `triton_pack_seq`:
`lengths = torch.tensor(lengths_list, dtype=torch.int32)`, the list a case parameter) is declared
a `values` literal, each case's own list through `dists`; a cumsum of it (`torch.cumsum(
torch.tensor(lengths_list, dtype=torch.int32), dim=0)`) is the literal of its running sums; the
reference, given the list, reads the input's `.tolist()`. The fixture fixtures/variants/fake_pack
is put into a copy of the fixture checkout."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest
import torch

from arena.harness.inputs import make_inputs
from arena.importer.checkout import find_tasks
from arena.importer.draws import distribution, find_draw
from arena.importer.importer import import_checkout, read_task
from arena.importer.interpreter import Interpreter, Scope
from arena.importer.outcome import NotImportable
from arena.importer.values import Module, Tensor, Unknown
from arena.task.load import load_task

VARIANT = Path(__file__).parent / "fixtures" / "variants" / "fake_pack"
TASK = "triton2triton/vllm/fake_pack"
ADDRESS = f"tasks/{TASK}:fake_pack"
RUNNER = Path("tasks") / TASK / "scripts" / "task_runner.py"


def _with_pack(checkout: Path) -> Path:
    shutil.copytree(VARIANT, checkout / "tasks" / TASK)
    return checkout


def _edit(checkout: Path, old: str, new: str) -> None:
    path = checkout / RUNNER
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new))


def _read(source: str, **names: object) -> dict[str, object]:
    draw = find_draw("t", ast.parse(source, mode="eval").body)
    return distribution(draw, "t", lambda node: eval(compile(ast.Expression(node), "<case>", "eval"), {}, names))


def test_a_tensor_of_a_list_is_its_values_and_a_cumsum_of_it_their_running_sums() -> None:
    lengths = [8, 12, 6]
    assert _read("torch.tensor(lengths, dtype=torch.int32)", lengths=lengths) == {"kind": "values", "values": lengths}
    assert _read("torch.tensor([[1, 2], [3, 4]]).to(device)") == {"kind": "values", "values": [[1, 2], [3, 4]]}
    summed = _read("torch.cumsum(torch.tensor(lengths, dtype=torch.int32), dim=0).to(device)", lengths=lengths)
    assert summed == {"kind": "values", "values": [8, 20, 26]}
    assert torch.cumsum(torch.tensor(lengths, dtype=torch.int32), dim=0).tolist() == summed["values"]
    rows = _read("torch.tensor([[1, 2], [3, 4]]).cumsum(1)")
    assert rows == {"kind": "values", "values": [[1, 3], [3, 7]]}
    assert torch.tensor([[1, 2], [3, 4]]).cumsum(1).tolist() == rows["values"]


REFUSED = [
    ("torch.tensor(xs) * 2", {"xs": [1, 2]}, "scales or shifts a torch.tensor of a list"),
    ("torch.cumsum(torch.tensor(xs), dim=0)", {"xs": [0.5, 1.5]}, "cumulative sum of float values"),
    ("torch.tensor(xs).abs()", {"xs": [1, -2]}, "the abs of a torch.tensor of a list"),
    ("torch.tensor(xs)", {"xs": [1, "a"]}, "not a list of numbers"),
    ("torch.tensor(xs)", {"xs": [[1, 2], [3]]}, "not a list of numbers"),
    ("torch.tensor(xs)", {"xs": [True, False]}, "not a list of numbers"),
    ("torch.tensor(xs)", {"xs": list(range(5000))}, "more than the 4096 a literal holds"),
    ("torch.tensor(xs, requires_grad=True)", {"xs": [1.0]}, "without its data as the one argument"),
]


@pytest.mark.parametrize("source, names, message", REFUSED, ids=[r[2] for r in REFUSED])
def test_what_arena_cannot_hold_exactly_is_refused(source: str, names: dict[str, object], message: str) -> None:
    with pytest.raises(NotImportable, match=message):
        _read(source, **names)


def test_the_interpreter_knows_a_literals_shape_and_dtype_and_forgets_a_list_changed_in_place() -> None:
    scope = Scope({"torch": Module("torch")})
    body = ast.parse(
        "xs = [3, 5, 2]\n"
        "a = torch.tensor(xs, dtype=torch.int32)\n"
        "b = torch.cumsum(a, dim=0)\n"
        "c = torch.tensor([[0.5, 1.0]])\n"
        "ys = []\n"
        "for i in range(3):\n"
        "    ys.extend([i] * 2)\n"
        "d = torch.tensor(ys)\n"
    ).body
    Interpreter().run_block(body, scope)
    assert scope.names["a"] == Tensor((3,), "int32")
    assert scope.names["b"] == Tensor((3,), "int64")  # torch sums integers in int64
    assert scope.names["c"] == Tensor((1, 2), "float32")
    assert isinstance(scope.names["d"], Unknown) and "changed in place" in scope.names["d"].reason


def test_the_lengths_import_as_literals_per_case_and_the_reference_reads_them(checkout: Path, tmp_path: Path) -> None:
    outcomes = {o.source: o for o in import_checkout(_with_pack(checkout), tmp_path / "out")}
    assert outcomes[TASK].address == ADDRESS, outcomes[TASK].reason
    task = load_task(tmp_path / "out", ADDRESS)
    declared = {t.name: (t.shape, t.dtype, t.dist.kind, dict(t.dist.params)) for t in task.inputs}
    assert declared["lengths"][1:] == ("int32", "values", {"values": [8, 12, 6, 10]})
    assert declared["ends"][1:] == ("int64", "values", {"values": [8, 20, 26, 36]})
    second = task.cases[1].dists
    assert dict(second["lengths"].params) == {"values": [32, 16]} and dict(second["ends"].params) == {
        "values": [32, 48]
    }
    reference = (tmp_path / "out" / "tasks" / TASK / "reference.py").read_text()
    assert "lengths_list = lengths.tolist()" in reference
    # The declared values are what the test gives the kernel, in each case (a hidden copy alike).
    for case, lengths_list in zip(task.cases, ([8, 12, 6, 10], [32, 16])):
        x, lengths, ends = make_inputs(task, case, torch.device("cpu"))
        assert torch.equal(lengths, torch.tensor(lengths_list, dtype=torch.int32))
        assert torch.equal(ends, torch.cumsum(torch.tensor(lengths_list, dtype=torch.int32), dim=0))
        assert x.shape[0] == sum(lengths_list)


def test_a_list_the_test_changes_in_place_is_not_read(checkout: Path) -> None:
    _with_pack(checkout)
    _edit(
        checkout,
        "        lengths = torch.tensor(lengths_list, device=device, dtype=torch.int32)\n",
        "        grown = list(lengths_list)\n"
        "        for b in range(B):\n"
        "            grown.append(b)\n"
        "        lengths = torch.tensor(grown, device=device, dtype=torch.int32)\n",
    )
    [task] = [t for t in find_tasks(checkout) if t.name == TASK]
    with pytest.raises(NotImportable, match="changed in place"):
        read_task(task, checkout)
