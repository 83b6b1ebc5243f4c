"""Every adapter by the name an agent_config's `adapter` field gives (one module each)."""

from __future__ import annotations

from arena.agents.adapter import Adapter
from arena.agents.adapters.builtin import BuiltinAdapter
from arena.agents.adapters.claude_code import ClaudeCodeAdapter
from arena.agents.adapters.codex import CodexAdapter
from arena.agents.adapters.cursor import CursorAdapter
from arena.agents.adapters.gemini import GeminiAdapter
from arena.agents.adapters.script import ScriptAdapter

ALL: tuple[Adapter, ...] = (
    ClaudeCodeAdapter(), CodexAdapter(), GeminiAdapter(), CursorAdapter(), BuiltinAdapter(), ScriptAdapter()
)  # fmt: skip
ADAPTERS: dict[str, Adapter] = {adapter.name: adapter for adapter in ALL}
