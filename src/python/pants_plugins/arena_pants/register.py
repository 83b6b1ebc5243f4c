from arena_pants import plugin_tests, ruff_format
from arena_pants import rules as arena_rules
from arena_pants.target_types import AgentConfigTarget, KernelTaskSuiteTarget, KernelTaskTarget


def target_types():
    return [KernelTaskTarget, KernelTaskSuiteTarget, AgentConfigTarget, plugin_tests.PluginTestsTarget]


def rules():
    return [*arena_rules.rules(), *plugin_tests.rules(), *ruff_format.rules()]
