from pants.option.option_types import BoolOption, IntOption, SkipOption, StrListOption, StrOption
from pants.option.subsystem import Subsystem


class KernelTaskSubsystem(Subsystem):
    options_scope = "arena-tasks"
    name = "arena_tasks"
    help = (
        "Validating and running kernel_task targets through the arena command line. Tests of kernel_task "
        "targets come in two tiers: the full validation (the real harness, per task) for tasks whose folder "
        "differs from the record of full validations and for a fixed sample; the fast tier (every other task's "
        "untimed cases, many tasks through one process) for the rest."
    )

    skip = SkipOption("test")
    cli = StrOption(
        default="//:arena-bundled",
        help="Address of the `arena` pex_binary that validates and evaluates tasks (one whose own interpreter "
        "holds torch and triton: a measurement environment on a CPU machine).",
    )
    timeout = IntOption(
        default=900,
        help="Seconds one task's full validation (or one batch of the fast tier) may take before it fails.",
    )
    record = StrOption(
        default="tasks/validated.json",
        help="The record of full validations that passed: task folder -> the hash of its files then "
        "(written by `arena validate-task --changed --record`).",
    )
    sample = StrListOption(
        default=[],
        help="Task folders validated in full on every run whatever the record says, so that a change to the "
        "harness is caught.",
    )
    full = BoolOption(
        default=False,
        help="Validate every task in full (before a release, or on a GPU machine).",
    )
    fast_batch = IntOption(
        default=40,
        help="Tasks of one category checked by one process of the fast tier at most.",
    )
