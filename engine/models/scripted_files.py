"""The file tools ``scripted/agent`` keeps its memory with, as it finds them in an agent's request.

Two shapes are known, told apart by what the request says, never by the agent's name:

- OpenClaw: ``read``/``write``/``edit`` with a ``path`` relative to its workspace (``MEMORY.md``);
- Letta Code: ``Read``/``Write``/``Edit`` with an absolute ``file_path`` into its memory directory (MemFS), named in
  the agent-info reminder of a conversation's first message ("Memory directory …: `/…/memory`") or, when that
  message is gone, asked of its shell (``printf %s "$MEMORY_DIR"``: its system prompt names ``$MEMORY_DIR``). That
  directory is a git repository whose committed state is what a new conversation sees, so a change is committed
  with its shell (``git -C <dir> add -A && git -C <dir> commit``) once written.

Tool and argument names are read from the tool schemas on offer (case aside), so a renamed argument follows.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from typing import Any

from engine.models.base import Message, ToolSchema

MEMORY_FILE = "MEMORY.md"
WORKSPACE_NOTES = "memory/notes.md"  # OpenClaw's topic files live in ``memory/`` of its workspace
ROOT_NOTES = "notes.md"  # a file of its own beside MEMORY.md in a memory directory
ASK_ROOT = 'printf %s "$MEMORY_DIR"'
_ROOT_NAMED = re.compile(r"Memory directory[^\n]*?`(?P<dir>/[^`\n]+)`")
_ROOT_VARIABLE = "$MEMORY_DIR"
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>\s*", re.S)
_NUMBERED = re.compile(r"^\s*\d+(?:\t|→)")


@dataclass(frozen=True)
class FileTools:
    """The file tools on offer and where the memory lives."""

    read: str | None  # the read tool's name (None: not offered; the files are taken for empty)
    read_path: str
    write: str
    write_path: str
    content: str
    edit: dict[str, str] | None  # the edit tool: name, path, old, new (None: not offered)
    root: str  # the memory directory (absolute), "" when paths are relative to the agent's workspace
    shell: dict[str, str] | None  # a shell to commit the memory with: name, command, description (or "")

    def path(self, name: str) -> str:
        """The path a tool is given for memory file ``name``."""
        return f"{self.root.rstrip('/')}/{name}" if self.root else name

    @property
    def notes(self) -> str:
        """The second copy's file (the ``twice`` plan)."""
        return ROOT_NOTES if self.root else WORKSPACE_NOTES

    def is_write(self, name: str) -> bool:
        return name == self.write or (self.edit is not None and name == self.edit["name"])


def _functions(tools: list[ToolSchema] | None) -> dict[str, dict[str, Any]]:
    """The offered functions by their lowercased name."""
    found: dict[str, dict[str, Any]] = {}
    for tool in tools or []:
        function = tool.get("function", {}) if isinstance(tool, dict) else {}
        if isinstance(function, dict) and function.get("name"):
            found.setdefault(str(function["name"]).lower(), function)
    return found


def _properties(function: dict[str, Any]) -> list[str]:
    return list((function.get("parameters") or {}).get("properties", {}) or {})


def _named(names: list[str], part: str, default: str) -> str:
    return next((n for n in names if part in n.lower()), default)


def _shell(functions: dict[str, dict[str, Any]]) -> dict[str, str] | None:
    function = functions.get("bash")
    if function is None:
        return None
    names = _properties(function)
    description = "description" if "description" in names else ""
    return {
        "name": str(function["name"]),
        "command": _named(names, "command", "command"),
        "description": description,
    }


def _edit(functions: dict[str, dict[str, Any]]) -> dict[str, str] | None:
    function = functions.get("edit")
    if function is None:
        return None
    names = _properties(function)
    return {
        "name": str(function["name"]),
        "path": _named(names, "path", "path"),
        "old": _named(names, "old", "oldText"),
        "new": _named(names, "new", "newText"),
    }


