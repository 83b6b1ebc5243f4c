"""Each kernel_task is a test target (validated on CPU by `arena validate-task`), each
kernel_task_suite is runnable (`arena suite` over the tasks below its folder), and so is each
agent_config (`arena agent run --config <its fields as JSON>`, plus the arguments after `--`).

The plugin imports nothing from arena: it runs the `arena` pex_binary (option [arena-tasks].cli)
in a sandbox holding the task's files, its BUILD file and pants.toml (the repo root marker).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from pants.backend.python.goals.package_pex_binary import (
    PexBinaryFieldSet,
    PexFromTargetsRequestForBuiltPackage,
)
from pants.backend.python.util_rules.pex import VenvPex, VenvPexProcess
from pants.backend.python.util_rules.pex_environment import PythonExecutable
from pants.backend.python.util_rules.pex_from_targets import (
    InterpreterConstraintsRequest,
    PexFromTargetsRequest,
)
from pants.base.specs import RawSpecs, RecursiveGlobSpec
from pants.core.goals.package import BuiltPackage
from pants.core.goals.run import RunFieldSet, RunInSandboxBehavior, RunRequest
from pants.core.goals.test import TestExtraEnv, TestFieldSet, TestRequest, TestResult, TestSubsystem
from pants.core.util_rules.source_files import SourceFiles, SourceFilesRequest
from pants.engine.addresses import Address, Addresses, AddressInput, UnparsedAddressInputs
from pants.engine.fs import Digest, MergeDigests, PathGlobs
from pants.engine.process import FallibleProcessResult, Process, ProcessCacheScope
from pants.engine.rules import Get, collect_rules, rule
from pants.engine.target import Targets, WrappedTarget, WrappedTargetRequest
from pants.util.logging import LogLevel

from arena_pants.subsystem import KernelTaskSubsystem
from arena_pants.target_types import (
    AgentConfigAdapterField,
    AgentConfigApiKeyEnvField,
    AgentConfigBudgetField,
    AgentConfigEndpointField,
    AgentConfigFlagsField,
    AgentConfigIterationsField,
    AgentConfigModelField,
    AgentConfigPricesField,
    AgentConfigPromptTemplateField,
    KernelTaskCategoryField,
    KernelTaskFilesField,
    KernelTaskSuiteMarkerField,
    KernelTaskSuiteTasksField,
)


@dataclass(frozen=True)
class KernelTaskFieldSet(TestFieldSet):
    required_fields = (KernelTaskCategoryField, KernelTaskFilesField)

    category: KernelTaskCategoryField
    task_files: KernelTaskFilesField


class KernelTaskTestRequest(TestRequest):
    tool_subsystem = KernelTaskSubsystem
    field_set_type = KernelTaskFieldSet


@dataclass(frozen=True)
class KernelTaskSuiteFieldSet(RunFieldSet):
    required_fields = (KernelTaskSuiteMarkerField,)
    run_in_sandbox_behavior = RunInSandboxBehavior.NOT_SUPPORTED

    tasks: KernelTaskSuiteTasksField


@dataclass(frozen=True)
class ArenaCli:
    field_set: PexBinaryFieldSet


@rule
async def find_arena_cli(subsystem: KernelTaskSubsystem) -> ArenaCli:
    address = await Get(
        Address,
        AddressInput,
        AddressInput.parse(subsystem.cli, description_of_origin="the option [arena-tasks].cli"),
    )
    wrapped = await Get(
        WrappedTarget, WrappedTargetRequest(address, description_of_origin="[arena-tasks].cli")
    )
    return ArenaCli(PexBinaryFieldSet.create(wrapped.target))


@dataclass(frozen=True)
class BuiltArenaCli:
    """The CLI's PEX as `pants run` starts it: its digest, and the argv before the subcommand."""

    digest: Digest
    argv: tuple[str, ...]


@rule
async def build_arena_cli(cli: ArenaCli) -> BuiltArenaCli:
    pex_request = await Get(PexFromTargetsRequestForBuiltPackage, PexBinaryFieldSet, cli.field_set)
    built = await Get(BuiltPackage, PexFromTargetsRequestForBuiltPackage, pex_request)
    python = await Get(
        PythonExecutable,
        InterpreterConstraintsRequest,
        pex_request.request.to_interpreter_constraints_request(),
    )
    pex_path = os.path.join("{chroot}", built.artifacts[0].relpath or "arena.pex")
    return BuiltArenaCli(built.digest, (python.path, pex_path))


async def _task_sandbox(address: Address, task_files: KernelTaskFilesField) -> Digest:
    sources = await Get(SourceFiles, SourceFilesRequest([task_files]))
    declaration = await Get(
        Digest, PathGlobs([os.path.join(address.spec_path, "BUILD"), "pants.toml"])
    )
    return await Get(Digest, MergeDigests([sources.snapshot.digest, declaration]))


