"""OpenClaw's own tool calls read back from its SQLite transcript, as the run's ``agent_action`` events
(``AgentAdapter.agent_actions``).

In ``transcript_events`` an assistant ``message`` event holds ``toolCall`` parts (``id``, ``name``,
``arguments``) and a ``toolResult`` message answers each (``toolCallId``, ``isError``, ``details.error``);
large events are zstd-compressed (``event_zstd``, inflated as ``adapters/openclaw/transcript.py`` does). The
database lies in the agent's folder: it is read from a copy taken without following a link
(``AgentFolder.copy_out``). The cursor is the last ``seq`` read per session, kept in the adapter's state, so a
resume reads the calls after its checkpoint again.

- ``read``/``write``/``edit`` (and ``apply_patch``): a file read or write, a memory one for the workspace's
  ``MEMORY.md`` and ``memory/*.md`` (named as ``memory_files`` names them);
- ``exec``/``process``: a command; ``memory_search``: a search; ``memory_get``: a memory read; else other.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from adapters.local.files.safe_files import AgentFolder
from adapters.openclaw.transcript import DB_LIMIT, _inflate, json_object
from engine.agents import AgentAction
from engine.events import ActionKind

READS = {"read"}
WRITES = {"write", "edit", "apply_patch"}
COMMANDS = {"exec", "process", "bash"}
_QUERY = (
    "SELECT session_id, seq, event_json, event_zstd FROM transcript_events "
    "WHERE event_json IS NULL OR event_json LIKE '%\"toolCall\"%' OR event_json LIKE '%\"toolResult\"%' "
    "ORDER BY created_at, seq"
)


class ActionReader:
    """The tool calls in OpenClaw's transcript database at ``relative`` in the agent's ``folder``."""

    def __init__(self, folder: AgentFolder, relative: Path) -> None:
        self.folder = folder
        self.relative = relative
        self.seen: dict[str, int] = {}  # session id -> the last seq read

    def new_actions(self) -> list[AgentAction]:
        """The calls stored since the last look (their results with them), oldest first."""
        with tempfile.TemporaryDirectory(prefix="mmb-openclaw-actions-") as scratch:
            copy = Path(scratch) / self.relative.name
            for source in (self.relative, self.relative.with_name(self.relative.name + "-wal")):
                with contextlib.suppress(FileNotFoundError):
                    self.folder.copy_out(source, copy.with_name(source.name), DB_LIMIT)
            if not copy.is_file():
                return []
            rows = _rows(copy)
        calls: list[tuple[str, int, dict[str, Any]]] = []
        results: dict[str, dict[str, Any]] = {}
        for session, seq, message in rows:
            if message.get("role") == "toolResult":
                results[str(message.get("toolCallId"))] = message
            elif seq > self.seen.get(session, -1):
                for part in message.get("content") or []:
                    if isinstance(part, dict) and part.get("type") == "toolCall":
                        calls.append((session, seq, part))
        for session, seq, _ in calls:
            self.seen[session] = max(self.seen.get(session, -1), seq)
        return [action_of(part, results.get(str(part.get("id")))) for _, _, part in calls]


def _rows(path: Path) -> list[tuple[str, int, dict[str, Any]]]:
    """``(session, seq, message)`` of every message event with a tool call or result."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2)) as db:
            found = db.execute(_QUERY).fetchall()
    except sqlite3.Error:
        return []
    rows = []
    for session, seq, event_json, event_zstd in found:
        event = json_object(event_json) if event_json else json_object(_inflate(event_zstd))
        message = event.get("message") if event.get("type") == "message" else None
        if isinstance(message, dict):
            rows.append((str(session), int(seq), message))
    return rows


def action_of(part: dict[str, Any], result: dict[str, Any] | None) -> AgentAction:
    name = str(part.get("name") or "?")
    raw = part.get("arguments")
    args: dict[str, Any] = raw if isinstance(raw, dict) else {}
    kind, target, summary = _what(name, args)
    return AgentAction(tool=name, kind=kind, target=target, summary=summary, error=_error(result))


def memory_name(path: str) -> str | None:
    """A path's name among the memory files (``MEMORY.md``, ``memory/x.md``), or None."""
    relative = path.replace("\\", "/").split("/workspace/", 1)[-1].lstrip("./")
    if relative == "MEMORY.md" or (relative.startswith("memory/") and relative.endswith(".md")):
        return relative
    return None


def _what(name: str, args: dict[str, Any]) -> tuple[ActionKind, str, str]:
    if name in READS or name in WRITES:
        path = str(args.get("path") or args.get("file_path") or args.get("filePath") or "")
        memory = memory_name(path)
        target = memory or path
        if name in READS:
            return ("memory read" if memory else "file read"), target, ""
        if name == "write":
            return (
                ("memory write" if memory else "file write"),
                target,
                f"wrote {len(str(args.get('content', '')))} characters",
            )
        old = next((str(v) for k, v in args.items() if "old" in k.lower()), "")
        new = next((str(v) for k, v in args.items() if "new" in k.lower()), "")
        return ("memory write" if memory else "file write"), target, f"{name}: {old!r} → {new!r}"
    if name in COMMANDS:
        return "command", "", str(args.get("command") or args.get("cmd") or "")
    if name == "memory_search":
        return "search", "", str(args.get("query", ""))
    if name == "memory_get":
        return "memory read", memory_name(str(args.get("path", ""))) or str(args.get("path", "")), ""
    return "other", "", json.dumps(args, ensure_ascii=False)[:200]


def _error(result: dict[str, Any] | None) -> str:
    if not result or not result.get("isError"):
        return ""
    raw = result.get("details")
    details: dict[str, Any] = raw if isinstance(raw, dict) else {}
    if details.get("error"):
        return str(details["error"])
    texts = [str(p.get("text", "")) for p in result.get("content") or [] if isinstance(p, dict)]
    return " ".join(texts)[:300] or "failed"
