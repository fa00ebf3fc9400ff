"""Usage as a prefix-caching provider reports it, for the scripted models and ``serve-scripted``.

A request's prompt tokens are counted with the tokenizer: the messages with their tool calls and tool
results, plus the tool schemas (``schema_tokens``). The part a provider's prefix cache would serve is the
prefix shared with the previous request of the same model: the tool schemas when they are the same, then
the leading messages both requests share (``PrefixCache``). Each message is counted once (``TokenTally``),
so a turn costs its new messages, not the history. The completion's tokens are its text and tool calls.
"""

from __future__ import annotations

import json
from functools import lru_cache

from engine.models.base import Completion, Message, ToolSchema, Usage
from engine.models.tokens import TokenTally, common_prefix, count_text


@lru_cache(maxsize=16)
def _schema_tokens(text: str) -> int:
    return count_text(text)


def schema_tokens(tools: list[ToolSchema] | None) -> int:
    """Tokens of the tool schemas sent with a request (0 without tools)."""
    return _schema_tokens(json.dumps(tools, sort_keys=True, ensure_ascii=False)) if tools else 0


def completion_tokens(completion: Completion) -> int:
    """Tokens the model wrote: its text, its reasoning, and each tool call's name and arguments."""
    total = count_text(completion.content) + count_text(completion.reasoning)
    return total + sum(count_text(c.name) + count_text(c.arguments) for c in completion.tool_calls)


class PrefixCache:
    """The requests of one model as a prefix-caching provider sees them: ``usage`` of each in turn."""

    def __init__(self) -> None:
        self._tally = TokenTally()
        self._tools: str | None = None  # the previous request's tool schemas (None: no request yet)

    def prompt(self, messages: list[Message], tools: list[ToolSchema] | None) -> tuple[int, int]:
        """Prompt tokens of this request and how many of them the previous request's prefix covers."""
        tools_key = json.dumps(tools, sort_keys=True, ensure_ascii=False) if tools else ""
        same_tools = self._tools is not None and tools_key == self._tools
        kept = common_prefix(self._tally.messages, messages) if same_tools else 0
        shared = self._tally.prefix_tokens(kept) if kept else 0
        self._tools = tools_key
        self._tally.update(messages)
        schema = schema_tokens(tools)
        prompt = schema + self._tally.count()
        return prompt, (schema + shared if same_tools else 0)

    def usage(self, messages: list[Message], tools: list[ToolSchema] | None, completion: Completion) -> Usage:
        """The usage of answering ``messages`` (with ``tools``) by ``completion``, cached part included."""
        prompt, cached = self.prompt(messages, tools)
        return Usage(
            prompt_tokens=prompt, completion_tokens=completion_tokens(completion), cached_tokens=cached
        )
