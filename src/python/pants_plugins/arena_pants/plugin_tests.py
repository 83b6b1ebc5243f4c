"""The `pants_plugin_tests` target: runs the plugin's own tests with pytest from their resolve.

Pants 2.17 installs pytest for every python_tests target from one resolve, [pytest]
install_from_resolve = "arena" (pytest 9, Python 3.11). The plugin's tests need the
pants-plugins resolve instead: Python 3.9, and the pytest<7.1 that pants.testutil pins (Pants
has no per-resolve tool yet: pantsbuild/pants#18532). So their python_tests target sets
skip_tests=True and a pants_plugin_tests target depending on it runs them here, with the
pytest of the tests' own resolve, so `./pants test ::` still runs them and caches the result.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from pants.backend.python.target_types import ConsoleScript, PythonTestSourceField
from pants.backend.python.util_rules.pex import VenvPex, VenvPexProcess
from pants.backend.python.util_rules.pex_from_targets import PexFromTargetsRequest
from pants.backend.python.util_rules.python_sources import PythonSourceFiles, PythonSourceFilesRequest
from pants.core.goals.test import TestExtraEnv, TestFieldSet, TestRequest, TestResult, TestSubsystem
from pants.core.util_rules.source_files import SourceFiles, SourceFilesRequest
from pants.engine.process import FallibleProcessResult, Process, ProcessCacheScope
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.engine.target import (
    COMMON_TARGET_FIELDS,
    Dependencies,
    Target,
    TransitiveTargets,
    TransitiveTargetsRequest,
)
from pants.option.option_types import IntOption, SkipOption
from pants.option.subsystem import Subsystem
from pants.util.logging import LogLevel


class PluginTestsSubsystem(Subsystem):
    options_scope = "pants-plugin-pytest"
    name = "pants_plugin_pytest"
    help = "Running the in-repo Pants plugin's tests with the pytest of the pants-plugins resolve."

    skip = SkipOption("test")
    timeout = IntOption(default=600, help="Seconds the tests of one target may take before they fail.")


class PluginTestsDependenciesField(Dependencies):
    help = "The python_tests targets (in the pants-plugins resolve) whose tests this target runs."


class PluginTestsTarget(Target):
    alias = "pants_plugin_tests"
    core_fields = (*COMMON_TARGET_FIELDS, PluginTestsDependenciesField)
    help = "Runs the tests of its python_tests dependencies with pytest from their own resolve."


@dataclass(frozen=True)
class PluginTestsFieldSet(TestFieldSet):
    required_fields = (PluginTestsDependenciesField,)

    dependencies: PluginTestsDependenciesField


class PluginTestsRequest(TestRequest):
    tool_subsystem = PluginTestsSubsystem
    field_set_type = PluginTestsFieldSet


@rule(desc="Run the Pants plugin's tests", level=LogLevel.DEBUG)
async def run_plugin_tests(
    batch: PluginTestsRequest.Batch[PluginTestsFieldSet, Any],
    subsystem: PluginTestsSubsystem,
    test_subsystem: TestSubsystem,
    test_extra_env: TestExtraEnv,
) -> TestResult:
    field_set = batch.single_element
    closure = await Get(TransitiveTargets, TransitiveTargetsRequest([field_set.address]))
    # Depending on a python_tests generator brings in the python_test target of each file.
    tests = [t for t in closure.dependencies if t.has_field(PythonTestSourceField)]
    test_files, sources, pytest = await MultiGet(
        Get(SourceFiles, SourceFilesRequest([t[PythonTestSourceField] for t in tests])),
        Get(PythonSourceFiles, PythonSourceFilesRequest(closure.closure)),
        # Requirements only (pytest comes with pants.testutil); the sources stay unstripped in the
        # sandbox, on sys.path through their source roots, so pytest reports their real paths.
        Get(
            VenvPex,
            PexFromTargetsRequest(
                [t.address for t in tests],
                output_filename="pytest.pex",
                internal_only=True,
                main=ConsoleScript("pytest"),
                include_source_files=False,
                description=f"pytest for {field_set.address}",
            ),
        ),
    )
    process = await Get(
        Process,
        VenvPexProcess(
            pytest,
            argv=("-q", "-p", "no:cacheprovider", *test_files.files),
            input_digest=sources.source_files.snapshot.digest,
            extra_env={**test_extra_env.env, "PEX_EXTRA_SYS_PATH": os.pathsep.join(sources.source_roots)},
            description=f"Run the Pants plugin's tests of {field_set.address}",
            level=LogLevel.DEBUG,
            timeout_seconds=subsystem.timeout,
            cache_scope=(ProcessCacheScope.PER_SESSION if test_subsystem.force else ProcessCacheScope.SUCCESSFUL),
        ),
    )
    result = await Get(FallibleProcessResult, Process, process)
    return TestResult.from_fallible_process_result(
        process_result=result, address=field_set.address, output_setting=test_subsystem.output
    )


def rules():
    return [*collect_rules(), *PluginTestsRequest.rules()]
