from arena_pants import rules as arena_rules
from arena_pants.target_types import KernelTaskSuiteTarget, KernelTaskTarget


def target_types():
    return [KernelTaskTarget, KernelTaskSuiteTarget]


def rules():
    return arena_rules.rules()
