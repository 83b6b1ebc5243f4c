"""`python -m arena.agents.script_agent --versions DIR`: replays prepared candidate versions.

DIR/<task name>/ (or DIR itself, when it has no folder of the task's name) holds versions v1/,
v2/, ... in the layout of the workspace's candidate/. For each, in order: copy its files into
candidate/, a free check, then an evaluation while iterations are left; at the end the best
evaluation (most points) is submitted and its files left in candidate/. It talks to the runner
only through the SDK, with the attempt's token from its environment (ARENA_RUNNER, ARENA_TOKEN,
ARENA_ATTEMPT, ARENA_WORKSPACE), and prints one JSON line per step: the stream the script
adapter totals.
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from arena.agents.events import emit
from arena.agents.folder import CANDIDATE_FOLDER, read_folder, workspace_candidate, write_folder
from arena.agents.in_attempt import attempt_from_environment, submit_best
from arena.client.client import Client
from arena.errors import ArenaError, BudgetExhausted
from arena.evaluation.evaluation import Evaluation


def version_folders(root: Path, task_name: str) -> list[Path]:
    """The version folders for this task, in numeric order (v2 before v10)."""
    folder = root / task_name if (root / task_name).is_dir() else root
    if not folder.is_dir():
        raise ArenaError(f"no folder {folder}")
    versions = [path for path in folder.iterdir() if path.is_dir() and re.fullmatch(r"v\d+", path.name)]
    if not versions:
        raise ArenaError(f"no version folders (v1/, v2/, ...) in {folder}")
    return sorted(versions, key=lambda path: int(path.name[1:]))


def replay(client: Client, attempt_id: str, workspace: Path, versions: list[Path]) -> Evaluation | None:
    """Check and evaluate each version; the best evaluation, or None when none was evaluated."""
    task = client.get_attempt(attempt_id).task
    best: tuple[Evaluation, Path] | None = None
    for version in versions:
        write_folder(workspace / CANDIDATE_FOLDER, read_folder(version))
        candidate = workspace_candidate(workspace, task)
        check = client.evaluate(candidate, attempt_id, check_only=True)
        emit({"type": "tool", "name": "check", "version": version.name, "status": check.status.value})
        if not check.compiled:
            continue
        try:
            evaluation = client.evaluate(candidate, attempt_id)
        except BudgetExhausted as error:
            emit({"type": "error", "name": "evaluate", "version": version.name, "message": str(error)})
            break
        emit(
            {
                "type": "tool",
                "name": "evaluate",
                "version": version.name,
                "status": evaluation.status.value,
                "points": evaluation.score.points,
                "evaluation": evaluation.id,
            }
        )
        if best is None or evaluation.score.points > best[0].score.points:
            best = (evaluation, version)
    if best is not None:
        write_folder(workspace / CANDIDATE_FOLDER, read_folder(best[1]))
    return best[0] if best is not None else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="script_agent", description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--versions", type=Path, required=True, help="DIR[/<task name>]/v1/, v2/, ...")
    args = parser.parse_args(argv)
    started = time.monotonic()
    client, attempt_id, workspace = attempt_from_environment()
    with client:
        task_name = client.get_attempt(attempt_id).task.rpartition(":")[2].rpartition("/")[2]
        try:
            versions = version_folders(args.versions, task_name)
        except ArenaError as error:  # nothing to replay for this task: the runner finalizes the baseline
            emit({"type": "error", "message": str(error)})
            return 1
        return submit_best(client, attempt_id, replay(client, attempt_id, workspace, versions), started)


if __name__ == "__main__":
    raise SystemExit(main())
