"""The AgentAdapter interface (SPEC §6): all interaction with the agent under test goes through it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from engine.clock import Clock
from engine.models.base import ChatModel, Usage


class AgentMessage(BaseModel):
    seq: int
    text: str
    time: str = ""  # virtual time (ISO) when it arrived


class Observation(BaseModel):
    """Something the adapter saw inside the agent: it goes to the report, never into grades."""

    kind: Literal["compaction", "context"] = "compaction"
    tokens_before: int | None = None
    tokens_after: int | None = None
    detail: str = ""


class AgentStatus(BaseModel):
    state: Literal["sleeping", "thinking"]
    context_tokens: int | None = None
    observations: list[Observation] = Field(default_factory=list)  # new since the last call


class AdapterError(Exception):
    """The agent failed (did not start, crashed, timed out, answered garbage). The run waits, resumable."""


@dataclass
class AdapterContext:
    """What an adapter gets from its run."""

    run_id: str
    run_dir: Path
    options: dict[str, Any]  # the run's keys not consumed by the engine; the adapter validates them
    clock: Clock
    make_model: Callable[[str], ChatModel]  # model name from config.jsonc -> a ChatModel (role "agent")
    model_endpoint: Callable[[str], dict[str, str]] = field(default=lambda name: {})  # base_url/model/api_key
    record_usage: Callable[[Usage], None] = field(default=lambda usage: None)  # the agent's model tokens


def usage_of(body: object) -> Usage | None:
    """The ``usage`` of an OpenAI-style (or Hermes) response body, if it reports one."""
    usage = body.get("usage") if isinstance(body, dict) else None
    if not isinstance(usage, dict):
        return None
    prompt = usage.get("prompt_tokens", usage.get("input_tokens", 0))
    completion = usage.get("completion_tokens", usage.get("output_tokens", 0))
    try:
        return Usage(prompt_tokens=int(prompt or 0), completion_tokens=int(completion or 0))
    except (TypeError, ValueError):
        return None


class AgentAdapter:
    """Base class: required methods raise, optional ones are no-ops.

    Subclasses set ``name`` and the capability flags, and validate ``ctx.options`` in ``__init__``
    (raise ``ValueError`` naming the key).
    """

    name: ClassVar[str] = ""
    supports_new_conversation: ClassVar[bool] = False
    supports_virtual_time: ClassVar[bool] = False

    def __init__(self, ctx: AdapterContext) -> None:
        self.ctx = ctx

    async def create_session(self, name: str) -> None:
        raise NotImplementedError

    async def send_message(self, text: str) -> None:
        raise NotImplementedError

    async def get_responses(self, after_seq: int) -> list[AgentMessage]:
        raise NotImplementedError

    async def destroy_session(self) -> None:
        raise NotImplementedError

    async def start_new_conversation(self) -> None:
        """Clean context, long-term memory kept. A no-op where unsupported."""

    async def set_virtual_time(self, iso: str) -> None:
        """Set the agent's clock. Only called when ``supports_virtual_time``."""

    async def get_status(self) -> AgentStatus | None:
        """Sleeping or thinking plus new observations; None when the adapter cannot tell."""
        return None

    async def close(self) -> None:
        """Release processes and ports (called in ``finally``; the agent's memory stays on disk)."""

    def snapshot_memory(self, label: str) -> Path | None:
        """Copy the agent's memory files to ``run_dir/memory/<label>/``; None where unknown."""
        return None

    def export_state(self) -> dict[str, Any]:
        """Adapter state to keep in state.json for resume (e.g. the chatbot's history cursor)."""
        return {}

    def import_state(self, data: dict[str, Any]) -> None:
        """Restore what ``export_state`` returned."""
