"""What both ends of the runner's gRPC wire agree on: message sizes and the error-kind metadata."""

from __future__ import annotations

# A candidate is at most 4 MiB of files (arena.candidate.allowlist); leave room for framing.
MAX_RECEIVE_BYTES = 8 << 20
# Tasks carry their baseline files (a repository task's code base); evaluations carry logs.
MAX_SEND_BYTES = 64 << 20
# Trailing metadata naming the arena error class, so the client raises the same exception.
ERROR_KIND_KEY = "arena-error"
