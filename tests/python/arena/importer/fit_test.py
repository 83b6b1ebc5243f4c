"""A loosened tolerance fitted by the import (arena.importer.fit): the lowered reference of the
fixture's rms task measured in a child process, the loosest 1-2-5 tolerance that refuses it
written with a comment, one already tight enough left alone, arena's default written where no
ladder value lies between it and half the lowered reference's error, AKA's kept where even the
default would refuse the reference, and a child that dies failing the task it was measuring alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.cli import main as cli
from arena.importer import fit as fit_module
from arena.importer.fit import Fit, decide, ladder_value, measure
from arena.importer.importer import import_checkout
from arena.importer.report import format_table
from arena.task.load import load_task
from arena.task.task import Tolerance
from arena.task.tolerance import DEFAULT_TOLERANCES
from arena.validation.precision import check_tolerance
from arena.validation.reference_check import load_reference

SEEDED = "triton2triton/vllm/fake_seeded"  # rms of float32 rows, compared within 1e-5 (arena's default)
SEEDED_ADDRESS = f"tasks/{SEEDED}:fake_seeded"
SCALE = "triton2triton/vllm/fake_scale"  # float16 within atol 1e-2: the lowered reference passes the default too
SCALE_ADDRESS = f"tasks/{SCALE}:fake_scale"
FLOAT32 = DEFAULT_TOLERANCES["float32"]


def _loosen(checkout: Path, tolerance: str = "atol=1e-2, rtol=1e-2") -> None:
    """fake_seeded's test compared within `tolerance`, as AKA's float32 tests often do."""
    runner = checkout / "tasks" / SEEDED / "scripts" / "task_runner.py"
    runner.write_text(runner.read_text().replace("atol=1e-5, rtol=1e-5", tolerance))


def _check_c(out: Path, address: str) -> tuple[list[str], list[str]]:
    """(failures, passed) of the fast tier's check c on the imported task, in this process."""
    task = load_task(out, address)
    reference = load_reference(task, out / task.task_dir)
    failures, passed, _ = check_tolerance(task, reference, [case for case in task.cases if not case.timed])
    return failures, passed


def _fits(outcomes: list, source: str) -> tuple[Fit, ...]:
    return next(outcome.tolerances for outcome in outcomes if outcome.source == source)


def test_a_loose_float32_tolerance_is_fitted_to_refuse_the_lowered_reference(checkout: Path, tmp_path: Path) -> None:
    _loosen(checkout)
    import_checkout(checkout, tmp_path / "as_aka")  # no fit: AKA's 1e-2 accepts the lowered reference
    failures, _ = _check_c(tmp_path / "as_aka", SEEDED_ADDRESS)
    assert failures and "(atol 0.01, rtol 0.01) accepts a lower-precision reference" in failures[0]

    out = tmp_path / "fitted"
    (fit,) = _fits(import_checkout(checkout, out, fit=True), SEEDED)
    assert (fit.dtype, fit.aka, fit.case, fit.output, fit.reason) == (
        "float32",
        Tolerance(1e-2, 1e-2),
        "shape1",
        "result",
        "",
    )
    assert fit.s_low is not None and 2e-3 <= fit.s_low < 4e-3  # bfloat16 inputs: 2^-9 of |result| / (1 + |result|)
    assert fit.fitted == Tolerance(1e-3, 1e-3)  # the ladder's largest value at most s_low / 2
    assert load_task(out, SEEDED_ADDRESS).tolerances["float32"] == Tolerance(1e-3, 1e-3)
    build = (out / "tasks" / SEEDED / "BUILD").read_text()
    comment = " ".join(line.strip().removeprefix("# ") for line in build.splitlines() if line.startswith("    #"))
    assert comment.startswith(
        "float32 tolerance fitted by `arena import aka` (docs/importer.md); AKA's test has atol 0.01, rtol 0.01, "
        "which accepts the lower-precision reference (s_low 0.00"
    )
    assert "tolerances={'float32': {'atol': 0.001, 'rtol': 0.001}}," in build
    failures, passed = _check_c(out, SEEDED_ADDRESS)
    assert failures == []
    assert passed == [
        "the float32 tolerance (atol 0.001, rtol 0.001) refuses a lower-precision reference on case 'shape1'"
    ]


