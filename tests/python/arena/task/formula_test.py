from __future__ import annotations

import pytest

from arena.task.formula import ELEMENT_SIZES, FormulaError, evaluate_formula
from arena.task.task import DTYPES


def test_arithmetic_over_dims_and_esize() -> None:
    dims = {"M": 3, "N": 5, "K": 7}
    assert evaluate_formula("2*M*N*K", dims, 2) == 210.0
    assert evaluate_formula("(M + N) * esize", dims, 4) == 32.0
    assert evaluate_formula("N / 2 + N // 2 - -1", dims, 1) == 5.5
    assert evaluate_formula("2**10 * +M", dims, 1) == 3072.0
    assert evaluate_formula(" 1.5e3 ", {}, 1) == 1500.0


@pytest.mark.parametrize(
    "expr, fragment",
    [
        ("M * Q", "uses 'Q'"),
        ("__import__('os').system('x')", "Call is not allowed"),
        ("M.real", "Attribute is not allowed"),
        ("M if N else K", "IfExp is not allowed"),
        ("M % 2", "BinOp is not allowed"),
        ("M < N", "Compare is not allowed"),
        ("'a' * M", "is not a number"),
        ("True * M", "is not a number"),
        ("M / 0", "cannot be evaluated"),
        ("10 ** 10 ** 10", "too large"),
        ("M *", "does not parse"),
        ("", "does not parse"),
    ],
)
def test_rejected(expr: str, fragment: str) -> None:
    with pytest.raises(FormulaError, match=None) as raised:
        evaluate_formula(expr, {"M": 3, "N": 4, "K": 5}, 2)
    assert fragment in str(raised.value)


def test_every_dtype_has_an_element_size() -> None:
    assert set(ELEMENT_SIZES) == set(DTYPES)
    assert ELEMENT_SIZES["bfloat16"] == 2 and ELEMENT_SIZES["float64"] == 8
