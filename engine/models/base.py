"""The model interface every model plugs into: real endpoints (``openai_model.py``) and scripted ones.

Messages and tool schemas are plain OpenAI chat-completions dicts, so the same objects go over HTTP.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

Role = Literal["persona", "agent", "judge"]
Message = dict[str, Any]  # an OpenAI chat message: {"role": ..., "content": ..., "tool_calls": ...}
ToolSchema = dict[str, Any]  # an OpenAI tool: {"type": "function", "function": {...}}


class ToolCall(BaseModel):
    id: str
    name: str
    arguments: str  # raw JSON text as the model produced it (may be malformed)


class Usage(BaseModel):
    prompt_tokens: int = 0  # every input token, the cached ones included
    completion_tokens: int = 0
    cached_tokens: int = 0  # the part of prompt_tokens a provider's prefix cache served (billed cheaper)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class Completion(BaseModel):
    content: str | None = None
    reasoning: str | None = None  # provider ``reasoning_content``: kept as persona thinking
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)

    def as_message(self) -> Message:
        """The assistant message to append to the history."""
        message: Message = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        return message


class ModelError(Exception):
    """A model call that failed after its retries (or could not be made: missing key)."""


class Retry(BaseModel):
    """A failed attempt of a model call, about to be tried again."""

    attempt: int  # the attempt about to be made: 2 after the first failed
    attempts: int  # attempts in all
    delay: float  # seconds before it
    reason: str  # why the last attempt failed (one line, no key)


@runtime_checkable
class ReportsRetries(Protocol):
    """A model that retries on its own and can say so (``openai_model.py``): the run sets ``on_retry``."""

    on_retry: Callable[[Retry], None] | None


class ChatModel(Protocol):
    """Anything that completes a chat: the openai wrapper and the scripted models."""

    name: str

    async def complete(
        self, messages: list[Message], tools: list[ToolSchema] | None = None
    ) -> Completion: ...