@rule(desc="Validate a kernel task", level=LogLevel.DEBUG)
async def validate_kernel_task(
    batch: KernelTaskTestRequest.Batch[KernelTaskFieldSet, Any],
    cli: ArenaCli,
    subsystem: KernelTaskSubsystem,
    test_subsystem: TestSubsystem,
    test_extra_env: TestExtraEnv,
) -> TestResult:
    field_set = batch.single_element
    pex_request = await Get(PexFromTargetsRequestForBuiltPackage, PexBinaryFieldSet, cli.field_set)
    # internal_only lets the test reuse the requirements PEX of the whole lockfile (torch is
    # large) instead of building its own.
    internal = PexFromTargetsRequest(
        [cli.field_set.address],
        output_filename="arena.pex",
        internal_only=True,
        main=pex_request.request.main,
        description="the arena command line, for task validation",
    )
    arena = await Get(VenvPex, PexFromTargetsRequest, internal)
    sandbox = await _task_sandbox(field_set.address, field_set.task_files)
    process = await Get(
        Process,
        VenvPexProcess(
            arena,
            argv=("validate-task", "--task", field_set.address.spec),
            input_digest=sandbox,
            extra_env=test_extra_env.env,
            description=f"Validate {field_set.address}",
            level=LogLevel.DEBUG,
            timeout_seconds=subsystem.timeout,
            cache_scope=(
                ProcessCacheScope.PER_SESSION if test_subsystem.force else ProcessCacheScope.SUCCESSFUL
            ),
        ),
    )
    result = await Get(FallibleProcessResult, Process, process)
    return TestResult.from_fallible_process_result(
        process_result=result, address=field_set.address, output_setting=test_subsystem.output
    )


@dataclass(frozen=True)
class SuiteTasks:
    """The addresses of the kernel_task targets a suite covers, sorted."""

    addresses: tuple[str, ...]


@rule(desc="Find the tasks of a kernel task suite", level=LogLevel.DEBUG)
async def find_suite_tasks(field_set: KernelTaskSuiteFieldSet) -> SuiteTasks:
    if field_set.tasks.value:  # a suite that names its tasks (e.g. a quick suite across categories)
        addresses = await Get(
            Addresses,
            UnparsedAddressInputs(
                field_set.tasks.value,
                owning_address=field_set.address,
                description_of_origin=f"the `tasks` of the kernel_task_suite {field_set.address}",
            ),
        )
        named = await Get(Targets, Addresses, addresses)
        others = [t.address.spec for t in named if not t.has_field(KernelTaskCategoryField)]
        if others:
            raise ValueError(f"the kernel_task_suite {field_set.address} names targets that are no kernel_task: "
                             f"{', '.join(others)}")
        return SuiteTasks(tuple(sorted(t.address.spec for t in named)))
    # Otherwise every kernel_task below its folder, found here rather than listed by hand.
    targets = await Get(
        Targets,
        RawSpecs(
            recursive_globs=(RecursiveGlobSpec(field_set.address.spec_path),),
            description_of_origin=f"the kernel_task_suite {field_set.address}",
        ),
    )
    return SuiteTasks(tuple(sorted(t.address.spec for t in targets if t.has_field(KernelTaskCategoryField))))


@rule(desc="Run a kernel task suite", level=LogLevel.DEBUG)
async def run_kernel_task_suite(field_set: KernelTaskSuiteFieldSet, cli: ArenaCli) -> RunRequest:
    tasks = await Get(SuiteTasks, KernelTaskSuiteFieldSet, field_set)
    built = await Get(BuiltArenaCli, ArenaCli, cli)
    # A folder's suite is its category's; a suite that names its tasks may mix categories.
    category = () if field_set.tasks.value else ("--category", os.path.basename(field_set.address.spec_path))
    return RunRequest(digest=built.digest, args=(*built.argv, "suite", *category, "--tasks", *tasks.addresses))


@dataclass(frozen=True)
class AgentConfigFieldSet(RunFieldSet):
    required_fields = (AgentConfigAdapterField, AgentConfigPromptTemplateField)
    run_in_sandbox_behavior = RunInSandboxBehavior.NOT_SUPPORTED

    adapter: AgentConfigAdapterField
    model: AgentConfigModelField
    flags: AgentConfigFlagsField
    budget_seconds: AgentConfigBudgetField
    iterations: AgentConfigIterationsField
    prompt_template: AgentConfigPromptTemplateField
    endpoint: AgentConfigEndpointField
    api_key_env: AgentConfigApiKeyEnvField
    prices: AgentConfigPricesField


def agent_config_json(field_set: AgentConfigFieldSet) -> str:
    """The fields as `arena agent run --config` reads them (arena.agents.config); the template by
    its path from the repository root, which arena reads and digests with the fields."""
    return json.dumps(
        {
            "name": field_set.address.target_name,
            "adapter": field_set.adapter.value,
            "model": field_set.model.value or "",
            "flags": list(field_set.flags.value or ()),
            "budget_seconds": field_set.budget_seconds.value,
            "iterations": field_set.iterations.value,
            "prompt_template": field_set.prompt_template.file_path,
            "endpoint": field_set.endpoint.value or "",
            "api_key_env": field_set.api_key_env.value or "",
            "prices": dict(field_set.prices.value or {}),
        },
        sort_keys=True,
    )


@rule(desc="Run an agent configuration", level=LogLevel.DEBUG)
async def run_agent_config(field_set: AgentConfigFieldSet, cli: ArenaCli) -> RunRequest:
    built = await Get(BuiltArenaCli, ArenaCli, cli)
    # `pants run //agents:X -- --suite ... --runs N` appends those arguments.
    return RunRequest(
        digest=built.digest, args=(*built.argv, "agent", "run", "--config", agent_config_json(field_set))
    )


def rules():
    return [
        *collect_rules(),
        *KernelTaskTestRequest.rules(),
        *KernelTaskSuiteFieldSet.rules(),
        *AgentConfigFieldSet.rules(),
    ]
