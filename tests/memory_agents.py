"""In-process agents whose memory is files, for the memory autopsy's whole runs offline (issue 33).

Named in test configs as ``memory_agents:NotebookAgent`` or ``memory_agents:WorkspaceAgent``. Both are driven
by ``scripted/agent`` (their run key ``model``, a plan included: ``scripted/agent?plan=save,twice``) through a
tool loop, as a real agent is, and keep their memory in files of ``run_dir/agent``:

- ``NotebookAgent`` the way Hermes does: a ``memory`` tool (``add``/``replace``/``remove`` an entry of
  ``memories/MEMORY.md`` or ``USER.md``, entries separated by a ``§`` line), the memory frozen into a session's
  context when it starts (a write shows in the next session);
- ``WorkspaceAgent`` the way OpenClaw does: ``read``/``write``/``edit`` of files in its workspace (``MEMORY.md``,
  ``memory/*.md``), its ``MEMORY.md`` in the context of a session when it starts.

Both expose ``memory_files`` and ``agent_actions`` (every tool call, as the real adapters read them from the
agents' own records). ``CompactingNotebookAgent`` reports a compaction every third message; ``MemorylessAgent``
exposes neither memory files nor actions.
"""

from __future__ import annotations

import json
import shutil
from typing import Any, ClassVar

from adapters.base import AdapterContext, AgentAdapter, AgentMessage, AgentStatus, Observation
from engine.agents import AgentAction
from engine.models.base import Message, ToolCall, ToolSchema

ENTRY = "\n§\n"
STEPS = 8  # model calls per message at most (tool calls and the reply)


def _tool(name: str, properties: dict[str, Any]) -> ToolSchema:
    schema = {"type": "object", "properties": {k: {"type": "string"} for k in properties}}
    return {"type": "function", "function": {"name": name, "description": name, "parameters": schema}}


class NotebookAgent(AgentAdapter):
    """Hermes' way: a ``memory`` tool over ``memories/MEMORY.md`` and ``USER.md``."""

    name: ClassVar[str] = "notebook"
    supports_new_conversation: ClassVar[bool] = True
    tools: ClassVar[list[ToolSchema]] = [
        _tool("memory", {"action": 1, "target": 1, "content": 1, "old_text": 1})
    ]

    def __init__(self, ctx: AdapterContext) -> None:
        super().__init__(ctx)
        options = dict(ctx.options)
        self.model_name = str(options.pop("model", "scripted/agent"))
        if options:
            raise ValueError(f"unknown key {sorted(options)[0]!r} for agent {self.name}")
        self.model = ctx.make_model(self.model_name)
        self.home = ctx.run_dir / "agent"
        self.context: list[Message] = []
        self.frozen = ""  # the memory as the session started
        self.replies: list[AgentMessage] = []
        self.seq = 0
        self.pending: list[AgentAction] = []

    # --- the engine's interface -------------------------------------------------------------------

    async def create_session(self, name: str) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        self.frozen = self.memory_block()

    async def send_message(self, text: str) -> None:
        self.context.append({"role": "user", "content": text})
        reply = "(no reply)"
        for _ in range(STEPS):
            system: Message = {"role": "system", "content": f"You are a helpful assistant.\n\n{self.frozen}"}
            completion = await self.model.complete([system, *self.context], self.tools)
            if not completion.tool_calls:
                reply = completion.content or ""
                break
            self.context.append(completion.as_message())
            for call in completion.tool_calls:
                result = self.run_tool(call)
                self.context.append({"role": "tool", "tool_call_id": call.id, "content": result})
        self.context.append({"role": "assistant", "content": reply})
        self.seq += 1
        self.replies.append(AgentMessage(seq=self.seq, text=reply, time=self.ctx.clock.iso()))

    async def get_responses(self, after_seq: int) -> list[AgentMessage]:
        return [m for m in self.replies if m.seq > after_seq]

    async def get_status(self) -> AgentStatus:
        return AgentStatus(state="sleeping")

    async def destroy_session(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)
        self.context, self.frozen = [], ""

    async def start_new_conversation(self) -> None:
        self.context = []
        self.frozen = self.memory_block()

    def memory_files(self) -> dict[str, bytes] | None:
        folder = self.home / "memories"
        return {p.name: p.read_bytes() for p in sorted(folder.glob("*.md"))} if folder.is_dir() else {}

    async def agent_actions(self) -> list[AgentAction] | None:
        found, self.pending = self.pending, []
        return found

    def export_state(self) -> dict[str, Any]:
        return {"seq": self.seq}

    def import_state(self, data: dict[str, Any]) -> None:
        self.seq = int(data.get("seq", 0))

    # --- its memory -------------------------------------------------------------------------------

    def memory_block(self) -> str:
        """The memory as a session's context shows it."""
        parts = []
        for name in ("MEMORY.md", "USER.md"):
            path = self.home / "memories" / name
            if path.is_file() and path.read_text().strip():
                parts.append(f"MEMORY ({name}):\n" + path.read_text())
        return "\n\n".join(parts)

    def run_tool(self, call: ToolCall) -> str:
        args = json.loads(call.arguments or "{}")
        name = "USER.md" if args.get("target") == "user" else "MEMORY.md"
        path = self.home / "memories" / name
        entries = [e.strip() for e in path.read_text().split(ENTRY) if e.strip()] if path.is_file() else []
        action, content, old = args.get("action"), str(args.get("content", "")), str(args.get("old_text", ""))
        summary, error = f"{action}: {content}", ""
        if action == "add":
            entries.append(content)
        elif action in ("replace", "remove"):
            found = [i for i, entry in enumerate(entries) if old and old in entry]
            if len(found) != 1:
                error = f"no single entry holds {old!r}"
            elif action == "replace":
                entries[found[0]] = content
                summary = f"replace: {old!r} → {content!r}"
            else:
                del entries[found[0]]
                summary = f"remove: {old!r}"
        else:
            error = f"unknown action {action!r}"
        if not error:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(ENTRY.join(entries))  # as Hermes writes it: no newline at the end
        self.pending.append(
            AgentAction(tool="memory", kind="memory write", target=name, summary=summary, error=error)
        )
        return json.dumps({"success": not error, "error": error} if error else {"success": True})


