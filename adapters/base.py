"""What every adapter is built on: ``BaseAdapter`` (the reply log, the thinking flag, reply checks, state).

The interface itself — ``AgentAdapter`` and the types that cross it — lives in ``engine/agents.py`` and is
re-exported here, so an adapter imports everything it needs from this module and ``adapters/options.py``.

A new adapter subclasses ``BaseAdapter``, validates its run keys in ``__init__`` and implements the three
methods that talk to the agent: ``create_session``, ``send_message`` (ending in ``record_reply``) and
``destroy_session``. ``get_responses``, ``get_status`` and ``export_state``/``import_state`` come from here.

Reply numbering (``AgentMessage.seq``): 1 for the first reply of a run, then 2, 3, … with no gap, never reset
(not by a new conversation, not by ``destroy_session``); the counter is saved in ``state.json`` as
``{"next_seq": N}`` so that a resumed run continues it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from engine.agents import (
    AdapterContext,
    AdapterError,
    AgentAdapter,
    AgentMessage,
    AgentStatus,
    Delivery,
    MissingApiKey,
    Observation,
    env_api_key,
)
from engine.models.base import Usage
from engine.sanitize import printable, valid_text

if TYPE_CHECKING:
    import httpx

__all__ = [
    "AdapterContext",
    "AdapterError",
    "AgentAdapter",
    "AgentMessage",
    "AgentStatus",
    "BaseAdapter",
    "Delivery",
    "MissingApiKey",
    "Observation",
    "ReplyLog",
    "env_api_key",
    "usage_of",
]


class ReplyLog:
    """The replies of one adapter, numbered from 1; ``after(seq)`` costs the number of newer replies only."""

    def __init__(self) -> None:
        self._replies: list[AgentMessage] = []
        self._first_seq = 1  # the seq of self._replies[0]
        self.next_seq = 1

    def add(self, text: str, time: str) -> AgentMessage:
        """Append a reply with the next seq."""
        message = AgentMessage(seq=self.next_seq, text=text, time=time)
        self._replies.append(message)
        self.next_seq += 1
        return message

    def after(self, seq: int) -> list[AgentMessage]:
        """The replies with ``seq`` greater than the given one, oldest first."""
        return self._replies[max(0, seq + 1 - self._first_seq) :]

    def clear(self) -> None:
        """Forget the replies held; the numbering goes on."""
        self._replies = []
        self._first_seq = self.next_seq

    def export(self) -> dict[str, int]:
        return {"next_seq": self.next_seq}

    def restore(self, data: dict[str, Any]) -> None:
        """Continue the numbering saved by ``export``; also reads the chatbot's older ``{"seq": last}``."""
        if "next_seq" in data:
            self.next_seq = int(data["next_seq"])
        elif "seq" in data:
            self.next_seq = int(data["seq"]) + 1
        self.clear()

    def __len__(self) -> int:
        return len(self._replies)


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


class BaseAdapter(AgentAdapter):
    """An ``AgentAdapter`` with the plumbing every adapter shares.

    Subclasses implement ``create_session``, ``send_message`` and ``destroy_session`` (abstract in
    ``AgentAdapter``), call ``record_reply`` for every reply, and wrap the wait for the agent in
    ``with self.working():`` so that ``get_status`` says "thinking" meanwhile. An adapter with more state to
    save extends ``export_state``/``import_state`` with ``super()``.
    """

    def __init__(self, ctx: AdapterContext) -> None:
        super().__init__(ctx)
        self.replies = ReplyLog()
        self.thinking = False

    # --- the engine's interface -------------------------------------------------------------------

    async def get_responses(self, after_seq: int) -> list[AgentMessage]:
        """The replies recorded with ``record_reply`` since ``after_seq``."""
        return self.replies.after(after_seq)

    async def get_status(self) -> AgentStatus | None:
        """Thinking while inside ``working()``, else sleeping; no observations."""
        return AgentStatus(state="thinking" if self.thinking else "sleeping")

    def export_state(self) -> dict[str, Any]:
        """The reply counter: ``{"next_seq": N}``."""
        return self.replies.export()

    def import_state(self, data: dict[str, Any]) -> None:
        self.replies.restore(data)

    # --- helpers for subclasses -------------------------------------------------------------------

    @property
    def next_seq(self) -> int:
        """The seq the next reply will get."""
        return self.replies.next_seq

    def record_reply(self, content: object) -> AgentMessage:
        """The one door for the agent's replies: checked, cleaned (a lone surrogate becomes U+FFFD), stamped
        with the run's clock and logged.

        Raises:
            AdapterError: ``content`` is not text (a reply is a string; ``""`` is kept as it is).
        """
        if not isinstance(content, str):
            raise AdapterError(f"{self.name}: garbage reply content: {content!r:.300}")
        return self.replies.add(valid_text(content), self.ctx.clock.iso())

    @contextlib.contextmanager
    def working(self) -> Iterator[None]:
        """``get_status`` reports "thinking" inside this block."""
        self.thinking = True
        try:
            yield
        finally:
            self.thinking = False

    def read_chat_reply(self, response: httpx.Response, *path: str | int) -> object:
        """The reply in an HTTP answer: status 200, a JSON body, ``path`` leading to it (e.g. ``"choices", 0,
        "message", "content"``). Records the body's token usage. Pass the result to ``record_reply``.

        Raises:
            AdapterError: another status, a body that is not JSON, or nothing at ``path``.
        """
        if response.status_code != 200:
            raise AdapterError(
                f"{self.name}: chat answered HTTP {response.status_code}: "
                + printable(response.text[:300], newlines=False)
            )
        try:
            body = response.json()
            content: Any = body
            for step in path:
                content = content[step]
        except (ValueError, KeyError, IndexError, TypeError):
            where = ".".join(str(step) for step in path)
            raise AdapterError(f"{self.name}: garbage reply (no {where}): {response.text[:300]!r}") from None
        if (usage := usage_of(body)) is not None:
            self.ctx.record_usage(usage)
        return content

    def env_key(self, variable: str, option: str = "api_key_env") -> str:
        """The key in the environment variable ``variable`` (named by the run key ``option``), read now.

        Raises:
            AdapterError: the variable is not set (``api_key_env: environment variable X is not set``).
        """
        try:
            return env_api_key(variable)
        except MissingApiKey as exc:
            raise AdapterError(f"{option}: {exc}") from None
