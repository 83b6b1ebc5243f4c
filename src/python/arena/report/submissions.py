"""A submissions folder, as `arena suite --submissions DIR` reads it, plus what an agent's run
recorded beside it (docs/report.md):

    DIR/<task name>/                  the candidate, laid out like the task folder
    DIR/<task name>.agent.json        optional: {"cost_usd": 0.42, "input_tokens": 1200, "output_tokens": 800}
    DIR/<task name>.transcript.<ext>  optional: the agent's transcript (.jsonl, .json, .txt, .md, .log)
    DIR/agent.json                    optional: the configuration, {"name": "...", other fields shown as text}

The sidecar files lie beside the candidate folder, never in it: a candidate holds only files the
task's allow-list names.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from arena.candidate.candidate import Candidate, load_candidate
from arena.errors import ArenaError, InvalidCandidate
from arena.report.runs import AgentRecord
from arena.task.task import Task

CONFIGURATION_FILE = "agent.json"
RECORD_SUFFIX = ".agent.json"
TRANSCRIPT_SUFFIXES = (".jsonl", ".json", ".txt", ".md", ".log")
# A transcript is shown inline in a self-contained page; beyond this it is cut (the page says so).
TRANSCRIPT_CHARS = 200_000


class UnreadableInput(ArenaError):
    """A report input (suite file, submissions folder, agent record) that cannot be read as documented."""


@dataclass(frozen=True)
class Submission:
    """One task's entry in a submissions folder."""

    task: Task
    candidate: Candidate | None  # None: the folder is missing or refused (see `refused`)
    agent: AgentRecord
    refused: str = ""  # why load_candidate refused the folder ("" when it loaded)


def read_configuration(directory: Path) -> dict[str, str]:
    """DIR/agent.json as name -> text (nested values as compact JSON); empty when there is none."""
    raw = _read_json(directory / CONFIGURATION_FILE)
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise UnreadableInput(f"{directory / CONFIGURATION_FILE}: expected a JSON object")
    return {str(key): value if isinstance(value, str) else json.dumps(value) for key, value in raw.items()}


def read_submissions(directory: Path, tasks: Sequence[Task]) -> list[Submission]:
    """Every task of `tasks` that has a folder or an agent record in `directory`, in task order."""
    if not directory.is_dir():
        raise UnreadableInput(f"submissions folder {str(directory)!r} does not exist or is not a folder")
    found = []
    for task in tasks:
        folder = directory / task.name
        record = directory / f"{task.name}{RECORD_SUFFIX}"
        if not folder.exists() and not record.exists():
            continue
        agent = read_agent_record(directory, task.name)
        try:
            found.append(Submission(task, load_candidate(task, folder), agent))
        except InvalidCandidate as error:
            found.append(Submission(task, None, agent, refused=str(error)))
    return found


def read_agent_record(directory: Path, task_name: str) -> AgentRecord:
    """DIR/<task>.agent.json and DIR/<task>.transcript.*; fields not recorded stay None."""
    path = directory / f"{task_name}{RECORD_SUFFIX}"
    raw = _read_json(path) or {}
    if not isinstance(raw, dict):
        raise UnreadableInput(f"{path}: expected a JSON object")
    transcript, name, cut = read_transcript(directory, task_name)
    return AgentRecord(
        cost_usd=_number(raw, "cost_usd", path, float),
        input_tokens=_number(raw, "input_tokens", path, int),
        output_tokens=_number(raw, "output_tokens", path, int),
        transcript=transcript,
        transcript_name=name,
        transcript_cut=cut,
    )


def read_transcript(directory: Path, task_name: str) -> tuple[str, str, bool]:
    """(text, file name, cut) of the first transcript file found; ("", "", False) when none."""
    for suffix in TRANSCRIPT_SUFFIXES:
        path = directory / f"{task_name}.transcript{suffix}"
        if path.is_file():
            with path.open(encoding="utf-8", errors="replace") as handle:
                text = handle.read(TRANSCRIPT_CHARS + 1)
            return text[:TRANSCRIPT_CHARS], path.name, len(text) > TRANSCRIPT_CHARS
    return "", "", False


def _read_json(path: Path) -> Any:
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise UnreadableInput(f"{path}: {error}") from None


def _number(raw: Mapping[str, Any], name: str, path: Path, kind: type[float] | type[int]) -> Any:
    """raw[name] as a finite, non-negative `kind`; None when absent."""
    value = raw.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise UnreadableInput(f"{path}: {name} must be a non-negative number, not {value!r}")
    if kind is int and value != int(value):
        raise UnreadableInput(f"{path}: {name} must be a whole number, not {value!r}")
    return kind(value)
