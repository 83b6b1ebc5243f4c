"""The one translation between generated arena.v1 messages and the project's records.

A to_pb/from_pb pair per noun. Nothing else outside api/service.py and client/ imports *_pb2.
The Task message is the agent's view (arena.runner.task_view.TaskView): it has no field for
exemplars, the wrong candidate, the reference or hidden cases, so none can leak through it.
"""

from __future__ import annotations

from typing import Any, Mapping

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from arena.candidate.candidate import Candidate
from arena.errors import InvalidCandidate, InvalidRequest
from arena.evaluation.evaluation import Evaluation
from arena.runner.quoting import quote
from arena.runner.records import Attempt, LeaderboardRow, Progress, TaskView, Usage
from arena.task.task import Case, TensorSpec, Tolerance
from arena.v1 import candidate_pb2, evaluation_pb2, runner_pb2, task_pb2


def task_view_to_pb(view: TaskView) -> task_pb2.Task:
    return task_pb2.Task(
        address=view.address,
        name=view.name,
        category=view.category,
        digest=view.digest,
        task_dir=view.task_dir,
        description=view.description,
        signature=view.signature,
        entry=view.entry,
        editable_files=view.editable_files,
        baseline_files=[task_pb2.File(path=path, content=content) for path, content in view.baseline_files.items()],
        inputs=[tensor_spec_to_pb(spec) for spec in view.inputs],
        outputs=[tensor_spec_to_pb(spec) for spec in view.outputs],
        cases=[case_to_pb(case) for case in view.cases],
        forbidden=view.forbidden,
        budget_seconds=view.budget_seconds,
        iterations=view.iterations,
        archs=view.archs,
        tolerances={dtype: tolerance_to_pb(tolerance) for dtype, tolerance in view.tolerances.items()},
        scalars={name: scalar_to_pb(value) for name, value in view.scalars.items()},
        reference_platform=view.reference_platform,
        points_compiled=view.points_compiled,
        points_correct=view.points_correct,
        points_per_speedup=view.points_per_speedup,
        scoring_rule=view.scoring_rule,
    )


def task_view_from_pb(message: task_pb2.Task) -> TaskView:
    return TaskView(
        address=message.address,
        name=message.name,
        category=message.category,
        digest=message.digest,
        task_dir=message.task_dir,
        description=message.description,
        signature=message.signature,
        entry=message.entry,
        editable_files=tuple(message.editable_files),
        baseline_files={file.path: file.content for file in message.baseline_files},
        inputs=tuple(tensor_spec_from_pb(spec) for spec in message.inputs),
        outputs=tuple(tensor_spec_from_pb(spec) for spec in message.outputs),
        cases=tuple(case_from_pb(case) for case in message.cases),
        forbidden=tuple(message.forbidden),
        budget_seconds=message.budget_seconds,
        iterations=message.iterations,
        archs=tuple(message.archs),
        # Maps arrive in no particular order; sorted, as the runner builds them.
        tolerances={dtype: tolerance_from_pb(message.tolerances[dtype]) for dtype in sorted(message.tolerances)},
        scalars={name: scalar_from_pb(message.scalars[name]) for name in sorted(message.scalars)},
        reference_platform=message.reference_platform,
        points_compiled=message.points_compiled,
        points_correct=message.points_correct,
        points_per_speedup=message.points_per_speedup,
        scoring_rule=message.scoring_rule,
    )


def tolerance_to_pb(tolerance: Tolerance) -> task_pb2.Tolerance:
    return task_pb2.Tolerance(atol=tolerance.atol, rtol=tolerance.rtol)


def tolerance_from_pb(message: task_pb2.Tolerance) -> Tolerance:
    return Tolerance(atol=message.atol, rtol=message.rtol)


def scalar_to_pb(value: float | int | bool | str) -> task_pb2.Scalar:
    """An int, a float, a bool and a dim name each keep their kind (the harness passes them
    differently)."""
    if isinstance(value, str):
        return task_pb2.Scalar(dim=value)
    if isinstance(value, bool):
        return task_pb2.Scalar(flag=value)
    if not isinstance(value, (int, float)):
        raise TypeError(f"a scalar is a number, a flag or a dim name, not {value!r}")
    if isinstance(value, int):
        return task_pb2.Scalar(integer=value)
    return task_pb2.Scalar(number=value)


def scalar_from_pb(message: task_pb2.Scalar) -> float | int | bool | str:
    kind = message.WhichOneof("value")
    if kind == "dim":
        return message.dim
    if kind == "flag":
        return message.flag
    if kind == "integer":
        return message.integer
    if kind == "number":
        return message.number
    raise InvalidRequest("a scalar carries no value")


def tensor_spec_to_pb(spec: TensorSpec) -> task_pb2.TensorSpec:
    return task_pb2.TensorSpec(
        name=spec.name, shape=[str(dim) for dim in spec.shape], dtype=spec.dtype, inplace=spec.inplace
    )


