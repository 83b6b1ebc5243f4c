"""What importing one AgentKernelArena task came to: a declaration written, or the reason none was."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arena.importer.fit import Fit


class NotImportable(Exception):
    """One task cannot be imported; str(error) is the reason shown in the report.

    Raised deep in the reading of a task and caught once per task (arena.importer.importer), so
    one unreadable task never stops the others. `kind` names the reason's group in the report:
    the class's KIND (a triton2triton reason is raised as a subclass below) or `kind=` where given
    (a hip2hip or torch2hip task's: arena.importer.hip_layout); "" for a reason of its own.
    """

    KIND = ""  # the group of every reason of the class (a subclass below); `kind=` overrides it

    def __init__(self, reason: str, kind: str | None = None) -> None:
        super().__init__(reason)
        self.kind = self.KIND if kind is None else kind


# A triton2triton task's reason is grouped by the stage and rule of the reading that refused it:
# each is raised as one of these (its KIND the group's line in the report), the text unchanged.
class LayoutNotRead(NotImportable):
    """The config or the test is laid out other than the importer reads (config.py, harness.py, ...)."""

    KIND = "a test layout the importer does not read"


class CasesByCode(NotImportable):
    """The test's list of cases is made by code, not written as literals the importer reads."""

    KIND = "cases the test builds by code"


class KernelCallNotRead(NotImportable):
    """The test calls the kernel other than once per case, as one function of tensors."""

    KIND = "a kernel call the importer does not read"


class LaunchNotWritten(NotImportable):
    """The test launches a @triton.jit kernel itself and the launch cannot be written out (launch.py)."""

    KIND = "a kernel launched in the test that cannot be written out"


class PartialCheck(NotImportable):
    """The test checks less than each whole output against a reference (or checks by code)."""

    KIND = "a check of less than a whole output"


class NotDrawn(NotImportable):
    """An input's values are made otherwise than by one draw an arena distribution matches."""

    KIND = "an input no arena distribution draws"


class NotFollowed(NotImportable):
    """A value the reading (arena.importer.interpreter) does not follow: `cannot be read`."""

    KIND = "a value the reading does not follow"


class NotHeld(NotImportable):
    """A value, dtype, rank or argument that arena's task format cannot hold."""

    KIND = "what arena's task format cannot hold"


class ToleranceNotHeld(NotImportable):
    """The test's tolerance is one arena's per-dtype tolerances and exact integer check cannot hold."""

    KIND = "a tolerance arena cannot hold"


class ReferenceNotWritten(NotImportable):
    """The reference cannot be written out from the test (arena.importer.reference_source)."""

    KIND = "a reference that cannot be written out"


class GradientCheck(NotImportable):
    """The test differentiates through the kernel; arena checks outputs, not gradients."""

    KIND = "a check of gradients"


class StoredAnswer(NotImportable):
    """The baseline keeps state across calls or returns an input: arena's stored-answer rule (state.py)."""

    KIND = "state kept across calls or an input returned"


class LoaderRefused(NotImportable):
    """The written declaration is refused by arena's own loader (output.py)."""

    KIND = "a declaration arena's loader refuses"


@dataclass(frozen=True)
class Outcome:
    """One task of the checkout: imported (address set) or not (reason set)."""

    source: str  # the task's name in the checkout, e.g. "triton2triton/vllm/triton_rms_norm"
    address: str = ""  # the written kernel_task, e.g. "tasks/triton2triton/vllm/triton_rms_norm:triton_rms_norm"
    reason: str = ""  # why no declaration was written; "" when one was
    tolerances: tuple[Fit, ...] = ()  # each loosened float tolerance: fitted, or AKA's kept and why
    kind: str = ""  # the reason's group (NotImportable.kind); "" when imported or for a reason of its own
    archs: tuple[str, ...] = ()  # the GPUs it is declared for, when not arena's default (amd_options.py)

    @property
    def imported(self) -> bool:
        return not self.reason

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "imported": self.imported,
            "address": self.address,
            "reason": self.reason,
            "kind": self.kind,
            "archs": list(self.archs),
            "tolerances": [fit.to_dict() for fit in self.tolerances],
        }
