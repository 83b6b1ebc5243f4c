"""An agent's workspace for one task, built from its TaskView alone (so the CLI, with a repository,
and the SDK, from a runner's GetTask, write the same files):

    TASK.md      what to optimise, the cases, tolerances, budget, scoring and how to evaluate
    candidate/   the baseline's editable files: edit these; this folder is the candidate
    context/     the baseline's other files, to read (never sent with a candidate)

Only what the view holds is written: never exemplars, the wrong candidate, the reference or
hidden cases, which the view has no field for.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from arena.errors import ArenaError
from arena.runner.records import TaskView
from arena.task.paths import is_allowed
from arena.task.task import CASE_DTYPE, Case, TensorSpec

TASK_FILE = "TASK.md"
CANDIDATE_FOLDER = "candidate"
CONTEXT_FOLDER = "context"


class FolderNotEmpty(ArenaError):
    """The workspace folder already holds files (and overwriting them was not asked for)."""


def workspace_files(view: TaskView) -> dict[str, bytes]:
    """Every file of the workspace, by path relative to its folder."""
    files = {TASK_FILE: render_task_md(view).encode()}
    for path, content in view.baseline_files.items():
        check_plain_path(path)
        folder = CANDIDATE_FOLDER if is_allowed(path, view.editable_files) else CONTEXT_FOLDER
        files[f"{folder}/{path}"] = content
    return files


def write_workspace(view: TaskView, folder: Path, force: bool = False) -> tuple[str, ...]:
    """Write the workspace of `view` into `folder` (created if missing); returns the paths written.

    A folder that already holds anything is refused unless `force`, which writes over the
    workspace's own files and leaves any others in place."""
    if folder.exists() and not folder.is_dir():
        raise FolderNotEmpty(f"{str(folder)!r} exists and is not a folder")
    if folder.is_dir() and any(folder.iterdir()) and not force:
        raise FolderNotEmpty(f"{str(folder)!r} is not empty: choose an empty folder, or pass --force to write over it")
    files = workspace_files(view)
    for path, content in files.items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    return tuple(files)


def check_plain_path(path: str) -> None:
    """A path from a runner must stay inside the workspace: relative, normalised, no '..'."""
    pure = PurePosixPath(path)
    if not path or pure.is_absolute() or "\\" in path or ".." in pure.parts or str(pure) != path:
        raise ArenaError(f"the task names a baseline file {path!r} that is not a plain relative path")


def render_task_md(view: TaskView) -> str:
    """TASK.md: everything an agent needs to work on the task without the repository."""
    sections = [
        f"# Task {view.address}\n\n{view.description.strip()}",
        render_interface(view),
        render_files(view),
        render_cases(view),
        render_tolerances(view),
        render_rules(view),
        render_scoring(view),
        render_evaluating(view),
    ]
    return "\n\n".join(section.rstrip("\n") for section in sections) + "\n"


def render_interface(view: TaskView) -> str:
    lines = [
        "## What to optimise",
        "",
        f"- Category: {view.category}",
        f"- Entry (what the harness calls): `{view.entry}`",
        f"- Signature: `{view.signature}`",
        "- Inputs: " + ", ".join(tensor_text(spec) for spec in view.inputs),
        "- Outputs: " + ", ".join(tensor_text(spec) for spec in view.outputs),
    ]
    if view.scalars:
        lines.append("- Scalars (keyword arguments): " + ", ".join(scalar_text(n, v) for n, v in view.scalars.items()))
    else:
        lines.append("- Scalars: none")
    lines.append(f"- Task digest: `{view.digest}`")
    return "\n".join(lines)


def tensor_text(spec: TensorSpec) -> str:
    dtype = "the case's dtype" if spec.dtype == CASE_DTYPE else spec.dtype
    written = ": the input of this name, written in place (not returned, not allocated)" if spec.inplace else ""
    return f"`{spec.name}` [{', '.join(str(dim) for dim in spec.shape)}] ({dtype}){written}"


def scalar_text(name: str, value: float | int | str) -> str:
    return f"`{name}` = the dim {value}" if isinstance(value, str) else f"`{name}` = {value!r}"


def render_files(view: TaskView) -> str:
    editable = [path for path in view.baseline_files if is_allowed(path, view.editable_files)]
    readable = [path for path in view.baseline_files if not is_allowed(path, view.editable_files)]
    lines = [
        "## Files",
        "",
        f"- `{CANDIDATE_FOLDER}/`: the baseline's editable files, to edit; this folder is your candidate. "
        f"Only paths under {', '.join(f'`{entry}`' for entry in view.editable_files)} may be sent.",
    ]
    lines += [f"  - `{CANDIDATE_FOLDER}/{path}`" for path in editable]
    if readable:
        lines.append(f"- `{CONTEXT_FOLDER}/`: the task's other baseline files, to read (not part of a candidate).")
        lines += [f"  - `{CONTEXT_FOLDER}/{path}`" for path in readable]
    return "\n".join(lines)


