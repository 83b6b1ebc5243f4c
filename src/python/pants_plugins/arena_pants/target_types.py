"""The kernel_task, kernel_task_suite and agent_config target types.

The Field classes below are the plugin's half of the one grammar of a kernel_task declaration:
which fields exist, which are required, and each value's type (plus the category's choices and
positive numbers, which Pants' fields express natively). Pants checks them when it parses BUILD
files, so a malformed declaration fails every goal. What the values mean (files exist, formulas
parse, dims are set, tolerances are known dtypes...) is arena's to check: arena.task.declaration,
run as each task's test. arena.task.fields holds arena's half, and
tests/python/arena/task/fields_test.py fails when the two drift.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Optional

from pants.engine.addresses import Address
from pants.engine.target import (
    COMMON_TARGET_FIELDS,
    DescriptionField,
    Field,
    FloatField,
    IntField,
    InvalidFieldException,
    InvalidFieldTypeException,
    MultipleSourcesField,
    SingleSourceField,
    StringField,
    StringSequenceField,
    Tags,
    Target,
    ValidNumbers,
)
from pants.util.frozendict import FrozenDict

CATEGORIES = ("triton2triton", "hip2hip", "torch2hip", "repository")


def _freeze(value: Any) -> Any:
    """Targets must be hashable: lists become tuples and dicts FrozenDicts."""
    if isinstance(value, dict):
        return FrozenDict({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


class KernelTaskFilesField(MultipleSourcesField):
    alias = "task_files"
    default = ("**/*", "!BUILD")
    help = "Every file of the task folder; owned here so `--changed-since` finds the task."


class KernelTaskCategoryField(StringField):
    alias = "category"
    required = True
    valid_choices = CATEGORIES
    help = "The task's category."


class KernelTaskDescriptionField(DescriptionField):
    # Replaces the description every target has: here it is the prompt, so it is required.
    alias = "description"
    required = True
    help = "The prompt an agent reads."


class KernelTaskBaselineField(StringSequenceField):
    alias = "baseline"
    required = True
    help = "The files the agent starts from, relative to the task folder."


class KernelTaskEditableField(StringSequenceField):
    alias = "editable"
    help = "The allow-list of files a candidate may hold (default: the baseline)."


class KernelTaskSupportFilesField(StringSequenceField):
    alias = "sources"
    help = "Other files the task needs (the reference, a repository's code base); never editable."


class KernelTaskExemplarsField(StringSequenceField):
    alias = "exemplars"
    help = "Folders of known-faster candidates; never shown to agents."


class KernelTaskEntryField(StringField):
    alias = "entry"
    required = True
    help = '`file:symbol` the harness calls: a Python function or a HIP extern "C" launcher.'


class KernelTaskSignatureField(StringField):
    alias = "signature"
    required = True
    help = "The entry's signature as shown to agents."


class KernelTaskReferenceField(StringField):
    alias = "reference"
    default = "baseline"
    help = "`file:symbol` of the PyTorch oracle, or `baseline` when the baseline is the oracle."


class KernelTaskWrongField(StringField):
    alias = "wrong"
    default = ""
    help = "Folder of a deliberately wrong candidate that validation must see fail."


class KernelTaskFlopsField(StringField):
    alias = "flops"
    default = ""
    help = "Floating-point operations per call, as arithmetic over dim names."


class KernelTaskBytesField(StringField):
    alias = "bytes"
    default = ""
    help = "Bytes moved per call, as arithmetic over dim names and `esize`."


class KernelTaskBuildField(StringField):
    alias = "build"
    default = ""
    help = "Repository tasks: the code base's build command."


class KernelTaskBenchField(StringField):
    alias = "bench"
    default = ""
    help = "Repository tasks: the code base's own benchmark command."


class KernelTaskSkipField(StringField):
    alias = "skip"
    default = ""
    help = "Why the task is skipped: suites leave it out and print this; it is still validated."


class KernelTaskForbiddenField(StringSequenceField):
    alias = "forbidden"
    help = "API names a candidate may not use (e.g. torch.softmax, hipblasGemmEx)."


class KernelTaskArchsField(StringSequenceField):
    alias = "archs"
    default = ("sm_90", "gfx942")
    help = "GPU architectures the task supports."


class KernelTaskAbiField(StringSequenceField):
    alias = "abi"
    help = "HIP tasks: the launcher's argument order, by input, output, dim and scalar names."


class _PositiveIntField(IntField):
    valid_numbers = ValidNumbers.positive_only

    @classmethod
    def compute_value(cls, raw_value: Optional[int], address: Address) -> Optional[int]:
        # bool is an int in Python; True is never a count of seconds or evaluations.
        if isinstance(raw_value, bool):
            raise InvalidFieldTypeException(address, cls.alias, raw_value, expected_type="an integer")
        return super().compute_value(raw_value, address)


class KernelTaskBudgetField(_PositiveIntField):
    alias = "budget_seconds"
    default = 3600
    help = "Wall-clock budget of one attempt, in seconds."


class KernelTaskIterationsField(_PositiveIntField):
    alias = "iterations"
    default = 3
    help = "Evaluations allowed in one attempt."


class KernelTaskTimeoutField(FloatField):
    alias = "timeout"
    valid_numbers = ValidNumbers.positive_only
    help = "Seconds one evaluation of this task may take (default: the harness's timeout)."

    @classmethod
    def compute_value(cls, raw_value: Optional[float], address: Address) -> Optional[float]:
        # Seconds are usually written as integers; FloatField alone would refuse `timeout=900`.
        if isinstance(raw_value, int) and not isinstance(raw_value, bool):
            raw_value = float(raw_value)
        return super().compute_value(raw_value, address)


class _LiteralField(Field):
    """A literal list or dict, frozen; arena checks what its entries mean."""

    expected_type: ClassVar[type] = list
    default: ClassVar[Any] = None

    @classmethod
    def compute_value(cls, raw_value: Any, address: Address) -> Any:
        value = super().compute_value(raw_value, address)
        if value is None:
            return None
        # A tuple is as good as a list, as in Pants' own sequence fields.
        accepted = (list, tuple) if cls.expected_type is list else (cls.expected_type,)
        if not isinstance(value, accepted):
            raise InvalidFieldTypeException(address, cls.alias, value, expected_type=f"a {cls.expected_type.__name__}")
        return _freeze(value)


class KernelTaskInputsField(_LiteralField):
    alias = "inputs"
    help = "Input tensors in call order: name, shape over dims, dtype, distribution."


class KernelTaskOutputsField(_LiteralField):
    alias = "outputs"
    required = True
    help = "Output tensors in return order: name, shape over dims, dtype."


class KernelTaskCasesField(_LiteralField):
    alias = "cases"
    required = True
    help = "Test vectors: name, dims, dtype, seed; `timed` and `weight` for timed cases."


class KernelTaskScalarsField(_LiteralField):
    alias = "scalars"
    expected_type = dict
    help = "Keyword arguments of the entry: a number, or a string naming a dim."


class KernelTaskTolerancesField(_LiteralField):
    alias = "tolerances"
    expected_type = dict
    help = "Per dtype {atol, rtol}, merged over the defaults."


class KernelTaskTarget(Target):
    alias = "kernel_task"
    core_fields = (
        Tags,
        KernelTaskFilesField,
        KernelTaskCategoryField,
        KernelTaskDescriptionField,
        KernelTaskBaselineField,
        KernelTaskEditableField,
        KernelTaskEntryField,
        KernelTaskSignatureField,
        KernelTaskReferenceField,
        KernelTaskSupportFilesField,
        KernelTaskInputsField,
        KernelTaskOutputsField,
        KernelTaskScalarsField,
        KernelTaskAbiField,
        KernelTaskCasesField,
        KernelTaskTolerancesField,
        KernelTaskForbiddenField,
        KernelTaskFlopsField,
        KernelTaskBytesField,
        KernelTaskExemplarsField,
        KernelTaskWrongField,
        KernelTaskBudgetField,
        KernelTaskIterationsField,
        KernelTaskArchsField,
        KernelTaskBuildField,
        KernelTaskBenchField,
        KernelTaskSkipField,
        KernelTaskTimeoutField,
    )
    help = "A kernel optimisation task: baseline, reference, test vectors, budgets (docs/task-format.md)."


class KernelTaskSuiteMarkerField(StringField):
    alias = "_kernel_task_suite"
    default = "suite"
    help = "Marks the target as a suite, so only suites are runnable as one."


class KernelTaskSuiteTasksField(StringSequenceField):
    alias = "tasks"
    help = (
        "The suite's kernel_task addresses (e.g. tasks/hip2hip/rms_norm), from any category; "
        "left out: every kernel_task below the suite's folder."
    )


class KernelTaskSuiteTarget(Target):
    alias = "kernel_task_suite"
    core_fields = (*COMMON_TARGET_FIELDS, KernelTaskSuiteMarkerField, KernelTaskSuiteTasksField)
    help = (
        "The kernel_tasks it names (tasks=[...]), or every kernel_task under this folder; `pants run` "
        "evaluates them through the runner."
    )


# The agent_config target: one agent configuration, runnable on a suite (docs/agents.md).
ADAPTERS = ("claude-code", "codex", "gemini", "cursor", "builtin", "script")
PRICE_KINDS = ("input", "output", "cached")
ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")


class AgentConfigAdapterField(StringField):
    alias = "adapter"
    required = True
    valid_choices = ADAPTERS
    help = "Which agent runs: its adapter in arena.agents.adapters."


class AgentConfigModelField(StringField):
    alias = "model"
    default = ""
    help = "The model the agent uses (empty: the CLI's default)."


class AgentConfigFlagsField(StringSequenceField):
    alias = "flags"
    help = "Extra command-line flags for the agent."


class AgentConfigBudgetField(_PositiveIntField):
    alias = "budget_seconds"
    help = "Wall-clock seconds per attempt (default: the task's; never more than the task's)."


class AgentConfigIterationsField(_PositiveIntField):
    alias = "iterations"
    help = "Evaluations the agent is told it has (default: the task's; the runner's count still rules)."


class AgentConfigPromptTemplateField(SingleSourceField):
    alias = "prompt_template"
    required = True
    help = "The prompt's template, a file ($task, $task_name, $budget_seconds and $iterations are filled in)."


class AgentConfigEndpointField(StringField):
    alias = "endpoint"
    default = ""
    help = "The model provider's base URL (empty: the CLI's default)."


class AgentConfigApiKeyEnvField(StringField):
    alias = "api_key_env"
    default = ""
    help = "The NAME of the environment variable that holds the provider's key (never the key itself)."

    @classmethod
    def compute_value(cls, raw_value: Optional[str], address: Address) -> Optional[str]:
        value = super().compute_value(raw_value, address)
        if value and not ENV_NAME.fullmatch(value):
            raise InvalidFieldException(
                f"The '{cls.alias}' field in target {address} must name an environment variable "
                f"(like ANTHROPIC_API_KEY), not hold a key: got a value that is no variable name"
            )
        return value


class AgentConfigPricesField(_LiteralField):
    alias = "prices"
    expected_type = dict
    help = "USD per million tokens, {input, output, cached}: the cost when the agent's CLI reports none."

    @classmethod
    def compute_value(cls, raw_value: Any, address: Address) -> Any:
        value = super().compute_value(raw_value, address)
        for kind, price in (value or {}).items():
            if kind not in PRICE_KINDS or isinstance(price, bool) or not isinstance(price, (int, float)) or price < 0:
                raise InvalidFieldException(
                    f"The '{cls.alias}' field in target {address} maps {', '.join(PRICE_KINDS)} to prices "
                    f"of at least 0: {kind!r}: {price!r} is not one"
                )
        return value


class AgentConfigTarget(Target):
    alias = "agent_config"
    core_fields = (
        *COMMON_TARGET_FIELDS,
        AgentConfigAdapterField,
        AgentConfigModelField,
        AgentConfigFlagsField,
        AgentConfigBudgetField,
        AgentConfigIterationsField,
        AgentConfigPromptTemplateField,
        AgentConfigEndpointField,
        AgentConfigApiKeyEnvField,
        AgentConfigPricesField,
    )
    help = "An agent configuration; `pants run` runs it on a suite (`-- --suite tasks/hip2hip:all --runs 3`)."
