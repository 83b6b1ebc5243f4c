"""Which devices may run a task declared for its `archs` (task/archs.py)."""

from __future__ import annotations

import pytest

from arena.task.archs import arch_error, refusal

DEFAULT = ("sm_90", "gfx942")


@pytest.mark.parametrize("arch", ["sm_90", "sm_90a", "sm_100", "sm_89", "gfx942", "gfx90a", "gfx1100", "gfx950"])
def test_architectures_are_spelled_as_their_compilers_name_them(arch):
    assert arch_error(arch) == ""


@pytest.mark.parametrize("arch", ["mi300x", "h100", "sm90", "sm_9", "gfx", "gfx9", "GFX942", "sm_90 "])
def test_other_spellings_are_named_in_the_error(arch):
    assert repr(arch) in arch_error(arch) and "neither an NVIDIA" in arch_error(arch)


@pytest.mark.parametrize("device", ["sm_90", "sm_100", "gfx942", "gfx950", "gfx90a", ""])
def test_the_default_archs_run_on_hopper_and_later_and_on_cdna(device):
    assert refusal(DEFAULT, device) == ""


@pytest.mark.parametrize(
    ("archs", "device", "said"),
    [
        (DEFAULT, "sm_80", "sm_90 or later on NVIDIA; this GPU is sm_80"),
        (DEFAULT, "gfx1100", "the gfx9 line on AMD; this GPU is gfx1100"),
        (("gfx942",), "sm_90", "declared for gfx942, no NVIDIA GPU; this GPU is sm_90"),
        (("sm_90",), "gfx942", "declared for sm_90, no AMD GPU; this GPU is gfx942"),
        (("sm_80", "sm_90a"), "sm_75", "sm_80 or later or sm_90 alone"),
        (("sm_90a",), "sm_100", "sm_90 alone on NVIDIA; this GPU is sm_100"),
    ],
)
def test_a_device_outside_them_is_refused_with_why(archs, device, said):
    assert said in refusal(archs, device)


def test_an_arch_specific_one_runs_on_that_capability_alone():
    assert refusal(("sm_90a",), "sm_90") == "" and refusal(("sm_90a", "sm_100"), "sm_120") == ""


def test_a_cpu_is_never_refused_it_checks_through_the_interpreter():
    assert refusal(("gfx942",), "") == ""
