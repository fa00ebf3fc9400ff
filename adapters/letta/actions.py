"""Letta Code's own tool calls, read back from its conversation transcript (``adapters/letta/store.py``), as the
engine's ``AgentAction``s (``AgentAdapter.agent_actions``): a ``Write``/``Edit`` of a file of its MemFS folder is a
memory write named as the memory names it (``MEMORY.md``, ``system/human.md``), a ``Read`` of one or a call of its
``Memory`` tool a memory read; anything else a file write or read, a command (``Bash``), a search, or other.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from adapters.letta.store import message_of, parts, texts
from engine.agents import AgentAction
from engine.events import ActionKind

WRITES = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
READS = frozenset({"Read"})
SEARCHES = frozenset({"Grep", "Glob", "WebSearch", "WebFetch"})
SHOWN = 200  # characters of a tool's argument said in a summary


def _arguments(call: dict[str, Any]) -> dict[str, Any]:
    raw = call.get("arguments")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return {}
    return raw if isinstance(raw, dict) else {}


def _short(text: Any) -> str:
    said = " ".join(str(text).split())
    return said if len(said) <= SHOWN else said[: SHOWN - 1] + "…"


def _target(path: str, memory: Path) -> tuple[bool, str]:
    """Whether ``path`` is in the memory folder ``memory`` (absolute), and its name there (else the path)."""
    try:
        return True, Path(path).relative_to(memory).as_posix()
    except ValueError:
        return False, path


def action_of(call: dict[str, Any], result: dict[str, Any] | None, memory: Path) -> AgentAction:
    """One tool call (a ``toolCall`` part) and its result message (None when it never came back)."""
    name = str(call.get("name") or "?")
    args = _arguments(call)
    path = str(args.get("file_path") or args.get("path") or "")
    kind: ActionKind = "other"
    target, summary = "", _short(json.dumps(args, ensure_ascii=False)) if args else ""
    if name in WRITES or name in READS:
        in_memory, target = _target(path, memory)
        kind = _file_kind(name in WRITES, in_memory)
        summary = _edit_summary(name, args) if name in WRITES else f"read {target}"
    elif name == "Memory":
        kind, target, summary = "memory read", path, f"read {path}"
    elif name == "Bash":
        kind, summary = "command", _short(args.get("command") or "")
    elif name in SEARCHES:
        kind = "search"
    error = ""
    if result is not None and result.get("isError"):
        error = _short(" ".join(texts(result))) or "failed"
    return AgentAction(tool=name, kind=kind, target=target, summary=summary, error=error)


def _file_kind(write: bool, in_memory: bool) -> ActionKind:
    if write:
        return "memory write" if in_memory else "file write"
    return "memory read" if in_memory else "file read"


def _edit_summary(name: str, args: dict[str, Any]) -> str:
    if name == "Write":
        content = str(args.get("content") or "")
        return f"write {len(content):,} characters: {_short(content)}"
    if "old_string" in args or "new_string" in args:
        return f'replace "{_short(args.get("old_string") or "")}" → "{_short(args.get("new_string") or "")}"'
    return _short(json.dumps(args, ensure_ascii=False))


def actions_after(found: list[dict[str, Any]], after: str, memory: Path) -> tuple[list[AgentAction], str]:
    """The tool calls of the entries after the entry ``after`` (all of them when ``after`` is "" or no longer
    there), with the id of the last entry read (``after`` when none is newer)."""
    ids = [str(entry.get("id") or "") for entry in found]
    start = ids.index(after) + 1 if after and after in ids else 0
    newer = found[start:]
    results = {
        str(message.get("toolCallId")): message
        for entry in newer
        if (message := message_of(entry)) is not None and message.get("role") == "toolResult"
    }
    done = []
    for entry in newer:
        message = message_of(entry)
        if message is None or message.get("role") != "assistant":
            continue
        for call in parts(message, "toolCall"):
            done.append(action_of(call, results.get(str(call.get("id"))), memory))
    return done, (ids[-1] if newer and ids[-1] else after)