def test_a_tolerance_check_c_accepts_is_untouched(checkout: Path, tmp_path: Path) -> None:
    """fake_seeded at arena's default is not measured; fake_scale's float16 atol 1e-2 and
    fake_quant's float32 rtol 1e-4 are, and kept: the default accepts their lowered reference (no
    refusal to keep). Every BUILD is the one written without fitting, byte for byte."""
    plain, fitted = tmp_path / "plain", tmp_path / "fitted"
    import_checkout(checkout, plain)
    outcomes = import_checkout(checkout, fitted, fit=True)
    assert _fits(outcomes, SEEDED) == ()
    (scale,) = _fits(outcomes, SCALE)
    assert scale.fitted is None and scale.aka == Tolerance(1e-2, 1e-3)
    assert scale.reason == "arena's default accepts the lowered reference too: check c has nothing to refuse"
    for build in sorted(plain.rglob("BUILD")):
        assert (fitted / build.relative_to(plain)).read_bytes() == build.read_bytes(), build


def test_a_tolerance_that_refuses_the_lowered_reference_already_is_kept(checkout: Path, tmp_path: Path) -> None:
    """Loosened (rtol 1e-4 over the default's 1e-5) but still refusing bfloat16 inputs: check c passes."""
    _loosen(checkout, "atol=1e-5, rtol=1e-4")
    (fit,) = _fits(import_checkout(checkout, tmp_path / "out", fit=True), SEEDED)
    assert fit.fitted is None and fit.reason == "it refuses the lowered reference already (case 'shape1')"


def _refused_only_by_the_default(s_low: float, output: str) -> dict:
    """The child's message for a float32 output whose lowered reference AKA's tolerance accepts."""
    row = {"case": "shape1", "output": output, "dtype": "float32", "s_low": s_low}
    return {"measured": [{**row, "default_refuses": True, "task_refuses": False}]}


def test_no_ladder_value_between_the_default_and_half_the_lowered_error_writes_the_default() -> None:
    """s_low / 2 under arena's default: the default itself, which check c never fails, and which
    the reference meets (its own error far under half of it)."""
    message = _refused_only_by_the_default(1.6e-5, "y")
    message["measured"][0]["s_ref"] = 4e-6  # twice it is under the default 1e-5
    fit = decide("float32", Tolerance(1e-2, 1e-2), message)
    assert fit.fitted == FLOAT32 and fit.default and fit.reason == ""
    assert fit.s_low == 1.6e-5 and (fit.case, fit.output) == ("shape1", "y")
    assert fit.to_dict()["fitted"] is True and fit.to_dict()["default"] is True
    assert fit.to_dict()["to"] == {"atol": 1e-5, "rtol": 1e-5}
    assert fit.describe() == (
        "float32 atol 0.01, rtol 0.01 -> arena's default atol 1e-05, rtol 1e-05 "
        "(no ladder value fits: s_low 1.6e-05, case 'shape1', output 'y')"
    )
    message["measured"][0]["s_low"] = 2e-5  # half of it is the default: that is a ladder value
    ladder = decide("float32", Tolerance(1e-2, 1e-2), message)
    assert ladder.fitted == Tolerance(1e-5, 1e-5) and not ladder.default


def test_the_default_is_capped_at_aka_s_tighter_component() -> None:
    """AKA's atol 1e-6 under float32's default 1e-5 stays AKA's: nothing AKA's test refuses is accepted."""
    fit = decide("float32", Tolerance(1e-6, 1e-2), _refused_only_by_the_default(1.6e-5, "y"))
    assert fit.default and fit.fitted == Tolerance(1e-6, 1e-5)


def test_the_default_is_not_written_where_it_would_refuse_the_reference() -> None:
    """The reference's own error 6e-6: twice it is over float32's default 1e-5, which validation's
    float64 check of the reference would fail; AKA's is kept, with why."""
    message = _refused_only_by_the_default(1.6e-5, "y")
    message["measured"][0]["s_ref"] = 6e-6
    fit = decide("float32", Tolerance(1e-2, 1e-2), message)
    assert fit.fitted is None and not fit.default and fit.to_dict()["to"] is None
    assert fit.reason == (
        "no ladder value lies between 2 x the reference's own error in float32 (1.2e-05) and s_low / 2 (8e-06), "
        "below AKA's, and arena's default (atol 1e-05, rtol 1e-05) would refuse the reference"
    )