def tensor_spec_from_pb(message: task_pb2.TensorSpec) -> TensorSpec:
    """The distribution is not part of the agent's view; the default stands in for it."""
    shape = tuple(int(dim) if dim.isdigit() else dim for dim in message.shape)
    return TensorSpec(name=message.name, shape=shape, dtype=message.dtype, inplace=message.inplace)


def case_to_pb(case: Case) -> task_pb2.Case:
    """A case's int dims as `dims`, its float case values (dims only scalars name) as `values`."""
    return task_pb2.Case(
        name=case.name,
        dims={dim: value for dim, value in case.dims.items() if not isinstance(value, float)},
        values={dim: value for dim, value in case.dims.items() if isinstance(value, float)},
        dtype=case.dtype,
        seed=case.seed,
        timed=case.timed,
        weight=case.weight,
    )


def case_from_pb(message: task_pb2.Case) -> Case:
    return Case(
        name=message.name,
        dims={**dict(message.dims), **dict(message.values)},
        dtype=message.dtype,
        seed=message.seed,
        timed=message.timed,
        weight=message.weight,
    )


def candidate_to_pb(candidate: Candidate) -> candidate_pb2.Candidate:
    files = [task_pb2.File(path=path, content=content) for path, content in sorted(candidate.files.items())]
    return candidate_pb2.Candidate(task=candidate.task, files=files, digest=candidate.digest)


# What a candidate may hold as it arrives, checked before any path is parsed: the allow-list's
# checks cost a path's depth times its length (a 160 KB path once took 62 s and 6 GB to refuse).
MAX_CANDIDATE_FILES = 1000
MAX_PATH_CHARS = 1024
MAX_PATH_PARTS = 32


def candidate_from_pb(message: candidate_pb2.Candidate) -> Candidate:
    """The candidate's files; the runner checks them against the task and recomputes the digest."""
    if len(message.files) > MAX_CANDIDATE_FILES:
        raise InvalidCandidate(
            f"the candidate has {len(message.files)} files; the limit is {MAX_CANDIDATE_FILES} files"
        )
    files: dict[str, bytes] = {}
    for file in message.files:
        if len(file.path) > MAX_PATH_CHARS or file.path.count("/") >= MAX_PATH_PARTS:
            raise InvalidCandidate(
                f"{quote(file.path)} is longer than {MAX_PATH_CHARS} characters or more than "
                f"{MAX_PATH_PARTS} folders deep"
            )
        if file.path in files:
            raise InvalidCandidate(f"the candidate names {file.path!r} twice")
        files[file.path] = file.content
    return Candidate(task=message.task, files=files)


def evaluation_to_pb(evaluation: Evaluation) -> evaluation_pb2.Evaluation:
    """From Evaluation.to_dict(), whose keys mirror the proto (extra keys are left out)."""
    message = evaluation_pb2.Evaluation()
    fill_message(message, evaluation.to_dict())
    return message


def evaluation_from_pb(message: evaluation_pb2.Evaluation) -> Evaluation:
    return Evaluation.from_dict(message_to_plain(message))


def attempt_to_pb(attempt: Attempt) -> runner_pb2.Attempt:
    return runner_pb2.Attempt(
        id=attempt.id,
        task=attempt.task,
        agent=attempt.agent,
        deadline_unix_ms=attempt.deadline_unix_ms,
        iterations_left=attempt.iterations_left,
        submitted=attempt.submitted,
        final_evaluation=attempt.final_evaluation,
        checks_used=attempt.checks_used,
        finalized=attempt.finalized,
        checks_left=attempt.checks_left,
    )


def attempt_from_pb(message: runner_pb2.Attempt) -> Attempt:
    return Attempt(
        id=message.id,
        task=message.task,
        agent=message.agent,
        deadline_unix_ms=message.deadline_unix_ms,
        iterations_left=message.iterations_left,
        submitted=message.submitted,
        final_evaluation=message.final_evaluation,
        checks_used=message.checks_used,
        finalized=message.finalized,
        checks_left=message.checks_left,
    )


def progress_to_pb(progress: Progress) -> runner_pb2.EvaluateProgress:
    message = runner_pb2.EvaluateProgress(
        stage=progress.stage, queue_position=progress.queue_position, evaluation_id=progress.evaluation_id
    )
    if progress.evaluation is not None:
        message.evaluation.CopyFrom(evaluation_to_pb(progress.evaluation))
    return message


def progress_from_pb(message: runner_pb2.EvaluateProgress) -> Progress:
    return Progress(
        stage=message.stage,
        evaluation_id=message.evaluation_id,
        queue_position=message.queue_position,
        evaluation=evaluation_from_pb(message.evaluation) if message.HasField("evaluation") else None,
    )


