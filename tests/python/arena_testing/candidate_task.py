"""A two-file task record (kernel.py and lib/util.py) for the candidate layer's tests."""

from __future__ import annotations

from arena.task.task import Case, Category, Entry, Task, TensorSpec


def make_task(editable: tuple[str, ...] = ("kernel.py", "lib"), wrong: str = "wrong") -> Task:
    return Task(
        address="tasks/triton2triton/t:t",
        name="t",
        category=Category.TRITON2TRITON,
        task_dir="tasks/triton2triton/t",
        description="d",
        baseline=("kernel.py", "lib/util.py"),
        editable=editable,
        entry=Entry("kernel.py", "f"),
        signature="f(x) -> y",
        reference=None,
        inputs=(TensorSpec("x", ("N",)),),
        outputs=(TensorSpec("y", ("N",)),),
        scalars={},
        abi=(),
        cases=(Case("c", {"N": 4}, "float32", 1, timed=True),),
        tolerances={},
        forbidden=(),
        flops="",
        bytes="",
        exemplars=("exemplars/fast", "exemplars/faster"),
        wrong=wrong,
        sources=("reference.py",),
        build="",
        bench="",
    )
