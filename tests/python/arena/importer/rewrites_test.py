"""The rewrites (arena.importer.rewrites and the modules it names) on small loops: a helper inlined
without rebinding the loop's names, literal tuples spread, `if`s on literals folded, integer fill
loops read as aranges."""

from __future__ import annotations

import ast

import pytest

from arena.importer.fill_loops import fold_fill_loops
from arena.importer.helper_inlining import inline_helpers
from arena.importer.literal_spreading import spread_literals
from arena.importer.rewrites import fold_constant_ifs


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
        (  # a grid filled with each element's row-major index
            "t = torch.zeros(s, n, dtype=torch.int32)\nfor i in range(s):\n    for j in range(n):\n        t[i, j] = i * n + j",
            "t = torch.arange(s * n, dtype=torch.int32).reshape(s, n)",
        ),
        (
            "t = torch.zeros(s, n, dtype=torch.int32)\nfor i in range(s):\n    for j in range(n):\n        t[i, j] = j + n * i",
            "t = torch.arange(s * n, dtype=torch.int32).reshape(s, n)",
        ),
        (  # a range per row: each element its column
            "t = torch.zeros(s, n + 1, dtype=torch.int32)\nfor i in range(s):\n    for j in range(n + 1):\n        t[i, j] = j",
            "t = torch.arange(s * (n + 1), dtype=torch.int32).reshape(s, n + 1) % (n + 1)",
        ),
        (  # rows of q elements laid end to end, each 0 .. q-1
            "t = torch.zeros(total, dtype=torch.int64)\nfor r in range(n):\n    start = r * q\n    for k in range(q):\n"
            "        t[start + k] = k",
            "t = torch.arange(n * q, dtype=torch.int64).reshape(total) % q",
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
        # a grid: another stride than the row's length, a float tensor, columns first
        "t = torch.zeros(s, n, dtype=torch.int32)\nfor i in range(s):\n    for j in range(n):\n        t[i, j] = i * s + j",
        "t = torch.zeros(s, n, dtype=torch.float32)\nfor i in range(s):\n    for j in range(n):\n        t[i, j] = i * n + j",
        "t = torch.zeros(s, n, dtype=torch.int32)\nfor j in range(n):\n    for i in range(s):\n        t[i, j] = i * n + j",
        # a range per row: the row's index stored, a float tensor, a start of another stride, the
        # start read after the loop
        "t = torch.zeros(s, n, dtype=torch.int32)\nfor i in range(s):\n    for j in range(n):\n        t[i, j] = i",
        "t = torch.zeros(s, n, dtype=torch.float32)\nfor i in range(s):\n    for j in range(n):\n        t[i, j] = j",
        "t = torch.zeros(m, dtype=torch.int32)\nfor r in range(n):\n    start = r * p\n    for k in range(q):\n        t[start + k] = k",
        "t = torch.zeros(m, dtype=torch.int32)\nfor r in range(n):\n    start = r * q\n    for k in range(q):\n"
        "        t[start + k] = k\nlast = start",
        # a start read from a tensor that is no running sum of the row length folded above
        "t = torch.zeros(m, dtype=torch.int32)\nfor r in range(n):\n    start = s[r].item()\n    for k in range(q):\n"
        "        t[start + k] = k",
    ],
)
def test_other_fill_loops_are_kept(fill: str) -> None:
    body = ast.parse(fill).body
    assert _lines(fold_fill_loops(body)) == _lines(body)


MAKE = (
    "def make(n, device='cpu'):\n"
    "    torch.manual_seed(42)\n"
    "    x = torch.randn(n, 4)\n"
    "    w = torch.rand(4)\n"
    "    if device != 'cpu':\n"
    "        x = x.to(device)\n"
    "        w = w.to(device)\n"
    "    return x, w\n"
)
DRAWN_TWICE = (
    "inputs = make(n, device)\ncpu_inputs = make(n, 'cpu')\nout = mod.f(*inputs)\nref = reference(*cpu_inputs)"
)


def test_a_self_seeded_helper_called_again_for_the_cpu_is_a_copy_of_its_first_draws() -> None:
    body = ast.parse(DRAWN_TWICE).body
    assert _lines(spread_literals(inline_helpers(body, _functions(MAKE), {}, "t", 0, "mod"))) == [
        "torch.manual_seed(42)",
        "x = torch.randn(n, 4)",
        "w = torch.rand(4)",
        "if device != 'cpu':\n    x = x.to(device)\n    w = w.to(device)",
        "inputs = (x, w)",
        "cpu_inputs_0 = x.to('cpu')",  # bound before the kernel runs: what it writes is not seen
        "cpu_inputs_1 = w.to('cpu')",
        "cpu_inputs = (cpu_inputs_0, cpu_inputs_1)",
        "out = mod.f(x, w)",
        "ref = reference(cpu_inputs_0, cpu_inputs_1)",
    ]


