"""Letta Code's local store as the engine reads it (``home/.letta/lc-local-backend`` in the agent's folder), always
through ``AgentFolder`` (never a link the agent planted, bounded reads): its agents, its conversations and their
transcripts, its MemFS memory folder.

What Letta Code 0.34.12 keeps there (its ``--backend local``):

- ``agents/<base64 of the id>.json``: ``{"id": "agent-local-…", "model": …}``;
- ``conversations/<base64 of "conversation:<id>">/conversation.json`` (``id``, ``agent_id``, ``created_at``; the
  agent's ``default`` conversation has a folder of its own too, never used here) and ``messages.jsonl``: a header
  line, then one entry per line, appended as the turn goes (the user message before the model is called):
  ``{"type": "message", "id", "message": {"role": "user" | "assistant" | "toolResult", "content": [parts]}}``,
  where a user message's parts are Letta's ``<system-reminder>`` blocks then the user's text, an assistant
  message's parts are ``text`` and ``toolCall`` (``id``, ``name``, ``arguments``), a ``toolResult`` names its call
  (``toolCallId``, ``toolName``, ``isError``); and ``{"type": "compaction", "tokensBefore", "details": {"stats":
  {"context_tokens_after", …}}}`` where Letta compacted the conversation;
- ``memfs/<agent id>/memory/``: its memory, a git repository of Markdown files (``.git`` is not memory).
"""

from __future__ import annotations

import json
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters.local.files.safe_files import AgentFolder

STORE = Path("home") / ".letta" / "lc-local-backend"
AGENTS = STORE / "agents"
CONVERSATIONS = STORE / "conversations"
MEMFS = STORE / "memfs"
REMINDER = "<system-reminder>"
DEFAULT_CONVERSATION = "default"
SMALL_FILE = 1024 * 1024  # an agent's or a conversation's JSON, read at most
TRANSCRIPT_LIMIT = 256 * 1024 * 1024  # a conversation's messages.jsonl, read at most
MEMORY_DEPTH = 8  # folders of the memory walked at most this deep
MEMORY_ENTRIES = 2000  # files of the memory listed at most


@dataclass(frozen=True)
class Conversation:
    """One conversation of Letta's store: its id, when it was made, its folder (relative to the agent's)."""

    id: str
    created_at: str
    folder: Path

    @property
    def transcript(self) -> Path:
        return self.folder / "messages.jsonl"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _json(folder: AgentFolder, path: Path) -> dict[str, Any]:
    """A JSON object of the store ({} when absent or not an object)."""
    text = folder.read_text(path, SMALL_FILE)
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def agent_ids(folder: AgentFolder) -> list[str]:
    """The ids of the agents in the store."""
    found = (
        _json(folder, AGENTS / name).get("id") for name in folder.names(AGENTS) if name.endswith(".json")
    )
    return [agent for agent in found if isinstance(agent, str) and agent]


def conversations(folder: AgentFolder, agent_id: str) -> list[Conversation]:
    """The agent's conversations (its ``default`` one left out), oldest first."""
    found = []
    for name in folder.names(CONVERSATIONS):
        data = _json(folder, CONVERSATIONS / name / "conversation.json")
        ident = data.get("id")
        if data.get("agent_id") == agent_id and isinstance(ident, str) and ident != DEFAULT_CONVERSATION:
            found.append(Conversation(ident, str(data.get("created_at") or ""), CONVERSATIONS / name))
    return sorted(found, key=lambda conversation: (conversation.created_at, conversation.id))


def entries(folder: AgentFolder, conversation: Conversation) -> list[dict[str, Any]]:
    """The transcript's entries in order; a line that is not one JSON object (a write cut short) is skipped."""
    data = folder.read(conversation.transcript, TRANSCRIPT_LIMIT) or b""
    found = []
    for line in data.decode("utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            found.append(entry)
    return found


def message_of(entry: dict[str, Any]) -> dict[str, Any] | None:
    """The message of a ``message`` entry, None for any other entry."""
    message = entry.get("message")
    return message if entry.get("type") == "message" and isinstance(message, dict) else None


def parts(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    """The content parts of ``kind`` (``text``, ``toolCall``) of a message."""
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if kind == "text" else []
    found = content if isinstance(content, list) else []
    return [part for part in found if isinstance(part, dict) and part.get("type") == kind]


def texts(message: dict[str, Any]) -> list[str]:
    return [str(part.get("text") or "") for part in parts(message, "text")]


def user_text(message: dict[str, Any]) -> str:
    """What the user wrote: the text parts that are not Letta's own ``<system-reminder>`` blocks."""
    return "".join(text for text in texts(message) if not text.lstrip().startswith(REMINDER)).strip()


def session_of(found: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """``(role, text)`` of the user's messages and the agent's final replies (an assistant message with text and
    no tool call), in order: what ``adapters/local/agent.py`` ``delivery_in`` reads."""
    session: list[tuple[str, str]] = []
    for entry in found:
        message = message_of(entry)
        if message is None:
            continue
        role = message.get("role")
        if role == "user":
            session.append(("user", user_text(message)))
        elif role == "assistant" and not parts(message, "toolCall"):
            reply = "".join(texts(message)).strip()
            if reply:
                session.append(("assistant", reply))
    return session


def compactions(found: list[dict[str, Any]]) -> list[tuple[str, int | None, int | None, str]]:
    """``(entry id, tokens before, tokens after, detail)`` of each compaction of the transcript."""
    done = []
    for entry in found:
        if entry.get("type") != "compaction":
            continue
        stats = _dict(_dict(entry.get("details")).get("stats"))
        before, after = entry.get("tokensBefore"), stats.get("context_tokens_after")
        messages = (stats.get("messages_count_before"), stats.get("messages_count_after"))
        detail = f"trigger {stats.get('trigger') or '?'}" + (
            f": messages {messages[0]}->{messages[1]}" if None not in messages else ""
        )
        done.append(
            (
                str(entry.get("id") or ""),
                before if isinstance(before, int) else None,
                after if isinstance(after, int) else None,
                detail,
            )
        )
    return done


def memory_dir(agent_id: str) -> Path:
    """The agent's MemFS working tree, relative to the agent's folder."""
    return MEMFS / agent_id / "memory"


def memory_files(folder: AgentFolder, agent_id: str | None) -> list[tuple[Path, str]]:
    """``(path, name in the memory)`` of every file of the MemFS working tree (``.git`` left out), walked without
    following a link (a link is listed, and refused when read: a snapshot notes it), at most ``MEMORY_DEPTH``
    folders deep and ``MEMORY_ENTRIES`` files."""
    if not agent_id:
        return []
    root = memory_dir(agent_id)
    found: list[tuple[Path, str]] = []
    stack: list[tuple[Path, str, int]] = [(root, "", 0)]
    while stack and len(found) < MEMORY_ENTRIES:
        where, prefix, depth = stack.pop()
        for name in folder.names(where):
            if name == ".git" and depth == 0:
                continue
            info = folder.lstat(where / name)
            if info is not None and stat.S_ISDIR(info.st_mode):
                if depth < MEMORY_DEPTH:
                    stack.append((where / name, f"{prefix}{name}/", depth + 1))
            else:
                found.append((where / name, prefix + name))
    return sorted(found, key=lambda item: item[1])[:MEMORY_ENTRIES]
