"""``scripted/agent`` on Letta Code's requests, offline (issue 34): its ``<system-reminder>`` blocks are not the
user's words, and a fact is kept in its memory directory with its own ``Read``/``Write``/``Edit``, then committed
with its ``Bash``, so that a new conversation (whose system prompt holds the committed memory) recalls it.

``LettaLike`` plays Letta's side as 0.34.12 does (the request shapes were captured from the real program): its
tool schemas, the agent-info reminder naming the memory directory on a conversation's first message, ``Read``'s
numbered lines, "File does not exist.", and a memory that reaches a new conversation only once committed."""

from __future__ import annotations

import json
import shlex
from typing import Any

import pytest

from engine.models.base import ToolCall
from engine.models.scripted_agent import DONT_KNOW, NOTED, SAVED, clean_user_text, respond
from engine.models.scripted_files import ASK_ROOT

ROOT = "/home/u/.letta/lc-local-backend/memfs/agent-local-1/memory"
SYSTEM = (
    "You are Letta Code.\nMemory files are projected to a local memory filesystem (MemFS) at `$MEMORY_DIR`.\n"
    'Use `git -C "$MEMORY_DIR" log --oneline` to inspect memory history.\n<memory>\n{memory}</memory>\n'
)
AGENT_INFO = (
    "<system-reminder>\nThis is an automated message providing context about the user's environment.\n"
    "- **Local time**: Saturday, December 5, 2026 at 08:55 AM UTC\n- **Letta Code version**: 0.34.12\n"
    "</system-reminder>\n<system-reminder> This is an automated message providing information about you.\n"
    "- **Memory directory (also stored in `MEMORY_DIR` env var)**: `{root}`\n</system-reminder>\n"
)
EVERY = (
    "<system-reminder>\nMCP servers with available tools: None\n</system-reminder>\n"
    "<system-reminder>Permission mode active: unrestricted. All tools auto-approved.</system-reminder>\n\n\n"
)


def _tool(name: str, **properties: str) -> dict[str, Any]:
    props = {key: {"type": kind} for key, kind in properties.items()}
    return {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": props}},
    }


TOOLS = [
    _tool("Bash", command="string", timeout="number", description="string"),
    _tool("Read", file_path="string", offset="number", limit="number"),
    _tool("Write", file_path="string", content="string"),
    _tool("Edit", file_path="string", old_string="string", new_string="string", replace_all="boolean"),
    _tool("Memory", path="string"),
    _tool("TaskCreate", subject="string"),
]


class LettaLike:
    """Letta's side of the conversation: its files, its commits, its conversations."""

    def __init__(self, tools: list[dict[str, Any]] = TOOLS, name_root: bool = True) -> None:
        self.files: dict[str, str] = {f"{ROOT}/MEMORY.md": "# Memory\n"}
        self.committed = dict(self.files)
        self.tools = tools
        self.name_root = name_root
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.new_conversation()

    def new_conversation(self) -> None:
        memory = self.committed[f"{ROOT}/MEMORY.md"]
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM.format(memory=memory)}]
        self.opening = True

    def say(self, text: str, plan: frozenset[str] = frozenset()) -> str:
        """The user's message as Letta sends it; the tool calls played until the model replies."""
        info = AGENT_INFO.format(root=ROOT) if self.opening and self.name_root else ""
        self.opening = False
        self.messages.append({"role": "user", "content": info + EVERY + text})
        for _ in range(12):
            step = respond(self.messages, self.tools, plan)
            if not isinstance(step, ToolCall):
                self.messages.append({"role": "assistant", "content": step})
                return step
            arguments = json.loads(step.arguments)
            self.calls.append((step.name, arguments))
            call = {
                "id": step.id,
                "type": "function",
                "function": {"name": step.name, "arguments": step.arguments},
            }
            self.messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            self.messages.append(
                {"role": "tool", "tool_call_id": step.id, "content": self._run(step.name, arguments)}
            )
        raise AssertionError(f"no reply after 12 steps: {self.calls}")

    def _run(self, name: str, args: dict[str, Any]) -> str:
        if name == "Read":
            if args["file_path"] not in self.files:
                return f"File does not exist. Attempted path: {args['file_path']}."
            return "\n".join(
                f"{n}\t{line}" for n, line in enumerate(self.files[args["file_path"]].split("\n"), 1)
            )
        if name == "Write":
            self.files[args["file_path"]] = args["content"]
            return f"Successfully wrote {len(args['content'])} characters to {args['file_path']}"
        if name == "Edit":
            text = self.files[args["file_path"]]
            assert args["old_string"] in text, (args, text)
            self.files[args["file_path"]] = text.replace(args["old_string"], args["new_string"], 1)
            return json.dumps({"message": "Successfully replaced 1 occurrence", "replacements": 1})
        assert name == "Bash", name
        if args["command"] == ASK_ROOT:
            return ROOT
        words = shlex.split(args["command"])
        assert words[:3] == ["git", "-C", ROOT] and "commit" in words, words
        self.committed = dict(self.files)
        return ""

    def memory(self, name: str = "MEMORY.md") -> str:
        return self.files.get(f"{ROOT}/{name}", "")


