"""Hermes' own tool calls read back from its session store (``GET /api/sessions/{id}/messages``, from its
``state.db``), as the run's ``agent_action`` events (``AgentAdapter.agent_actions``).

An assistant message's ``tool_calls`` (OpenAI shape: ``function.name``, ``function.arguments`` as JSON text) and
the ``tool`` message answering each (``tool_call_id``; Hermes' memory tool answers ``{"success": false, "error":
…}`` when it refused). Messages carry Hermes' own increasing ``id``: the last one read is the cursor, kept in the
adapter's state, so a resume reads the calls after its checkpoint again.

- ``memory`` (``add``/``replace``/``remove`` on target ``memory`` or ``user``): a memory write of ``MEMORY.md`` or
  ``USER.md``;
- its file tools (``read_file``, ``write_file``, ``patch``, ``search_files``): a file read or write, a memory one
  when the path is in ``memories/``;
- ``terminal``: a command; ``session_search``: a search; anything else (``todo``): other.
"""

from __future__ import annotations

import json
from typing import Any

from engine.agents import AgentAction
from engine.events import ActionKind

MEMORY_TARGETS = {"memory": "MEMORY.md", "user": "USER.md"}
FILE_READS = {"read_file", "search_files"}
FILE_WRITES = {"write_file", "patch", "edit_file"}


def actions_of(messages: list[dict[str, Any]], after: int) -> tuple[list[AgentAction], int]:
    """The tool calls of the messages stored after message id ``after``, and the new cursor."""
    results = {
        m.get("tool_call_id"): m.get("content")
        for m in messages
        if m.get("role") == "tool" and m.get("tool_call_id")
    }
    found: list[AgentAction] = []
    last = after
    for message in messages:
        number = message.get("id")
        if not isinstance(number, int) or number <= after:
            continue
        last = max(last, number)
        for call in message.get("tool_calls") or []:
            if isinstance(call, dict):
                found.append(action_of(call, results.get(call.get("id"))))
    return found, last


def action_of(call: dict[str, Any], result: Any) -> AgentAction:
    function = call.get("function") or {}
    name = str(function.get("name") or "?")
    args = _arguments(function.get("arguments"))
    kind, target, summary = _what(name, args)
    return AgentAction(tool=name, kind=kind, target=target, summary=summary, error=_error(result))


def _what(name: str, args: dict[str, Any]) -> tuple[ActionKind, str, str]:
    if name == "memory":
        action = str(args.get("action", ""))
        target = MEMORY_TARGETS.get(str(args.get("target", "memory")), str(args.get("target", "")))
        content, old = str(args.get("content", "")), str(args.get("old_text", ""))
        detail = {"replace": f"{old!r} → {content!r}", "remove": repr(old)}.get(action, content)
        return "memory write", target, f"{action}: {detail}"
    if name in FILE_READS or name in FILE_WRITES:
        path = str(args.get("path") or args.get("file_path") or "")
        memory = "/memories/" in f"/{path}"
        target = path.rsplit("/", 1)[-1] if memory else path
        if name in FILE_WRITES:
            return ("memory write" if memory else "file write"), target, name
        return ("memory read" if memory else "file read"), target, name
    if name == "terminal":
        return "command", "", str(args.get("command", ""))
    if name == "session_search":
        return "search", "", str(args.get("query", ""))
    return "other", "", json.dumps(args, ensure_ascii=False)[:200]


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw or "{}")
    except (TypeError, ValueError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _error(result: Any) -> str:
    """The tool's own failure in its result (``{"success": false, "error": …}``), or ""."""
    if not isinstance(result, str):
        return ""
    try:
        parsed = json.loads(result)
    except ValueError:
        return ""
    if isinstance(parsed, dict) and parsed.get("success") is False:
        return str(parsed.get("error") or "failed")
    return ""
