"""The evidence behind one run: its candidate's diff against the baseline, and the keys that let
anyone reproduce its evaluation (docs/architecture.md, "Reproducibility")."""

from __future__ import annotations

import difflib

from arena.candidate.candidate import Candidate
from arena.evaluation.evaluation import Evaluation

# A diff is shown inline in a self-contained page; beyond this it is cut (the page says so).
DIFF_CHARS = 200_000
CONTEXT_LINES = 3


def candidate_diff(baseline: Candidate | None, candidate: Candidate) -> str:
    """A unified diff of every file the candidate holds against the baseline's file of that path
    (a candidate's missing files are the baseline's, so only its own files can differ)."""
    before = baseline.files if baseline is not None else {}
    parts = []
    for path, after in candidate.files.items():
        old = before.get(path)
        if old == after:
            continue
        try:
            old_lines = old.decode("utf-8").splitlines(keepends=True) if old is not None else []
            new_lines = after.decode("utf-8").splitlines(keepends=True)
        except UnicodeDecodeError:
            parts.append(f"Binary file {path} differs\n")
            continue
        source = f"baseline/{path}" if old is not None else "/dev/null"
        lines = difflib.unified_diff(old_lines, new_lines, source, f"candidate/{path}", n=CONTEXT_LINES)
        parts.append("".join(line if line.endswith("\n") else line + "\n" for line in lines))
    text = "".join(parts)
    if len(text) > DIFF_CHARS:
        return text[:DIFF_CHARS] + f"\n[diff cut at {DIFF_CHARS} characters of {len(text)}]\n"
    return text


def reproducibility_keys(evaluation: Evaluation) -> list[tuple[str, str]]:
    """(name, value) pairs that identify what produced the evaluation; "" where not recorded."""
    environment = evaluation.environment
    where = ", ".join(v for v in (environment.backend, environment.gpu_name, environment.driver) if v)
    return [
        ("evaluation id", evaluation.id),
        ("task digest", evaluation.task_digest),
        ("candidate digest", evaluation.candidate_digest),
        ("harness version", evaluation.harness_version),
        ("environment fingerprint", environment.fingerprint),
        ("image digest", environment.image_digest or "none (run on the host, not in the pinned image)"),
        ("cache key", evaluation.cache_key),
        ("environment", where),
    ]