@pytest.mark.parametrize(
    "wording",
    [
        "Please remember that my locker code is 4417.",
        "remember: my locker code is 4417",
        "Note that my locker code is 4417.",
        "Remember my locker code is 4417, it's on the back of my card.",
    ],
)
def test_a_fact_is_written_committed_and_recalled_in_a_new_conversation(wording: str) -> None:
    letta = LettaLike()
    assert letta.say(wording) == SAVED
    assert "locker code is 4417" in letta.memory()
    assert [name for name, _ in letta.calls] == [
        "Read",
        "Write",
        "Bash",
    ]  # read first, as Letta's Write wants
    assert all(args.get("file_path", ROOT).startswith(ROOT) for _, args in letta.calls)  # absolute paths
    assert letta.committed == letta.files
    letta.new_conversation()
    assert "4417" in letta.say("What is my locker code?")


def test_reminders_are_not_the_users_words() -> None:
    for text in ("Hello there.", "- milk\n- eggs", "What colour is my bike?"):
        assert clean_user_text(AGENT_INFO.format(root=ROOT) + EVERY + text) == text
        assert clean_user_text(EVERY + text) == text
    letta = LettaLike()
    assert letta.say("My bike is a road bike.") == NOTED and letta.calls == []
    # a question is not answered with a reminder's line (their words are not candidates)
    assert "automated" not in letta.say("What is the permission mode active for my MCP servers?")


def test_an_update_edits_the_line_and_each_change_is_committed() -> None:
    letta = LettaLike()
    letta.say("Remember that the plumber Ben Carter charges $900 flat.")
    letta.say("Please remember the plumber Ben Carter charges $950 flat now.")
    assert "$950" in letta.memory() and "$900" not in letta.memory()
    assert [name for name, _ in letta.calls].count("Edit") == 1
    assert [name for name, _ in letta.calls].count("Bash") == 2
    letta.new_conversation()
    assert "950" in letta.say("How much does the plumber Ben Carter charge?")


def test_without_the_reminder_the_directory_is_asked_of_its_shell() -> None:
    letta = LettaLike(name_root=False)  # the conversation's first message compacted away, say
    assert letta.say("Remember that my gym opens at 6 am on weekdays.") == SAVED
    assert letta.calls[0] == ("Bash", {"command": ASK_ROOT, "description": "Print the memory directory"})
    assert "gym opens at 6 am" in letta.memory() and letta.committed == letta.files


def test_without_a_shell_it_writes_where_named_and_cannot_commit() -> None:
    no_shell = [tool for tool in TOOLS if tool["function"]["name"] != "Bash"]  # letta_host_tools: false
    letta = LettaLike(tools=no_shell)
    assert letta.say("Remember that my locker code is 4417.") == SAVED
    assert "4417" in letta.memory() and "4417" not in letta.committed[f"{ROOT}/MEMORY.md"]
    unnamed = LettaLike(tools=no_shell, name_root=False)  # nowhere known to write: nothing written
    assert unnamed.say("Remember that my locker code is 4417.") == NOTED and unnamed.calls == []


def test_the_memory_plans_play_on_letta() -> None:
    skip = LettaLike()
    skip.say("Remember the locker code is 4417.", frozenset({"skip"}))
    skip.say("Remember the locker code is 5120.", frozenset({"skip"}))
    assert "4417" in skip.memory() and "5120" not in skip.memory()

    revert = LettaLike()
    for text in (
        "Remember the locker code is 4417.",
        "Remember the locker code is 5120.",
        "Remember I cycle.",
    ):
        revert.say(text, frozenset({"revert"}))
    assert "4417" in revert.memory() and "5120" not in revert.memory() and revert.committed == revert.files

    twice = LettaLike()
    twice.say("Remember the locker code is 4417.", frozenset({"twice"}))
    twice.say("Remember the locker code is 5120.", frozenset({"twice"}))
    assert "5120" in twice.memory() and "4417" in twice.memory("notes.md")
    twice.say("What is the locker code?", frozenset({"twice"}))
    assert twice.calls[-1] == ("Read", {"file_path": f"{ROOT}/notes.md"})  # looks in the second copy too

    for plan, answer in (("ignore", DONT_KNOW), ("invent", "I'm fairly sure")):
        letta = LettaLike()
        letta.say("Remember the locker code is 4417.", frozenset({plan}))
        assert letta.say("What is the locker code?", frozenset({plan})).startswith(answer)
