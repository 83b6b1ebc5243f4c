"""Torch operations that do one job under several names: a task that forbids one forbids the rest.

A task's `forbidden` names what it must not call (docs/task-format.md); a candidate that reads the
list can pick a name it leaves out (`torch.chain_matmul` where `torch.matmul` is forbidden,
`torch.log_softmax(x).exp()` for a softmax, a private `torch._scaled_dot_product_*` beside
`F.scaled_dot_product_attention`). Each family here is such a job: when a rule of the task names
one of its `marks`, every member is forbidden too, as a torch function and a Tensor method
(docs/harness.md, cheat 1). The static check and the run-time recorder both read the rules
through `with_families`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True)
class Family:
    job: str
    marks: frozenset[str]  # a rule whose own name is one of these brings in the family
    members: tuple[str, ...]  # dotted below `torch.`, as a candidate's source or the recorder names them


FAMILIES = (
    Family(
        "a matrix product",
        frozenset({"matmul", "mm", "bmm", "addmm", "baddbmm", "mv", "addmv", "linear", "tensordot", "linalg"}),
        (
            "matmul", "mm", "bmm", "addmm", "addbmm", "baddbmm", "mv", "addmv", "dot", "vdot", "inner", "outer",
            "ger", "addr", "chain_matmul", "tensordot", "einsum", "rmatmul", "_addmm_activation", "_int_mm",
            "_scaled_mm", "_grouped_mm", "_scaled_grouped_mm", "linalg.matmul", "linalg.multi_dot",
            "linalg.vecdot", "nn.functional.linear", "nn.functional.bilinear",
        ),
    ),
    Family(
        "a softmax",
        frozenset({"softmax", "log_softmax"}),
        (
            "softmax", "log_softmax", "_softmax", "_log_softmax", "special.softmax", "special.log_softmax",
            "nn.functional.softmax", "nn.functional.log_softmax", "nn.functional.softmin",
        ),
    ),
    Family(
        "an attention",
        frozenset({"scaled_dot_product_attention", "attention"}),
        (
            "nn.functional.scaled_dot_product_attention", "_scaled_dot_product_attention_math",
            "_scaled_dot_product_flash_attention", "_scaled_dot_product_flash_attention_for_cpu",
            "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
            "_flash_attention_forward", "_efficient_attention_forward",
        ),
    ),
)  # fmt: skip


def own_name(rule: str) -> str:
    """A rule's last component without the underscores around it: "torch._softmax" -> "softmax"."""
    return rule.rsplit(".", 1)[-1].strip("_")


def with_families(rules: Iterable[str]) -> tuple[str, ...]:
    """The rules, then every member (as `torch.<member>`) of each family one of them marks."""
    given = tuple(rules)
    names = {own_name(rule) for rule in given}
    added = [f"torch.{m}" for f in FAMILIES if names & f.marks for m in f.members]
    return given + tuple(dict.fromkeys(r for r in added if r not in given))
