"""The tolerances the test compares its outputs within, by dtype (arena's are per dtype); an integer
output the test lets differ refused."""

from __future__ import annotations

import ast

from arena.importer.correctness import Comparison, TestLoop
from arena.importer.fields import TensorField
from arena.importer.follow import FollowedCase, same_in_every_case
from arena.importer.outcome import ToleranceNotHeld
from arena.task.task import CASE_DTYPE, INT_DTYPES

_DEFAULT_TOLERANCES = {"allclose": (1e-8, 1e-5), "equal": (0.0, 0.0)}  # (atol, rtol); assert_close: arena's
# The largest magnitude of each integer dtype: a tolerance of atol + rtol * this below 1 accepts no difference.
_INT_MAGNITUDES = {"bool": 1, "int8": 128, "uint8": 255, "int16": 2**15, "int32": 2**31, "int64": 2**63}


def tolerances_by_dtype(
    loop: TestLoop, cases: list[FollowedCase], outputs: list[TensorField]
) -> dict[str, dict[str, float]]:
    """Each float output's tolerance, by its dtype (arena's tolerances are per dtype). Integer
    outputs are checked exactly by arena: one the test lets differ is refused, and two outputs of
    one dtype that the test compares within different tolerances are refused."""
    by_dtype: dict[str, dict[str, float] | None] = {}
    first: dict[str, str] = {}  # dtype -> the output that set its tolerance
    for output, comparison in zip(outputs, loop.comparisons):
        if output.dtype in INT_DTYPES:
            _check_exact(comparison, cases, output)
            continue  # integer outputs are compared exactly anyway
        tolerance = _tolerance(comparison, cases) or _mixed_default(comparison, cases, output, loop)
        # a `$dtype` output: the test's tolerance under each dtype its cases give it
        for dtype in sorted(set(output.case_dtypes)) if output.dtype == CASE_DTYPE else [output.dtype]:
            if dtype not in by_dtype:
                by_dtype[dtype], first[dtype] = tolerance, output.name
            elif by_dtype[dtype] != tolerance:
                raise ToleranceNotHeld(
                    f"outputs {first[dtype]!r} and {output.name!r} are both {dtype} and the test compares "
                    f"them within different tolerances ({_shown(by_dtype[dtype])}; {_shown(tolerance)}); "
                    "arena's tolerances are per dtype"
                )
    return {dtype: tolerance for dtype, tolerance in by_dtype.items() if tolerance}


def _tolerance(comparison: Comparison, cases: list[FollowedCase]) -> dict[str, float] | None:
    default = _DEFAULT_TOLERANCES.get(comparison.kind)
    tolerance: dict[str, float] = {}
    for key, node, fallback in (("atol", comparison.atol, 0), ("rtol", comparison.rtol, 1)):
        if node is not None:
            tolerance[key] = _tolerance_value(cases, node, key)
        elif default is not None:
            tolerance[key] = default[fallback]
    return tolerance or None


# torch.testing.assert_close's defaults (atol, rtol) by dtype; between two dtypes it takes the looser.
_ASSERT_CLOSE_DEFAULTS = {
    "float16": (1e-5, 1e-3), "bfloat16": (1e-5, 1.6e-2), "float32": (1e-5, 1.3e-6), "float64": (1e-7, 1e-7),
}  # fmt: skip


def _mixed_default(
    comparison: Comparison, cases: list[FollowedCase], output: TensorField, loop: TestLoop
) -> dict[str, float] | None:
    """assert_close without a tolerance, of an output and a reference of another float dtype
    (`check_dtype=False`: a float32 output against a float16 product): torch's default for the
    looser of the two, which the test applies; None where the dtypes agree (arena's default then)."""
    if comparison.kind != "assert_close" or comparison.atol is not None or comparison.rtol is not None:
        return None
    index = loop.comparisons.index(comparison)
    dtypes = {output.dtype} | {str(getattr(case.reference_outputs[index], "dtype", "")) for case in cases}
    if len(dtypes) == 1 or not dtypes <= set(_ASSERT_CLOSE_DEFAULTS):
        return None
    atol, rtol = max(_ASSERT_CLOSE_DEFAULTS[d][0] for d in dtypes), max(_ASSERT_CLOSE_DEFAULTS[d][1] for d in dtypes)
    return {"atol": atol, "rtol": rtol}


def _check_exact(comparison: Comparison, cases: list[FollowedCase], output: TensorField) -> None:
    """NotImportable when the test gives an integer output a tolerance that accepts a difference."""
    given = {
        key: _tolerance_value(cases, node, key)
        for key, node in (("atol", comparison.atol), ("rtol", comparison.rtol))
        if node is not None
    }
    if given.get("atol", 0.0) + given.get("rtol", 0.0) * _INT_MAGNITUDES[output.dtype] >= 1:
        raise ToleranceNotHeld(
            f"output {output.name!r} is {output.dtype} and the test accepts differences in it ({_shown(given)}); "
            "arena checks integer outputs exactly"
        )


def _tolerance_value(cases: list[FollowedCase], node: ast.expr, key: str) -> float:
    value = same_in_every_case(cases, node, f"the tolerance {key}")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ToleranceNotHeld(f"the tolerance {key} is {value!r}, not a number >= 0")
    return float(value)


def _shown(tolerance: dict[str, float] | None) -> str:
    if not tolerance:
        return "arena's default"
    return ", ".join(f"{key} {value:g}" for key, value in tolerance.items())