@pytest.mark.parametrize(
    "old, new",
    [
        ("    torch.manual_seed(42)\n", ""),  # the second call draws other values
        ("torch.rand(4)", "torch.rand(4, device=device)"),  # drawn on another generator
        ("        w = w.to(device)\n", "        w = w.to(device) * 2\n"),  # the device changes a value
    ],
)
def test_a_helper_that_may_draw_other_values_the_second_time_is_not_copied(old: str, new: str) -> None:
    body = ast.parse(DRAWN_TWICE).body
    lines = _lines(inline_helpers(body, _functions(MAKE.replace(old, new)), {}, "t", 0, "mod"))
    assert "cpu_inputs = make(n, 'cpu')" in lines


def test_a_second_call_after_the_kernel_may_have_written_is_not_copied() -> None:
    body = ast.parse("inputs = make(n, device)\nmod.f(*inputs)\ncpu_inputs = make(n, 'cpu')").body
    assert _lines(inline_helpers(body, _functions(MAKE), {}, "t", 0, "mod"))[-1] == "cpu_inputs = make(n, 'cpu')"


def test_an_element_of_a_literal_tuple_is_read_until_a_name_it_holds_is_rebound() -> None:
    body = ast.parse("args = (x, w)\nout = mod.f(args[0], args[1])\nx = x * 2\nref = g(args[0])").body
    assert _lines(spread_literals(body))[1:] == ["out = mod.f(x, w)", "x = x * 2", "ref = g(args[0])"]


def test_a_range_per_row_may_start_at_a_running_sum_of_the_row_length_folded_above() -> None:
    sums = "s = torch.zeros(n + 1, dtype=torch.int32)\nfor r in range(n):\n    s[r + 1] = s[r] + q\n"
    fill = "t = torch.zeros(m, dtype=torch.int32)\nfor r in range(n):\n    start = int(s[r].item())\n    for k in range(q):\n        t[start + k] = k"
    assert _lines(fold_fill_loops(ast.parse(sums + fill).body)) == [
        "s = torch.arange(n + 1, dtype=torch.int32) * q",
        "t = torch.arange(n * q, dtype=torch.int32).reshape(m) % q",
    ]
    other = sums.replace("+ q", "+ p")  # a running sum of another step
    assert len(fold_fill_loops(ast.parse(other + fill).body)) == 3  # the fill kept: two statements
    written = sums + "s[0] = 1\n" + fill  # the sum written after it was folded
    assert len(fold_fill_loops(ast.parse(written).body)) == 4


PAGES = (
    "padded = pages * size\nt = torch.zeros(bs, padded, dtype=torch.int32)\nfor b in range(bs):\n"
    "    for pos in range(m):\n        page = b * pages + pos // size\n        t[b, pos] = page\n"
)


def test_a_block_table_of_pages_is_an_arange_with_a_divisor() -> None:
    assert _lines(fold_fill_loops(ast.parse(PAGES).body)) == [
        "padded = pages * size",
        "t = torch.arange(bs * m, dtype=torch.int32).reshape(bs, padded) // size",
    ]
    inline = PAGES.replace(
        "        page = b * pages + pos // size\n        t[b, pos] = page",
        "        t[b, pos] = pages * b + pos // size",
    )
    assert _lines(fold_fill_loops(ast.parse(inline).body))[1].endswith(".reshape(bs, padded) // size")


@pytest.mark.parametrize(
    "old, new",
    [
        ("padded = pages * size", "padded = pages * size + 1"),  # the row longer than its pages
        ("padded = pages * size\n", "padded = pages * size\npages = 3\n"),  # pages rebound since
        ("b * pages + pos // size", "b * pages + pos // other"),  # another page size
        ("b * pages + pos // size", "pos * pages + b // size"),  # rows and positions swapped
        ("        t[b, pos] = page\n", "        t[b, pos] = page\nlast = page\n"),  # the page read later
    ],
)
def test_other_page_fills_are_kept(old: str, new: str) -> None:
    body = ast.parse(PAGES.replace(old, new)).body
    assert len(fold_fill_loops(body)) == len(body)


def test_a_fill_loop_whose_name_a_later_loop_rebinds_is_its_arange() -> None:
    fill = "t = torch.zeros(n + 1, dtype=torch.int32)\nfor r in range(n):\n    t[r + 1] = t[r] + c\n"
    later = "for r in range(n):\n    u[r] = t[r]"
    assert _lines(fold_fill_loops(ast.parse(fill + later).body)) == [
        "t = torch.arange(n + 1, dtype=torch.int32) * c",
        later,
    ]
