"""Each kernel_task is a test target (validated by `arena validate-task`, in one of two tiers:
`partition_kernel_tasks`), each
kernel_task_suite is runnable (`arena suite` over the tasks below its folder), and so is each
agent_config (`arena agent run --config <its fields as JSON>`, plus the arguments after `--`).

The plugin imports nothing from arena: it runs the `arena` pex_binary (option [arena-tasks].cli)
in a sandbox holding the task's files, its BUILD file and pants.toml (the repo root marker).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass

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
from pants.core.util_rules.partitions import Partition, PartitionerType, Partitions
from pants.core.util_rules.source_files import SourceFiles, SourceFilesRequest
from pants.engine.addresses import Address, Addresses, AddressInput, UnparsedAddressInputs
from pants.engine.fs import Digest, DigestContents, MergeDigests, PathGlobs
from pants.engine.process import FallibleProcessResult, Process, ProcessCacheScope
from pants.engine.rules import Get, MultiGet, collect_rules, rule
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
    partitioner_type = PartitionerType.CUSTOM


@dataclass(frozen=True)
class ValidationTier:
    """How a partition of kernel_task targets is validated: "full" (one task through the real
    harness) or "fast" (many tasks' untimed cases through one process), and why."""

    tier: str
    reason: str

    @property
    def description(self) -> str:
        return f"{self.tier} validation: {self.reason}"


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
    wrapped = await Get(WrappedTarget, WrappedTargetRequest(address, description_of_origin="[arena-tasks].cli"))
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
    declaration = await Get(Digest, PathGlobs([os.path.join(address.spec_path, "BUILD")]))
    return await Get(Digest, MergeDigests([sources.snapshot.digest, declaration]))


def folder_hash(folder: str, files: DigestContents) -> str:
    """sha256 of the sorted lines "<sha256 of the file> <path in the folder>", one per file: the
    hash arena.validation.record.folder_hash computes from the folder itself (both sides' tests
    pin the same figure)."""
    lines = sorted(
        f"{hashlib.sha256(f.content).hexdigest()} {os.path.relpath(f.path, folder)}\n"
        for f in files
        if f.path.startswith(folder + "/")
    )
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def read_record(contents: DigestContents) -> dict[str, str]:
    """Task folder -> hash, from the record's JSON ({} when there is none)."""
    if not contents:
        return {}
    entries = json.loads(contents[0].content).get("tasks", {})
    return {str(folder): str(entry["hash"]) for folder, entry in entries.items()}


def choose_tiers(
    hashes: dict[str, str], record: dict[str, str], sample: set[str], every: bool, batch: int
) -> tuple[dict[str, str], list[list[str]]]:
    """(task folder -> why it is validated in full, batches of the other folders for the fast
    tier: sorted, one category to a batch, `batch` folders at most)."""
    full = {}
    for folder, digest in sorted(hashes.items()):
        if every:
            full[folder] = "[arena-tasks].full is set"
        elif folder in sample:
            full[folder] = "in the fixed sample ([arena-tasks].sample)"
        elif record.get(folder) != digest:
            full[folder] = "new or changed since its last full validation (tasks/validated.json)"
    fast: list[list[str]] = []
    for folder in sorted(set(hashes) - set(full)):
        if fast and os.path.dirname(fast[-1][-1]) == os.path.dirname(folder) and len(fast[-1]) < batch:
            fast[-1].append(folder)
        else:
            fast.append([folder])
    return full, fast


@rule(desc="Choose each kernel task's validation tier", level=LogLevel.DEBUG)
async def partition_kernel_tasks(
    request: KernelTaskTestRequest.PartitionRequest[KernelTaskFieldSet], subsystem: KernelTaskSubsystem
) -> Partitions[KernelTaskFieldSet, ValidationTier]:
    by_folder = {fs.address.spec_path: fs for fs in request.field_sets}
    digests = [await _task_sandbox(fs.address, fs.task_files) for fs in request.field_sets]
    contents = await MultiGet(Get(DigestContents, Digest, d) for d in digests)
    hashes = {fs.address.spec_path: folder_hash(fs.address.spec_path, c) for fs, c in zip(request.field_sets, contents)}
    record = read_record(await Get(DigestContents, PathGlobs([subsystem.record])))
    full, fast = choose_tiers(hashes, record, set(subsystem.sample), subsystem.full, subsystem.fast_batch)
    partitions = [Partition((by_folder[f],), ValidationTier("full", why)) for f, why in full.items()]
    for folders in fast:
        reason = f"{len(folders)} task(s) of {os.path.dirname(folders[0])} as recorded"
        partitions.append(Partition(tuple(by_folder[f] for f in folders), ValidationTier("fast", reason)))
    return Partitions(partitions)


@rule(desc="Validate kernel tasks", level=LogLevel.DEBUG)
async def validate_kernel_tasks(
    batch: KernelTaskTestRequest.Batch[KernelTaskFieldSet, ValidationTier],
    cli: ArenaCli,
    subsystem: KernelTaskSubsystem,
    test_subsystem: TestSubsystem,
    test_extra_env: TestExtraEnv,
) -> TestResult:
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
    sandboxes = [await _task_sandbox(fs.address, fs.task_files) for fs in batch.elements]
    root_marker = await Get(Digest, PathGlobs(["pants.toml"]))
    sandbox = await Get(Digest, MergeDigests([*sandboxes, root_marker]))
    tasks = [arg for fs in batch.elements for arg in ("--task", fs.address.spec)]
    fast = batch.partition_metadata.tier == "fast"
    process = await Get(
        Process,
        VenvPexProcess(
            arena,
            argv=("validate-task", *(("--fast",) if fast else ()), *tasks),
            input_digest=sandbox,
            extra_env=test_extra_env.env,
            description=f"Validate {batch.elements[0].address}"
            + (f" and {len(batch.elements) - 1} more (fast)" if len(batch.elements) > 1 else ""),
            level=LogLevel.DEBUG,
            timeout_seconds=subsystem.timeout,
            cache_scope=(ProcessCacheScope.PER_SESSION if test_subsystem.force else ProcessCacheScope.SUCCESSFUL),
        ),
    )
    result = await Get(FallibleProcessResult, Process, process)
    return TestResult.from_batched_fallible_process_result(
        process_result=result, batch=batch, output_setting=test_subsystem.output
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
            raise ValueError(
                f"the kernel_task_suite {field_set.address} names targets that are no kernel_task: {', '.join(others)}"
            )
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
    return RunRequest(digest=built.digest, args=(*built.argv, "agent", "run", "--config", agent_config_json(field_set)))


def rules():
    return [
        *collect_rules(),
        *KernelTaskTestRequest.rules(),
        *KernelTaskSuiteFieldSet.rules(),
        *AgentConfigFieldSet.rules(),
    ]
