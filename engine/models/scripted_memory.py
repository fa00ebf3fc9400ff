"""How ``scripted/agent`` keeps its memory with a real agent's own tools, and the faults a plan plants in it
(``scripted/agent?plan=save,twice``), so the memory autopsy can be tested on a real agent's real memory.

What it saves: a "remember …"/"note …" message's fact; with ``save``, every statement (a message without a
question mark). A fact about something already in memory (an entry sharing content words with it: ``best_entry``)
replaces that entry (an update); else it is added. With Hermes' ``memory`` tool: ``add``/``replace`` entries,
the entries known from the memory block of its system prompt and the calls since. With file tools (OpenClaw's
``read``/``write``/``edit`` in its workspace, Letta Code's ``Read``/``Write``/``Edit`` in its memory directory, then
committed with its ``Bash``: ``scripted_files.py``): ``MEMORY.md`` read first, a new fact appended with the write
tool, an update made with the edit tool (or the whole file written again).

The plan's faults, each a class of the memory autopsy:

- ``skip``: an update is never written (the old value stays): *never written*;
- ``revert``: an update is written, and the next write puts the old value back: *lost*;
- ``twice``: a new fact is written in two places (Hermes' ``user`` target, or ``memory/notes.md``; in a memory
  directory ``notes.md``), an update
  changes the first only: *stored twice, diverged*;
- ``ignore``: a question is answered "I don't know" whatever memory holds: *present but not used*;
- ``invent``: a question is answered with a figure made up from the question: *invented*.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from engine.models.base import Message
from engine.models.scripted_files import MEMORY_FILE, FileTools, plain_file_text, read_argument

PLANS = frozenset({"save", "skip", "revert", "twice", "ignore", "invent"})
MEMORY_FILE_HEADER = "# MEMORY.md\n\n"
NOTES_HEADER = "# Notes\n\n"
DONT_KNOW = "I don't know — you didn't tell me that."
_WORD = re.compile(r"[a-z][a-z'’]+")
_STOP = frozenset(
    "the a an and or but of to in on at for with from by as is are was were be been it its this that these those "
    "my your our their his her me you we they i he she them us now then just also still again please remember "
    "note new old not no yes have has had will would can could should changed change".split()
)
_MISSING = re.compile(r"\b(ENOENT|no such file|not found|does not exist)\b", re.I)


def words(text: str) -> frozenset[str]:
    """A text's content words (letters only, lowercased, a plural's ``s`` dropped): what it is about."""
    found = (w.rstrip("'’").removesuffix("s") for w in _WORD.findall(text.lower()))
    return frozenset(w for w in found if len(w) > 2 and w not in _STOP)


def best_entry(entries: list[str], fact: str) -> str | None:
    """The entry about the same thing as ``fact``: at least two content words in common and half of the
    shorter's; the one sharing most (the latest of equals)."""
    wanted = words(fact)
    best: tuple[int, str] | None = None
    for entry in entries:
        theirs = words(entry)
        shared = len(wanted & theirs)
        if (
            shared >= 2
            and 2 * shared >= min(len(wanted), len(theirs))
            and (best is None or shared >= best[0])
        ):
            best = (shared, entry)
    return best[1] if best else None


def tool_calls(messages: list[Message]) -> list[tuple[str, dict[str, Any]]]:
    """Every tool call of the messages, in order, with its parsed arguments."""
    found = []
    for message in messages:
        for call in message.get("tool_calls") or []:
            function = call.get("function", {}) if isinstance(call, dict) else {}
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except ValueError:
                arguments = {}
            found.append((str(function.get("name", "")), arguments if isinstance(arguments, dict) else {}))
    return found


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def known_entries(messages: list[Message]) -> list[str]:
    """The memory as the agent knows it: its system prompt's lines, then its ``memory`` calls applied."""
    entries = [
        line.strip().lstrip("-•*§ ").strip()
        for message in messages
        if message.get("role") == "system"
        for line in _text(message.get("content")).splitlines()
        if 3 < len(line.strip()) <= 400
    ]
    for name, args in tool_calls(messages):
        if name != "memory":
            continue
        action, content, old = args.get("action"), str(args.get("content", "")), str(args.get("old_text", ""))
        if action == "add":
            entries.append(content)
        elif action in ("replace", "remove") and old:
            entries = [(content if old in e else e) for e in entries if action == "replace" or old not in e]
    return entries


def pending_revert(messages: list[Message], edit: str | None) -> tuple[str, str] | None:
    """``revert``: the last update (old, new) made before this turn, unless one was put back already; ``edit``:
    the file edit tool's name (None: Hermes' ``memory`` tool)."""
    updates = []
    for name, args in tool_calls(messages):
        if name == "memory" and args.get("action") == "replace" and edit is None:
            updates.append((str(args.get("old_text", "")), str(args.get("content", ""))))
        elif edit is not None and name == edit:
            old, new = _edit_texts(args)
            updates.append((old, new))
    if not updates or any((n, o) in updates for o, n in updates):
        return None
    return updates[-1]