def test_the_import_writes_the_default_with_a_comment_and_check_c_passes(
    checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fake_seeded loosened to 1e-2, its lowered reference measured (as if) at s_low 1.2e-5: the
    BUILD has float32's default under a comment saying why, and check c has no loosened tolerance
    to fail."""
    _loosen(checkout)
    message = _refused_only_by_the_default(1.2e-5, "result")
    monkeypatch.setattr(fit_module, "measure", lambda out, addresses: {a: message for a in addresses})  # every task
    out = tmp_path / "out"
    outcomes = import_checkout(checkout, out, fit=True)
    (fit,) = _fits(outcomes, SEEDED)
    assert fit.default and fit.fitted == FLOAT32
    assert format_table(outcomes).splitlines()[-1] == (  # fake_quant float32 too; fake_scale has no float32 row
        "3 loosened tolerance(s) measured: 2 fitted (2 to arena's default), 1 kept as AKA's"
    )
    build = (out / "tasks" / SEEDED / "BUILD").read_text()
    comment = " ".join(line.strip().removeprefix("# ") for line in build.splitlines() if line.startswith("    #"))
    assert comment == (
        "float32 tolerance set to arena's default by `arena import aka` (docs/importer.md); AKA's test has "
        "atol 0.01, rtol 0.01, which accepts the lower-precision reference (s_low 1.2e-05, case 'shape1'), and "
        "no looser value refuses it by a factor of 2"
    )
    assert "tolerances={'float32': {'atol': 1e-05, 'rtol': 1e-05}}," in build
    assert load_task(out, SEEDED_ADDRESS).tolerances["float32"] == FLOAT32
    failures, passed = _check_c(out, SEEDED_ADDRESS)
    assert failures == [] and passed == []  # a default tolerance is not a loosened one


def test_no_fit_where_the_reference_itself_is_as_far_from_float64_as_the_lowered_one() -> None:
    """A float32 output compared with a float16 matmul (rocmbench's assert_close between dtypes):
    the reference's own error is the lowered one's; a tolerance that refuses the lowered reference
    would refuse the reference too."""
    message = _refused_only_by_the_default(4.2e-4, "c")
    message["measured"][0]["s_ref"] = 4.2e-4
    fit = decide("float32", Tolerance(1e-5, 1e-3), message)
    assert fit.fitted is None and fit.reason == (
        "no ladder value lies between 2 x the reference's own error in float32 (0.00084) and s_low / 2 (0.00021), "
        "below AKA's, and arena's default (atol 1e-05, rtol 1e-05) would refuse the reference"
    )
    message["measured"][0]["s_ref"] = 5e-5  # twice it is 1e-4: 2e-4 still fits
    assert decide("float32", Tolerance(1e-5, 1e-3), message).fitted == Tolerance(1e-5, 2e-4)


def test_the_fit_accepts_the_baseline_s_own_error_or_keeps_aka_s() -> None:
    """A baseline 6e-4 from the reference (validation checks it within the tolerance): 1e-3 would
    refuse it by less than 2x and 2e-3 would not refuse the lowered reference (s_low 3e-3) by 2x,
    so AKA's stays, saying the baseline is why; at 4e-4, 1e-3 accepts it by 2.5x and is written.
    A baseline the child could not run (None) bounds nothing."""
    message = _refused_only_by_the_default(3e-3, "y")
    message["measured"][0].update(s_ref=1e-7, s_base=6e-4)
    fit = decide("float32", Tolerance(1e-2, 1e-2), message)
    assert fit.fitted is None and fit.reason == (
        "no ladder value lies between 2 x the baseline's error in float32 (0.0012) and s_low / 2 (0.0015), "
        "below AKA's, and arena's default (atol 1e-05, rtol 1e-05) would refuse the baseline"
    )
    message["measured"][0]["s_base"] = 4e-4
    assert decide("float32", Tolerance(1e-2, 1e-2), message).fitted == Tolerance(1e-3, 1e-3)
    message["measured"][0]["s_base"] = None
    assert decide("float32", Tolerance(1e-2, 1e-2), message).fitted == Tolerance(1e-3, 1e-3)


def test_the_default_is_not_written_where_it_would_refuse_the_baseline() -> None:
    message = _refused_only_by_the_default(1.6e-5, "y")
    message["measured"][0].update(s_ref=1e-7, s_base=6e-6)  # twice it is over float32's default 1e-5
    fit = decide("float32", Tolerance(1e-2, 1e-2), message)
    assert fit.fitted is None and fit.reason.endswith("would refuse the baseline")


def test_the_import_measures_the_baseline_and_keeps_aka_s_when_it_is_as_coarse_as_the_lowered_reference(
    checkout: Path, tmp_path: Path
) -> None:
    """fake_seeded loosened to 1e-2 and its baseline rounding each result through bfloat16, as
    coarse as the lowered reference (bfloat16 inputs): no tolerance refuses one by 2x and accepts
    the other; the child measured the baseline (s_base) and AKA's 1e-2 stays, with that reason."""
    _loosen(checkout)
    kernel = checkout / "tasks" / SEEDED / "source" / "fake_seeded.py"
    kernel.write_text(
        kernel.read_text().replace(
            "return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)",
            "return (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)).to(torch.bfloat16).float()",
        )
    )
    assert "bfloat16" in kernel.read_text()
    out = tmp_path / "out"
    (fit,) = _fits(import_checkout(checkout, out, fit=True), SEEDED)
    assert fit.fitted is None, fit
    assert "the baseline's error in float32" in fit.reason and fit.reason.endswith("would refuse the baseline")
    assert load_task(out, SEEDED_ADDRESS).tolerances["float32"] == Tolerance(1e-2, 1e-2)


@pytest.mark.parametrize(
    ("s_low", "aka", "expected"),
    [
        (2.3e-3, Tolerance(1e-2, 1e-2), 1e-3),
        (4.2e-3, Tolerance(1e-1, 1e-1), 2e-3),
        (1.0e-2, Tolerance(1e-2, 1e-2), 5e-3),
        (4.0e-4, Tolerance(1e-5, 1e-3), 2e-4),  # AKA's atol is capped later, not a bound on s
        (5.0, Tolerance(0.5, 0.1), 0.2),  # below the looser of AKA's two: else the capped one is AKA's own
        (1.0e-5, Tolerance(1e-2, 1e-2), None),
    ],
)
def test_the_ladder_value_is_the_largest_at_most_half_s_low(
    s_low: float, aka: Tolerance, expected: float | None
) -> None:
    assert ladder_value(s_low, aka, FLOAT32) == expected


def test_each_fitted_component_is_capped_at_aka_s() -> None:
    message = _refused_only_by_the_default(4.2e-4, "c")
    assert decide("float32", Tolerance(1e-5, 1e-3), message).fitted == Tolerance(1e-5, 2e-4)


def _broken_scale(checkout: Path, tmp_path: Path, first: str) -> Path:
    """The import (not fitted) with `first` run when fake_scale's reference.py loads."""
    _loosen(checkout)
    out = tmp_path / "out"
    import_checkout(checkout, out)
    reference = out / "tasks" / SCALE / "reference.py"
    reference.write_text(first + reference.read_text())
    return out


def test_a_child_that_dies_fails_the_task_it_was_measuring_alone(checkout: Path, tmp_path: Path) -> None:
    out = _broken_scale(checkout, tmp_path, "import os\nos._exit(3)\n")
    measured = measure(out, [SCALE_ADDRESS, SEEDED_ADDRESS])
    assert measured[SCALE_ADDRESS]["error"].startswith("the lowered reference ended the process (exit 3)")
    assert [row["case"] for row in measured[SEEDED_ADDRESS]["measured"]] == ["shape1"]  # a new child took it
    fit = decide("float16", Tolerance(1e-2, 1e-3), measured[SCALE_ADDRESS])
    assert fit.fitted is None and fit.reason.startswith("not measured: the lowered reference ended the process")


def test_a_child_that_outlasts_its_time_fails_that_task_alone(checkout: Path, tmp_path: Path) -> None:
    # 15 s a task: the next task, in a new child, must finish within it on a loaded machine too
    # (at 3 s it did not once, at a load of 5 on 2 cores).
    out = _broken_scale(checkout, tmp_path, "import time\ntime.sleep(600)\n")
    measured = measure(out, [SCALE_ADDRESS, SEEDED_ADDRESS], timeout_s=15)
    assert measured[SCALE_ADDRESS]["error"].startswith("the lowered reference took over 15 s")
    assert "measured" in measured[SEEDED_ADDRESS]


def test_the_command_reports_each_fit(checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _loosen(checkout)
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "pants.toml").write_text("")
    argv = ["--repo-root", str(tmp_path / "repo"), "import", "aka", str(checkout), "--out", str(tmp_path / "out")]
    assert cli.main([*argv, "--json", "-"]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert document["fitted"] == 1
    seeded = next(o for o in document["outcomes"] if o["source"] == SEEDED)
    (fit,) = seeded["tolerances"]
    assert {k: fit[k] for k in ("dtype", "fitted", "from", "to", "case", "output", "reason")} == {
        "dtype": "float32",
        "fitted": True,
        "from": {"atol": 0.01, "rtol": 0.01},
        "to": {"atol": 0.001, "rtol": 0.001},
        "case": "shape1",
        "output": "result",
        "reason": "",
    }
    assert 2e-3 <= fit["s_low"] < 4e-3
    table = captured.err.splitlines()
    assert any(line.startswith(f"tolerance of {SEEDED}: float32 atol 0.01, rtol 0.01 -> atol 0.001") for line in table)
    assert "3 loosened tolerance(s) measured: 1 fitted, 2 kept as AKA's" in table
