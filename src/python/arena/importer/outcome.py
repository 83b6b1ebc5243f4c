"""What importing one AgentKernelArena task came to: a declaration written, or the reason none was."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arena.importer.fit import Fit


class NotImportable(Exception):
    """One task cannot be imported; str(error) is the reason shown in the report.

    Raised deep in the reading of a task and caught once per task (arena.importer.importer), so
    one unreadable task never stops the others. `kind`, where given, names the reason's group in
    the report (a hip2hip or torch2hip task's: arena.importer.hip_layout); "" for a reason of its own.
    """

    def __init__(self, reason: str, kind: str = "") -> None:
        super().__init__(reason)
        self.kind = kind


@dataclass(frozen=True)
class Outcome:
    """One task of the checkout: imported (address set) or not (reason set)."""

    source: str  # the task's name in the checkout, e.g. "triton2triton/vllm/triton_rms_norm"
    address: str = ""  # the written kernel_task, e.g. "tasks/triton2triton/vllm/triton_rms_norm:triton_rms_norm"
    reason: str = ""  # why no declaration was written; "" when one was
    tolerances: tuple[Fit, ...] = ()  # each loosened float tolerance: fitted, or AKA's kept and why
    kind: str = ""  # the reason's group (NotImportable.kind); "" when imported or for a reason of its own

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
            "tolerances": [fit.to_dict() for fit in self.tolerances],
        }