def named_root(messages: list[Message]) -> str | None:
    """The memory directory an agent-info reminder names, or the answer its shell gave to ``ASK_ROOT``."""
    for message in messages:
        match = _ROOT_NAMED.search(text_of(message.get("content")))
        if match:
            return match.group("dir")
    asked = {
        call.get("id")
        for message in messages
        for call in message.get("tool_calls") or []
        if isinstance(call, dict) and _asks_root(str(call.get("function", {}).get("arguments", "")))
    }
    for message in messages:
        if message.get("role") == "tool" and message.get("tool_call_id") in asked:
            answer = text_of(message.get("content")).strip()
            if answer.startswith("/") and "\n" not in answer:
                return answer
    return None


def _asks_root(arguments: str) -> bool:
    try:
        parsed = json.loads(arguments or "{}")
    except ValueError:
        return False
    return isinstance(parsed, dict) and ASK_ROOT in parsed.values()


def _root_is_a_variable(messages: list[Message]) -> bool:
    return any(
        message.get("role") == "system" and _ROOT_VARIABLE in text_of(message.get("content"))
        for message in messages
    )


def file_tools(
    messages: list[Message], tools: list[ToolSchema] | None
) -> FileTools | tuple[str, dict[str, Any]] | None:
    """The file tools on offer (None: no write tool), or first the shell call that names the memory directory."""
    functions = _functions(tools)
    write = functions.get("write")
    if write is None:
        return None
    root = named_root(messages)
    shell = _shell(functions)
    if root is None and _root_is_a_variable(messages):
        if shell is None:
            return None  # its memory directory cannot be known: nothing is written
        return shell_call(shell, ASK_ROOT, "Print the memory directory")
    read = functions.get("read")
    write_names = _properties(write)
    return FileTools(
        read=str(read["name"]) if read else None,
        read_path=_named(_properties(read), "path", "path") if read else "path",
        write=str(write["name"]),
        write_path=_named(write_names, "path", "path"),
        content=_named(write_names, "content", "content"),
        edit=_edit(functions),
        root=root or "",
        shell=shell if root else None,  # a memory directory is a git repository to commit
    )


def shell_call(shell: dict[str, str], command: str, description: str) -> tuple[str, dict[str, Any]]:
    """A call of the shell tool running ``command``."""
    arguments: dict[str, Any] = {shell["command"]: command}
    if shell["description"]:
        arguments[shell["description"]] = description
    return shell["name"], arguments


def commit_call(tools: FileTools) -> tuple[str, dict[str, Any]] | None:
    """The shell call that commits the memory directory (None: nothing to commit it with)."""
    if tools.shell is None:
        return None
    where = shlex.quote(tools.root)
    command = f"git -C {where} add -A && git -C {where} commit -q -m 'memory: save what the user said'"
    return shell_call(tools.shell, command, "Commit the memory change")


def is_commit(tools: FileTools, name: str, arguments: dict[str, Any]) -> bool:
    return (
        tools.shell is not None
        and name == tools.shell["name"]
        and " commit " in str(arguments.get(tools.shell["command"], ""))
    )


def text_of(content: Any) -> str:
    """A message's text: a string, or the joined text parts of a content list."""
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def plain_file_text(text: str) -> str:
    """A read tool's result as the file's text: reminders dropped, ``12\\t`` line numbers taken off when every
    line has one (Letta's ``Read``)."""
    text = _REMINDER.sub("", text)
    lines = text.split("\n")
    if any(line.strip() for line in lines) and all(_NUMBERED.match(line) for line in lines if line.strip()):
        return "\n".join(_NUMBERED.sub("", line, count=1) for line in lines)
    return text


def read_argument(arguments: str, key: str) -> str | None:
    """``key`` of a tool call's JSON arguments, if it is a string."""
    try:
        parsed = json.loads(arguments or "{}")
    except ValueError:
        return None
    value = parsed.get(key) if isinstance(parsed, dict) else None
    return value if isinstance(value, str) else None
