"""One AgentKernelArena task's config.yaml: the fields the importer uses."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from arena.importer.outcome import LayoutNotRead
from arena.importer.yaml_subset import YamlSubsetError, read_yaml_subset

CONFIG_FILE = "config.yaml"
# How a task-runner test is started in the config: `python3 <runner> correctness`.
RUNNER_MODE = "correctness"


@dataclass(frozen=True)
class TaskConfig:
    """The config's fields the importer reads; paths are relative to the task folder."""

    task_type: str  # "triton2triton" for every task this importer reads
    source_files: tuple[str, ...]  # the files an agent edits (their source_file_path)
    kernels: tuple[str, ...]  # the Triton kernels to optimise (their target_kernel_functions)
    correctness_command: tuple[str, ...]  # each command of correctness_command
    instructions: str  # the prompt's instructions, "" when absent
    target_file: str = ""  # the file the agent writes (target_file_path; hip2hip, torch2hip), "" when absent


def read_config(task_dir: Path) -> TaskConfig:
    """The config of the task in `task_dir`; NotImportable when it is missing or unreadable."""
    path = task_dir / CONFIG_FILE
    try:
        raw = read_yaml_subset(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, YamlSubsetError) as error:
        raise LayoutNotRead(f"{CONFIG_FILE} cannot be read: {error}") from None
    prompt = raw.get("prompt")
    instructions = prompt.get("instructions") if isinstance(prompt, dict) else None
    target = raw.get("target_file_path")
    return TaskConfig(
        task_type=_text(raw, "task_type"),
        source_files=_texts(raw, "source_file_path"),
        kernels=_texts(raw, "target_kernel_functions"),
        correctness_command=_texts(raw, "correctness_command"),
        instructions=instructions.strip() if isinstance(instructions, str) else "",
        target_file=target.strip() if isinstance(target, str) else "",
    )


def command_words(config: TaskConfig) -> list[str] | None:
    """The config's one correctness command split into words; None when it has several commands
    or one that does not split (each layout's reader says so in its own words)."""
    if len(config.correctness_command) != 1:
        return None
    try:
        return shlex.split(config.correctness_command[0])
    except ValueError:
        return None


def runner_path(config: TaskConfig) -> str:
    """The test runner a config starts as `python3 <runner> correctness`; NotImportable otherwise
    (a pytest file, or a harness with its own flags, is another layout)."""
    if len(config.correctness_command) != 1:
        count = len(config.correctness_command)
        raise LayoutNotRead(f"correctness_command has {count} commands; the importer reads one")
    command = config.correctness_command[0]
    try:
        words = shlex.split(command)
    except ValueError:
        raise LayoutNotRead(f"correctness_command {command!r} cannot be split into words") from None
    if len(words) == 3 and words[0] in ("python", "python3") and words[1].endswith(".py") and words[2] == RUNNER_MODE:
        return words[1]
    scripts = [word for word in words if word.endswith(".py")]
    shown = f"pytest on {scripts[0]}" if words[0] == "pytest" and scripts else f"`{command[:60]}`"
    raise LayoutNotRead(f"correctness runs {shown}, not a task runner (`python3 <runner>.py {RUNNER_MODE}`)")


def _text(raw: dict, key: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value.strip():
        raise LayoutNotRead(f"{CONFIG_FILE}: {key} is missing or not a string")
    return value.strip()


def _texts(raw: dict, key: str) -> tuple[str, ...]:
    value = raw.get(key)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(item, str) for item in value):
        raise LayoutNotRead(f"{CONFIG_FILE}: {key} is missing or not a list of strings")
    return tuple(item.strip() for item in value)
