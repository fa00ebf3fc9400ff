"""One headless call of Letta Code (``adapters/letta/adapter.py``): where it goes (``Whereabouts``: the agent, its
conversation, a new one asked for; kept in ``state.json``), its command line, its provider file, and its result
read from what it printed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from adapters.base import AdapterError

PROVIDER = "openai-compatible"
BLANK_KEY = "mmb-removed-between-calls"  # the provider's key while no call runs
ARG_LIMIT = 120_000  # bytes of a message on its command line (Linux takes at most 131,072 in one argument)
TAIL_LINES = 12  # lines of a failed call's output said in its error


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@dataclass
class Whereabouts:
    """Which agent and conversation the next message goes to, and what the run has read of them."""

    agent_id: str = ""
    conversation_id: str = ""
    known: list[str] = field(default_factory=list)  # the run's conversations, oldest first
    pending_new: bool = False  # the next message opens a new conversation over the same memory
    actions: tuple[str, str] = ("", "")  # (conversation, last transcript entry read by ``agent_actions``)

    @property
    def opens(self) -> bool:
        """Whether the next message opens a conversation (the agent's first, or a new one)."""
        return not self.agent_id or self.pending_new or not self.conversation_id

    def selection(self, model: str) -> list[str]:
        """The call's options that say where it goes: a new agent on ``model``, a new conversation, or the
        current one."""
        if not self.agent_id:
            return ["--new-agent", "-m", f"{PROVIDER}/{model}"]
        if self.opens:
            return ["--agent", self.agent_id, "--new"]
        return ["--conversation", self.conversation_id]

    def took(self, result: dict[str, Any]) -> None:
        """The agent and conversation a finished call used (the first message's agent, a new conversation)."""
        agent, conversation = result.get("agent_id"), result.get("conversation_id")
        if isinstance(agent, str) and agent:
            self.agent_id = agent
        if isinstance(conversation, str) and conversation:
            self.adopt(conversation)

    def adopt(self, conversation: str) -> None:
        self.conversation_id, self.pending_new = conversation, False
        if conversation not in self.known:
            self.known.append(conversation)

    def export(self) -> dict[str, Any]:
        return {
            "agent": self.agent_id,
            "conversation": self.conversation_id,
            "known": list(self.known),
            "pending_new": self.pending_new,
            "actions": list(self.actions),
        }

    @classmethod
    def restore(cls, data: Any) -> Whereabouts:
        saved = as_dict(data)
        cursor = saved.get("actions")
        actions = (
            (str(cursor[0]), str(cursor[1])) if isinstance(cursor, list) and len(cursor) == 2 else ("", "")
        )
        return cls(
            agent_id=str(saved.get("agent") or ""),
            conversation_id=str(saved.get("conversation") or ""),
            known=[str(item) for item in saved.get("known") or []],
            pending_new=bool(saved.get("pending_new")),
            actions=actions,
        )


def fit(text: str) -> str:
    """``text`` within ``ARG_LIMIT`` bytes: a longer message is cut (as Hermes' server cuts at 65,536 characters)."""
    data = text.encode("utf-8")
    return text if len(data) <= ARG_LIMIT else data[:ARG_LIMIT].decode("utf-8", errors="ignore")


def provider_json(base_url: str, key: str) -> str:
    """Letta's ``providers/auth.json`` with its ``openai-compatible`` provider, as its ``connect`` writes it."""
    record = {
        "id": f"local-provider-{PROVIDER}",
        "name": PROVIDER,
        "provider_type": PROVIDER,
        "provider_category": "byok",
        "auth": {"type": "api", "key": key},
        "base_url": base_url,
    }
    return json.dumps({"version": 1, "providers": {PROVIDER: record}}, indent=2) + "\n"


def last_result(printed: str) -> dict[str, Any] | None:
    """The last JSON object of ``type`` ``result`` in a call's output (its other lines: Node's warnings)."""
    decoder = json.JSONDecoder()
    found = None
    starts = [0, *(index + 1 for index, char in enumerate(printed) if char == "\n")]
    for start in starts:
        if printed.startswith("{", start):
            try:
                value, _ = decoder.raw_decode(printed, start)
            except ValueError:
                continue
            if isinstance(value, dict) and value.get("type") == "result":
                found = value
    return found


def call_result(printed: str, exit_line: str) -> dict[str, Any]:
    """The result of a call that printed ``printed`` and ended as ``exit_line`` says; an ``AdapterError`` with the
    tail of its output when it printed none, with its own words when it failed."""
    result = last_result(printed)
    if result is None:
        tail = "\n".join(printed.strip().splitlines()[-TAIL_LINES:])
        raise AdapterError(f"letta: its call ended ({exit_line}) without a result:\n{tail}")
    if result.get("is_error") or result.get("subtype") not in (None, "success"):
        raise AdapterError(f"letta: its call failed: {str(result.get('result'))[:500]}")
    return result


def context_tokens(result: dict[str, Any]) -> int | None:
    """The size of the context of the call's last model request (its ``usage.context_tokens``)."""
    tokens = as_dict(result.get("usage")).get("context_tokens")
    return tokens if isinstance(tokens, int) and tokens > 0 else None