def render_cases(view: TaskView) -> str:
    lines = [
        "## Test cases",
        "",
        "Every case is checked; timed cases are also timed. Hidden cases, with fresh seeds, are drawn "
        "at evaluation time, so a candidate must be correct for any input, not just these.",
        "",
        "| case | dims | dtype | timed | weight |",
        "|---|---|---|---|---|",
    ]
    for case in view.cases:
        dims = ", ".join(f"{dim}={value}" for dim, value in case.dims.items())
        weight = f"{case.weight:g}" if case.timed else ""
        lines.append(f"| {case.name} | {dims} | {case.dtype} | {'yes' if case.timed else 'no'} | {weight} |")
    return "\n".join(lines)


def output_dtypes(view: TaskView) -> list[str]:
    """The dtypes the outputs take over the declared cases, in first-seen order."""
    found: list[str] = []
    for case in view.cases:
        for spec in view.outputs:
            dtype = resolved_dtype(spec, case)
            if dtype not in found:
                found.append(dtype)
    return found


def resolved_dtype(spec: TensorSpec, case: Case) -> str:
    return case.dtype if spec.dtype == CASE_DTYPE else spec.dtype


def render_tolerances(view: TaskView) -> str:
    lines = [
        "## Tolerances",
        "",
        "An output element passes when |got - want| <= atol + rtol * |want| (NaN only where the "
        "reference has NaN). By the dtype of the outputs:",
        "",
        "| dtype | atol | rtol |",
        "|---|---|---|",
    ]
    for dtype in output_dtypes(view):
        tolerance = view.tolerances.get(dtype)
        if tolerance is not None:
            lines.append(f"| {dtype} | {tolerance.atol:g} | {tolerance.rtol:g} |")
    return "\n".join(lines)


def render_rules(view: TaskView) -> str:
    forbidden = ", ".join(f"`{name}`" for name in view.forbidden) or "none"
    lines = [
        "## Rules, target and budget",
        "",
        f"- Forbidden APIs (a candidate naming one fails with CHEAT_DETECTED): {forbidden}",
        f"- Target GPU architectures: {', '.join(view.archs)}",
    ]
    if view.reference_platform:
        lines.append(f"- Reference platform: {view.reference_platform}")
    lines.append(
        f"- Budget: {view.budget_seconds} seconds of wall clock from opening an attempt, "
        f"and {view.iterations} evaluations in it"
    )
    return "\n".join(lines)


def render_scoring(view: TaskView) -> str:
    return "\n".join([
        "## Scoring",
        "",
        f"Compiles = {view.points_compiled:g} points; correct on every test case = +{view.points_correct:g}; "
        f"then +{view.points_per_speedup:g} x speedup over the baseline.",
        "",
        view.scoring_rule,
    ])  # fmt: skip


def render_evaluating(view: TaskView) -> str:
    task = view.address
    return f"""## Checking and evaluating

From this folder, with the `arena` command of a repository checkout (`arena --repo-root REPO ...`
when this folder lies outside it; add `--runner HOST:PORT` to use a runner, its token in
ARENA_TOKEN):

```
arena evaluate --task {task} --candidate {CANDIDATE_FOLDER} --check-only   # compile and check only
arena evaluate --task {task} --candidate {CANDIDATE_FOLDER}                # compile, check, time, score
```

Through a runner a check (`--check-only`, or `check_only=True` in the SDK) is free: it runs the
declared cases only, spends no iteration and cannot be submitted; an attempt has a limited
number of them.

With the SDK and a runner's address, no checkout is needed (`Client()` with no address, and no
ARENA_RUNNER, runs a runner in the process, which needs the checkout):

```python
from pathlib import Path

from arena.candidate.candidate import Candidate
from arena.client.client import Client

root = Path("{CANDIDATE_FOLDER}")
files = {{
    p.relative_to(root).as_posix(): p.read_bytes()
    for p in root.rglob("*")
    if p.is_file() and "__pycache__" not in p.parts
}}
with Client("HOST:PORT", "TOKEN") as client:
    attempt = client.open_attempt("{task}")
    checked = client.evaluate(Candidate("{task}", files), attempt.id, check_only=True)  # free
    evaluation = client.evaluate(Candidate("{task}", files), attempt.id)  # spends an iteration
    print(evaluation.status, evaluation.score.points)
    client.submit(attempt.id, evaluation.id)  # closes the attempt: this evaluation is final
```
"""
