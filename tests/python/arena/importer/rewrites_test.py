"""arena.importer.rewrites on small loops: a helper inlined without rebinding the loop's names,
literal tuples spread, `if`s on literals folded, integer fill loops read as aranges."""

from __future__ import annotations

import ast

import pytest

from arena.importer.rewrites import fold_constant_ifs, fold_fill_loops, inline_helpers, spread_literals


def _functions(source: str) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)}


def _lines(body: list[ast.stmt]) -> list[str]:
    return [ast.unparse(node) for node in body]


def test_a_helper_s_own_names_do_not_rebind_the_loop_s() -> None:
    helpers = _functions("def make(x, n):\n    x = x * 2\n    z = torch.zeros(n) + x\n    return z\n")
    body = ast.parse("x = torch.randn(4)\ny = make(x, 4)\nout = mod.f(x, y)").body
    assert _lines(inline_helpers(body, helpers, {}, "t", 0, "mod")) == [
        "x = torch.randn(4)",
        "x_make = x",
        "n = 4",
        "x_make = x_make * 2",
        "y = torch.zeros(n) + x_make",
        "out = mod.f(x, y)",
    ]


def test_a_helper_whose_result_the_kernel_is_not_given_stays_a_call() -> None:
    helpers = _functions("def ref_of(x):\n    r = torch.zeros(4)\n    return r + x\n")
    body = ast.parse("x = torch.randn(4)\nref = ref_of(x)\nout = mod.f(x)").body
    assert _lines(inline_helpers(body, helpers, {}, "t", 0, "mod")) == _lines(body)


def test_literal_tuples_and_dicts_are_spread() -> None:
    body = ast.parse(
        "args, kwargs = (x, 64), {'eps': 1e-06}\ncopies = tuple(a.float() for a in args)\nmod.f(*args, **kwargs)\nref(*copies)"
    ).body
    assert _lines(spread_literals(body))[1:] == [
        "copies = (x.float(), 64 .float())",
        "mod.f(x, 64, eps=1e-06)",
        "ref(x.float(), 64 .float())",
    ]


def test_an_if_on_a_literal_is_its_branch() -> None:
    body = ast.parse("if device != 'cpu':\n    x = x.to(device)\nelse:\n    x = x.cpu()").body
    assert _lines(fold_constant_ifs(body, {"device": "cuda"})) == ["x = x.to(device)"]
    assert _lines(fold_constant_ifs(body, {})) == _lines(body)


@pytest.mark.parametrize(
    "fill, arange",
    [
        (
            "t = torch.zeros(n + 1, dtype=torch.int32, device=d)\nfor r in range(n):\n    t[r + 1] = t[r] + q_len",
            "t = torch.arange(n + 1, dtype=torch.int32, device=d) * q_len",
        ),
        (
            "t = torch.zeros(bs, device=d, dtype=torch.int64)\nfor j in range(bs):\n    t[j] = j * seq_len",
            "t = torch.arange(bs, device=d, dtype=torch.int64) * seq_len",
        ),
        (
            "t = torch.zeros(bs, dtype=torch.int32)\nfor j in range(bs):\n    t[j] = j",
            "t = torch.arange(bs, dtype=torch.int32)",
        ),
    ],
)
def test_an_integer_fill_loop_is_its_arange(fill: str, arange: str) -> None:
    body = ast.parse(f"{fill}\nout = mod.f(t)").body
    assert _lines(fold_fill_loops(body)) == [arange, "out = mod.f(t)"]


@pytest.mark.parametrize(
    "fill",
    [
        # a float tensor: a running sum rounds otherwise than a product
        "t = torch.zeros(n + 1, dtype=torch.float32)\nfor r in range(n):\n    t[r + 1] = t[r] + c",
        # a size other than the loop's count: the last element is left 0
        "t = torch.zeros(n + 1, dtype=torch.int32)\nfor j in range(n):\n    t[j] = j * c",
        # a step that reads the loop's name, or the tensor
        "t = torch.zeros(n, dtype=torch.int32)\nfor j in range(n):\n    t[j] = j * j",
        "t = torch.zeros(n + 1, dtype=torch.int32)\nfor r in range(n):\n    t[r + 1] = t[r] + t[0]",
        # the loop's name read after the loop
        "t = torch.zeros(n, dtype=torch.int32)\nfor j in range(n):\n    t[j] = j\nlast = j",
    ],
)
def test_other_fill_loops_are_kept(fill: str) -> None:
    body = ast.parse(fill).body
    assert _lines(fold_fill_loops(body)) == _lines(body)
