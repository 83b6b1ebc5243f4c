"""Repository tasks: the code base with the candidate's files overlaid, built by its own command."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def build_repository(directory: Path, command: str) -> tuple[bool, str]:
    """Run the task's declared build command in `directory`; (succeeded, output)."""
    if not command:
        return True, ""
    done = subprocess.run(
        command, shell=True, cwd=directory, capture_output=True, text=True, env=dict(os.environ)
    )
    return done.returncode == 0, f"$ {command}\n{done.stdout}{done.stderr}"