class WorkspaceAgent(NotebookAgent):
    """OpenClaw's way: ``read``, ``write`` and ``edit`` of files in its workspace."""

    name: ClassVar[str] = "workspace"
    tools: ClassVar[list[ToolSchema]] = [
        _tool("read", {"path": 1}),
        _tool("write", {"path": 1, "content": 1}),
        _tool("edit", {"path": 1, "oldText": 1, "newText": 1}),
    ]

    def memory_files(self) -> dict[str, bytes] | None:
        workspace = self.home / "workspace"
        files = [workspace / "MEMORY.md", *sorted((workspace / "memory").glob("*.md"))]
        return {p.relative_to(workspace).as_posix(): p.read_bytes() for p in files if p.is_file()}

    def memory_block(self) -> str:
        path = self.home / "workspace" / "MEMORY.md"
        return f"MEMORY.md:\n{path.read_text()}" if path.is_file() else ""

    def run_tool(self, call: ToolCall) -> str:
        args = json.loads(call.arguments or "{}")
        relative = str(args.get("path", "")).lstrip("/")
        path = self.home / "workspace" / relative
        if call.name == "read":
            self.pending.append(AgentAction(tool="read", kind="memory read", target=relative))
            return path.read_text() if path.is_file() else f"ENOENT: no such file {relative}"
        if call.name == "write":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(str(args.get("content", "")))
            summary = f"wrote {len(str(args.get('content', '')))} characters"
        else:
            text = path.read_text() if path.is_file() else ""
            old, new = str(args.get("oldText", "")), str(args.get("newText", ""))
            if not old or old not in text:
                self.pending.append(
                    AgentAction(tool="edit", kind="memory write", target=relative, error="not found")
                )
                return "Error: oldText not found"
            path.write_text(text.replace(old, new, 1))
            summary = f"edit {old!r} → {new!r}"
        self.pending.append(
            AgentAction(tool=call.name, kind="memory write", target=relative, summary=summary)
        )
        return "ok"


class CompactingNotebookAgent(NotebookAgent):
    """A ``NotebookAgent`` that reports a compaction of its context every third message."""

    name: ClassVar[str] = "compacting-notebook"

    def __init__(self, ctx: AdapterContext) -> None:
        super().__init__(ctx)
        self.compacted_at = 0  # the reply after which it last compacted

    async def get_status(self) -> AgentStatus:
        if self.seq and self.seq % 3 == 0 and self.seq != self.compacted_at:
            self.compacted_at = self.seq
            return AgentStatus(
                state="sleeping", observations=[Observation(tokens_before=900, tokens_after=100)]
            )
        return AgentStatus(state="sleeping")


class MemorylessAgent(NotebookAgent):
    """Files it keeps but does not expose: no memory access, no actions."""

    name: ClassVar[str] = "memoryless"

    def memory_files(self) -> dict[str, bytes] | None:
        return None

    async def agent_actions(self) -> list[AgentAction] | None:
        return None