# LeaderboardRow's means of recorded usage: None (no attempt recorded usage) is an unset field.
RECORDED_MEANS = (
    "mean_input_tokens",
    "mean_output_tokens",
    "mean_cached_tokens",
    "mean_cost_usd",
    "mean_turns",
    "mean_tool_calls",
    "mean_wall_s",
)


def leaderboard_row_to_pb(row: LeaderboardRow) -> runner_pb2.LeaderboardRow:
    message = runner_pb2.LeaderboardRow(
        agent=row.agent,
        category=row.category,
        tasks=row.tasks,
        compile_rate=row.compile_rate,
        correct_rate=row.correct_rate,
        unchecked_rate=row.unchecked_rate,
        mean_speedup=row.mean_speedup,
        geomean_speedup=row.geomean_speedup,
        mean_score=row.mean_score,
        mean_checks=row.mean_checks,
        mean_evaluations=row.mean_evaluations,
    )
    for name in RECORDED_MEANS:  # None stays unset: a blank, not a zero
        if getattr(row, name) is not None:
            setattr(message, name, getattr(row, name))
    return message


def leaderboard_row_from_pb(message: runner_pb2.LeaderboardRow) -> LeaderboardRow:
    return LeaderboardRow(
        agent=message.agent,
        category=message.category,
        tasks=message.tasks,
        compile_rate=message.compile_rate,
        correct_rate=message.correct_rate,
        unchecked_rate=message.unchecked_rate,
        mean_speedup=message.mean_speedup,
        geomean_speedup=message.geomean_speedup,
        mean_score=message.mean_score,
        mean_checks=message.mean_checks,
        mean_evaluations=message.mean_evaluations,
        mean_input_tokens=optional_double(message, "mean_input_tokens"),
        mean_output_tokens=optional_double(message, "mean_output_tokens"),
        mean_cached_tokens=optional_double(message, "mean_cached_tokens"),
        mean_cost_usd=optional_double(message, "mean_cost_usd"),
        mean_turns=optional_double(message, "mean_turns"),
        mean_tool_calls=optional_double(message, "mean_tool_calls"),
        mean_wall_s=optional_double(message, "mean_wall_s"),
    )


def optional_double(message: Message, name: str) -> float | None:
    """An `optional double` field's value; None when unset."""
    return float(getattr(message, name)) if message.HasField(name) else None


def usage_to_pb(usage: Usage) -> runner_pb2.Usage:
    message = runner_pb2.Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_tokens=usage.cached_tokens,
        turns=usage.turns,
        tool_calls=usage.tool_calls,
        wall_s=usage.wall_s,
    )
    if usage.cost_usd is not None:
        message.cost_usd = usage.cost_usd
    return message


def usage_from_pb(message: runner_pb2.Usage) -> Usage:
    return Usage(
        input_tokens=message.input_tokens,
        output_tokens=message.output_tokens,
        cached_tokens=message.cached_tokens,
        cost_usd=message.cost_usd if message.HasField("cost_usd") else None,
        turns=message.turns,
        tool_calls=message.tool_calls,
        wall_s=message.wall_s,
    )


def fill_message(message: Message, values: Mapping[str, Any]) -> None:
    """Set `message`'s fields from a dict keyed by field name; None and unknown keys are skipped."""
    for field in message.DESCRIPTOR.fields:
        value = values.get(field.name)
        if value is None:
            continue
        target = getattr(message, field.name)
        if is_map(field):
            target.update({key: item for key, item in value.items()})
        elif is_repeated(field) and field.message_type is not None:
            for item in value:
                fill_message(target.add(), item)
        elif is_repeated(field):
            target.extend(value)
        elif field.message_type is not None:
            fill_message(target, value)
        elif field.enum_type is not None:
            setattr(message, field.name, field.enum_type.values_by_name[str(value)].number)
        else:
            setattr(message, field.name, value)


def message_to_plain(message: Message) -> dict[str, Any]:
    """The inverse of fill_message: every field by name; unset sub-messages are None, enums their names."""
    plain: dict[str, Any] = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        if is_map(field):
            plain[field.name] = dict(value)
        elif is_repeated(field) and field.message_type is not None:
            plain[field.name] = [message_to_plain(item) for item in value]
        elif is_repeated(field):
            plain[field.name] = list(value)
        elif field.message_type is not None:
            plain[field.name] = message_to_plain(value) if message.HasField(field.name) else None
        elif field.enum_type is not None:
            plain[field.name] = field.enum_type.values_by_number[value].name
        else:
            plain[field.name] = value
    return plain


def is_repeated(field: FieldDescriptor) -> bool:
    # protobuf 5+ has `is_repeated`; older runtimes only `label`.
    if hasattr(field, "is_repeated"):
        return bool(field.is_repeated)
    return bool(field.label == FieldDescriptor.LABEL_REPEATED)


def is_map(field: FieldDescriptor) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry
