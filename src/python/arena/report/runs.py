"""What a report is made of: runs (one evaluation each, with what was recorded beside it), grouped
into result sets (one agent configuration, or one set of submissions, possibly run repeatedly).

Pure records; arena.report.sources builds them from suite JSON files, submission folders and the
score cache.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from arena.candidate.candidate import Candidate
from arena.evaluation.evaluation import Evaluation


@dataclass(frozen=True)
class AgentRecord:
    """What an agent's own run recorded for one task, where it recorded anything (None: not recorded)."""

    cost_usd: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    transcript: str = ""  # the transcript's text, cut to arena.report.submissions.TRANSCRIPT_CHARS
    transcript_name: str = ""  # the file it came from ("" when there was none)
    transcript_cut: bool = False  # True when the text above is the start of a longer file

    @property
    def tokens(self) -> int | None:
        """Input and output tokens together; None when neither was recorded."""
        if self.input_tokens is None and self.output_tokens is None:
            return None
        return (self.input_tokens or 0) + (self.output_tokens or 0)


@dataclass(frozen=True)
class Run:
    """One evaluation in a result set, and the evidence found for it."""

    evaluation: Evaluation
    category: str  # the task's category (triton2triton, ...)
    label: str  # how its source named it: the task address, plus an exemplar folder in an exemplar suite
    source: str  # the suite file, submission folder or score cache it came from
    candidate: Candidate | None = None  # its files, when found (a submission folder, an exemplar, kept blobs)
    agent: AgentRecord = AgentRecord()  # cost, tokens and transcript, where the agent's run recorded them
    task_changed: bool = False  # the task's digest now differs from the one it was evaluated with

    @property
    def task(self) -> str:
        return self.evaluation.task


@dataclass(frozen=True)
class ResultSet:
    """One agent configuration (or submission set): every run of it, in source order."""

    name: str
    runs: tuple[Run, ...]
    configuration: Mapping[str, str] = field(default_factory=dict)  # agent.json, as name -> value text
    sources: tuple[str, ...] = ()  # the files and folders it was read from
    not_scored: tuple[str, ...] = ()  # suite lines "label: error" the runner failed (no evaluation)