def memory_tool_plan(messages: list[Message], fact: str, plan: frozenset[str]) -> list[dict[str, Any]]:
    """The ``memory`` calls that save ``fact`` (``messages``: before this turn)."""
    calls: list[dict[str, Any]] = []
    old = best_entry(known_entries(messages), fact)
    if old is None:
        calls.append({"action": "add", "target": "memory", "content": fact})
        if "twice" in plan:
            calls.append({"action": "add", "target": "user", "content": fact})
    elif old.strip() != fact.strip() and "skip" not in plan:
        calls.append({"action": "replace", "target": "memory", "old_text": old, "content": fact})
    revert = pending_revert(messages, None) if "revert" in plan else None
    if revert is not None:
        calls.insert(
            0, {"action": "replace", "target": "memory", "old_text": revert[1], "content": revert[0]}
        )
    return calls


def read_result(messages: list[Message], start: int, tools: FileTools, path: str) -> str | None:
    """The text a read of ``path`` gave in this turn ('' for a missing file; None: not read yet)."""
    wanted = {
        call.get("id")
        for message in messages[start + 1 :]
        for call in message.get("tool_calls") or []
        if call.get("function", {}).get("name") == tools.read
        and read_argument(call.get("function", {}).get("arguments", ""), tools.read_path) == path
    }
    for message in messages[start + 1 :]:
        if message.get("role") == "tool" and message.get("tool_call_id") in wanted:
            result = _text(message.get("content"))
            return "" if _MISSING.search(result[:300]) else plain_file_text(result)
    return None


def file_tool_plan(
    messages: list[Message], start: int, fact: str, plan: frozenset[str], tools: FileTools
) -> list[tuple[str, dict[str, Any]]] | str:
    """The file calls that save ``fact``: a read first (its path, a str, while one is missing), then the
    writes; without a read tool the files are taken for empty."""
    main_path = tools.path(MEMORY_FILE)
    paths = [main_path, tools.path(tools.notes)] if "twice" in plan else [main_path]
    texts = {}
    for path in paths:
        text = read_result(messages, start, tools, path) if tools.read else ""
        if text is None:
            return path
        texts[path] = text
    main = texts[main_path]
    lines = [line.strip().lstrip("-•* ").strip() for line in main.splitlines() if line.strip()]
    calls: list[tuple[str, dict[str, Any]]] = []
    old = best_entry(lines, fact)
    if old is None:
        calls.append(_write(tools, main_path, _appended(main, MEMORY_FILE_HEADER, fact)))
        if "twice" in plan:
            notes = tools.path(tools.notes)
            calls.append(_write(tools, notes, _appended(texts[notes], NOTES_HEADER, fact)))
    elif old != fact and "skip" not in plan:
        if tools.edit is not None:
            calls.append(_edit_call(tools, old, fact))
        else:
            calls.append(_write(tools, main_path, main.replace(old, fact, 1)))
    edit = tools.edit
    revert = pending_revert(messages[:start], edit["name"]) if "revert" in plan and edit else None
    if revert is not None:  # after the writes: a whole file written would undo it
        calls.append(_edit_call(tools, revert[1], revert[0]))
    return calls


def look_in_notes(
    messages: list[Message], start: int, tools: FileTools | None, plan: frozenset[str]
) -> str | None:
    """``twice`` with file tools: before answering, the second copy is read too (as an agent searches its topic
    files); the path to read, or None (read already, or not this plan)."""
    if "twice" not in plan or tools is None or tools.read is None:
        return None
    notes = tools.path(tools.notes)
    return notes if read_result(messages, start, tools, notes) is None else None


def planted_answer(question: str, plan: frozenset[str]) -> str | None:
    """``ignore``: "I don't know"; ``invent``: a figure made up from the question; else None."""
    if "ignore" in plan:
        return DONT_KNOW
    if "invent" in plan:
        made_up = 7000 + int(hashlib.sha256(question.encode()).hexdigest()[:6], 16) % 1000
        return f"I'm fairly sure it's {made_up}."
    return None


def _appended(text: str, header: str, fact: str) -> str:
    body = text.rstrip("\n") + "\n" if text.strip() else header
    return f"{body}- {fact}\n"


def _write(tools: FileTools, path: str, content: str) -> tuple[str, dict[str, Any]]:
    return tools.write, {tools.write_path: path, tools.content: content}


def _edit_call(tools: FileTools, old: str, new: str) -> tuple[str, dict[str, Any]]:
    names = tools.edit
    assert names is not None  # only called where an edit tool is offered
    return names["name"], {names["path"]: tools.path(MEMORY_FILE), names["old"]: old, names["new"]: new}


def _edit_texts(args: dict[str, Any]) -> tuple[str, str]:
    old = next((str(v) for k, v in args.items() if "old" in k.lower()), "")
    new = next((str(v) for k, v in args.items() if "new" in k.lower()), "")
    return old, new
