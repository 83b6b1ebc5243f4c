"""`python -m arena.agents.builtin_agent`: a GEAK-style iterative agent over any OpenAI- or
Anthropic-compatible endpoint: generate, check, evaluate, reflect.

Each round the model sees the task (the prompt, TASK.md and the candidate's files) and what the
last round's check or evaluation said, and answers with whole files, each as
`<file path="kernel.py">...</file>`. The files go into candidate/; a free check follows, and when
it passes (or only a device is missing) an evaluation, while the runner has iterations left. The
best evaluation is submitted at the end and its files left in candidate/. The runner is reached
only through the SDK with the attempt's token (ARENA_RUNNER, ARENA_TOKEN, ARENA_ATTEMPT,
ARENA_WORKSPACE); the model's endpoint and key come from ARENA_MODEL_ENDPOINT and
ARENA_MODEL_KEY (never the command line, which other users of the machine can read). Every step
is printed as a JSON line; "model" events carry the tokens the endpoint reported.
"""

from __future__ import annotations

import argparse
import os
import re
import time
from pathlib import Path
from typing import Mapping

from arena.agents.chat import APIS, complete
from arena.agents.events import emit
from arena.agents.folder import CANDIDATE_FOLDER, read_folder, workspace_candidate, write_folder
from arena.agents.in_attempt import attempt_from_environment, submit_best
from arena.client.client import Client
from arena.errors import BudgetExhausted
from arena.evaluation.evaluation import Evaluation, Status
from arena.runner.workspace import TASK_FILE, check_plain_path

ENDPOINT_VARIABLE = "ARENA_MODEL_ENDPOINT"
KEY_VARIABLE = "ARENA_MODEL_KEY"
FILE_BLOCK = re.compile(r'<file path="([^"]+)">\n?(.*?)</file>', re.DOTALL)
LOG_CHARS = 4000  # of each stage's log shown back to the model
SYSTEM = (
    "You optimise GPU kernels. Answer with the complete new content of every file you change, each as "
    '<file path="PATH">CONTENT</file>, PATH relative to the candidate folder. Keep the entry point\'s signature.'
)
EVALUATE_AFTER = (Status.PASSED, Status.NEEDS_DEVICE)  # a check this good is worth an iteration


def reply_files(text: str, allowed: set[str]) -> dict[str, bytes]:
    """The files a reply gives, limited to the candidate's own paths."""
    files = {}
    for path, content in FILE_BLOCK.findall(text):
        path = path.strip()
        check_plain_path(path)
        if path in allowed:
            files[path] = content.encode()
    return files


def describe(kind: str, evaluation: Evaluation) -> str:
    """What the model is told about a check or an evaluation."""
    lines = [f"{kind}: {evaluation.status.value} (compiled: {evaluation.compiled}, correct: {evaluation.correct})"]
    if kind == "evaluation":
        lines.append(f"points {evaluation.score.points:.1f}, speedup {evaluation.score.speedup:.3f}x over the baseline")
    lines += [f"error: {error}" for error in evaluation.errors]
    lines += [f"[{stage.name}] {stage.log[-LOG_CHARS:]}" for stage in evaluation.stages if stage.log and not stage.ok]
    return "\n".join(lines)


def first_message(prompt: str, workspace: Path, files: Mapping[str, bytes]) -> str:
    shown = "\n".join(
        f'<file path="{path}">\n{content.decode(errors="replace")}</file>' for path, content in files.items()
    )
    task = (workspace / TASK_FILE).read_text(encoding="utf-8")
    return f"{prompt}\n\n# {TASK_FILE}\n{task}\n\n# The candidate's files now\n{shown}"


def run_agent(client: Client, args: argparse.Namespace, attempt_id: str, workspace: Path) -> Evaluation | None:
    """The rounds; the best evaluation (most points), or None when none was made."""
    task = client.get_attempt(attempt_id).task
    candidate_dir = workspace / CANDIDATE_FOLDER
    allowed = set(read_folder(candidate_dir))
    opening = first_message(args.prompt_file.read_text(), workspace, read_folder(candidate_dir))
    messages = [{"role": "user", "content": opening}]
    endpoint, key = os.environ.get(ENDPOINT_VARIABLE, ""), os.environ.get(KEY_VARIABLE, "")
    best: tuple[Evaluation, dict[str, bytes]] | None = None
    for round_number in range(1, args.rounds + 1):
        reply = complete(args.api, endpoint, key, args.model, SYSTEM, messages)
        emit({"type": "model", "round": round_number, "input_tokens": reply.input_tokens,
              "output_tokens": reply.output_tokens, "cached_tokens": reply.cached_tokens})  # fmt: skip
        messages.append({"role": "assistant", "content": reply.text})
        files = reply_files(reply.text, allowed)
        if not files:
            retry = 'No <file path="..."> block named a candidate file. Try again.'
            messages.append({"role": "user", "content": retry})
            continue
        write_folder(candidate_dir, {**read_folder(candidate_dir), **files})
        candidate = workspace_candidate(workspace, task)
        check = client.evaluate(candidate, attempt_id, check_only=True)
        emit({"type": "tool", "name": "check", "round": round_number, "status": check.status.value})
        feedback = describe("check", check)
        if check.status in EVALUATE_AFTER:
            try:
                evaluation = client.evaluate(candidate, attempt_id)
            except BudgetExhausted:
                break  # no iterations (or time) left: submit what we have
            emit({"type": "tool", "name": "evaluate", "round": round_number, "status": evaluation.status.value,
                  "points": evaluation.score.points, "evaluation": evaluation.id})  # fmt: skip
            feedback = describe("evaluation", evaluation)
            if best is None or evaluation.score.points > best[0].score.points:
                best = (evaluation, read_folder(candidate_dir))
            if client.get_attempt(attempt_id).iterations_left <= 0:
                break
        messages.append({"role": "user", "content": f"{feedback}\n\nReflect on this and give improved files."})
    if best is not None:
        write_folder(candidate_dir, best[1])
    return best[0] if best is not None else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="builtin_agent", description="generate, check, evaluate, reflect")
    parser.add_argument("--model", required=True)
    parser.add_argument("--api", choices=APIS, default="openai", help="the endpoint's API (default: openai)")
    parser.add_argument("--rounds", type=int, default=8, help="model calls at most (default: 8)")
    parser.add_argument("--prompt-file", type=Path, required=True)
    args = parser.parse_args(argv)
    started = time.monotonic()
    client, attempt_id, workspace = attempt_from_environment()
    with client:
        return submit_best(client, attempt_id, run_agent(client, args, attempt_id, workspace), started)


if __name__ == "__main__":
    raise SystemExit(main())
