"""`ruff-format`: the formatter of a current ruff (`ruff format`), from a resolve of this repository.

Pants 2.17's ruff backend pins ruff 0.0.261, which predates `ruff format`, and runs ruff without a
subcommand, so it cannot be pointed at a newer ruff. This formatter installs ruff from the resolve
named by `[ruff-format] install_from_resolve` and runs `ruff format`: `./pants fmt` rewrites files,
`./pants lint` fails on a file it would rewrite (docs/toolchain.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from pants.backend.python.subsystems.python_tool_base import PythonToolBase
from pants.backend.python.target_types import (
    ConsoleScript,
    PythonSourceField,
    PythonSourcesGeneratorTarget,
    PythonSourceTarget,
    PythonTestsGeneratorTarget,
    PythonTestTarget,
    PythonTestUtilsGeneratorTarget,
)
from pants.backend.python.util_rules import pex
from pants.backend.python.util_rules.pex import PexRequest, VenvPex, VenvPexProcess
from pants.core.goals.fmt import FmtResult, FmtTargetsRequest
from pants.core.util_rules.config_files import ConfigFiles, ConfigFilesRequest
from pants.core.util_rules.partitions import PartitionerType
from pants.engine.fs import Digest, MergeDigests
from pants.engine.process import ProcessResult
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.engine.target import BoolField, FieldSet, Target
from pants.option.option_types import ArgsListOption, FileOption, SkipOption
from pants.util.logging import LogLevel
from pants.util.strutil import pluralize


class SkipRuffFormatField(BoolField):
    alias = "skip_ruff_format"
    default = False
    help = "If true, `ruff format` leaves this target's files alone (in `fmt` and in `lint`)."


@dataclass(frozen=True)
class RuffFormatFieldSet(FieldSet):
    required_fields = (PythonSourceField,)

    source: PythonSourceField

    @classmethod
    def opt_out(cls, tgt: Target) -> bool:
        return tgt.get(SkipRuffFormatField).value


class RuffFormat(PythonToolBase):
    options_scope = "ruff-format"
    name = "ruff format"
    help = "The formatter of ruff (`ruff format`, https://docs.astral.sh/ruff/formatter/), from a resolve."

    # `ruff format` is stable from 0.1.2. Pants ships no lockfile for this tool: it is installed only
    # from the resolve that `install_from_resolve` names (checked in `ruff_format_pex`).
    default_version = "ruff>=0.1.2"
    default_main = ConsoleScript("ruff")
    default_requirements = [default_version]
    # Registered so that to_pex_request can see it is unset and use the resolve's constraints.
    register_interpreter_constraints = True
    # PythonToolBase demands a default lockfile; this one is never read (see above).
    default_lockfile_resource = ("arena_pants", "ruff-format.lock")

    skip = SkipOption("fmt", "lint")
    args = ArgsListOption(example="--preview")
    config = FileOption(
        default=None,
        advanced=True,
        help="The ruff configuration file given to `ruff format --config` (ruff's own discovery is not used).",
    )

    def config_request(self) -> ConfigFilesRequest:
        return ConfigFilesRequest(specified=self.config, specified_option_name=f"[{self.options_scope}].config")


class RuffFormatRequest(FmtTargetsRequest):
    field_set_type = RuffFormatFieldSet
    tool_subsystem = RuffFormat
    partitioner_type = PartitionerType.DEFAULT_SINGLE_PARTITION


def ruff_format_pex(tool: RuffFormat) -> PexRequest:
    if not tool.install_from_resolve:
        raise ValueError(
            f"[{tool.options_scope}].install_from_resolve must name a resolve that locks {tool.default_version}: "
            "Pants ships no lockfile for this tool."
        )
    return tool.to_pex_request()


@rule(desc="Format with ruff format", level=LogLevel.DEBUG)
async def ruff_format(request: RuffFormatRequest.Batch, tool: RuffFormat) -> FmtResult:
    ruff, config = await MultiGet(
        Get(VenvPex, PexRequest, ruff_format_pex(tool)),
        Get(ConfigFiles, ConfigFilesRequest, tool.config_request()),
    )
    input_digest = await Get(Digest, MergeDigests((request.snapshot.digest, config.snapshot.digest)))
    config_args = (f"--config={tool.config}",) if tool.config else ()
    result = await Get(
        ProcessResult,
        VenvPexProcess(
            ruff,
            argv=("format", "--no-cache", *config_args, *tool.args, *request.files),
            input_digest=input_digest,
            output_files=request.files,
            description=f"Run ruff format on {pluralize(len(request.files), 'file')}.",
            level=LogLevel.DEBUG,
        ),
    )
    return await FmtResult.create(request, result, strip_chroot_path=True)


def rules():
    return [
        *collect_rules(),
        *RuffFormatRequest.rules(),
        *pex.rules(),
        *(
            target.register_plugin_field(SkipRuffFormatField)
            for target in (
                PythonSourcesGeneratorTarget,
                PythonSourceTarget,
                PythonTestsGeneratorTarget,
                PythonTestTarget,
                PythonTestUtilsGeneratorTarget,
            )
        ),
    ]
