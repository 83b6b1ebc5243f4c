from pants.option.option_types import IntOption, SkipOption, StrOption
from pants.option.subsystem import Subsystem


class KernelTaskSubsystem(Subsystem):
    options_scope = "arena-tasks"
    name = "arena_tasks"
    help = "Validating and running kernel_task targets through the arena command line."

    skip = SkipOption("test")
    cli = StrOption(
        default="//:arena-bundled",
        help="Address of the `arena` pex_binary that validates and evaluates tasks (one whose own interpreter "
        "holds torch and triton: a measurement environment on a CPU machine).",
    )
    timeout = IntOption(
        default=900,
        help="Seconds one task's validation may take before it fails.",
    )
