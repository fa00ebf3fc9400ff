"""The letta adapter's readings of Letta Code's own records, offline: its store (``adapters/letta/store.py``), its
tool calls as actions (``adapters/letta/actions.py``) and one call's command line and result
(``adapters/letta/call.py``). The shapes are Letta Code 0.34.12's, as ``tests/agents/test_letta.py`` sees them live.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from adapters.base import AdapterError
from adapters.letta.actions import actions_after
from adapters.letta.call import Whereabouts, call_result, context_tokens, fit, last_result, provider_json
from adapters.letta.model import alias_of
from adapters.letta.store import (
    CONVERSATIONS,
    MEMFS,
    agent_ids,
    compactions,
    conversations,
    entries,
    memory_files,
    session_of,
)
from adapters.local.files.safe_files import AgentFolder

AGENT = "agent-local-1234"
MEMORY = Path("/runs/r/agent/home/.letta/lc-local-backend/memfs") / AGENT / "memory"
REMINDERS = [
    "<system-reminder>\nMCP servers with available tools: None\n</system-reminder>",
    "<system-reminder>Permission mode active: unrestricted. All tools auto-approved.</system-reminder>\n\n",
]


def user(text: str, entry: str = "u") -> dict[str, Any]:
    parts = [{"type": "text", "text": reminder} for reminder in REMINDERS] + [{"type": "text", "text": text}]
    return {"type": "message", "id": entry, "message": {"role": "user", "content": parts}}


def reply(text: str, entry: str = "a") -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry,
        "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
    }


def call(name: str, arguments: dict[str, Any], ident: str, entry: str) -> dict[str, Any]:
    part = {"type": "toolCall", "id": ident, "name": name, "arguments": arguments}
    return {"type": "message", "id": entry, "message": {"role": "assistant", "content": [part]}}


def result(ident: str, name: str, text: str, entry: str, error: bool = False) -> dict[str, Any]:
    message = {
        "role": "toolResult",
        "toolCallId": ident,
        "toolName": name,
        "isError": error,
        "content": [{"type": "text", "text": text}],
    }
    return {"type": "message", "id": entry, "message": message}


# --- the store ------------------------------------------------------------------------------------


def test_the_session_is_the_users_words_and_the_final_replies() -> None:
    found = [
        {"type": "session", "id": "local-conv-1"},
        user("My locker code is 4417.", "1"),
        reply("Noted.", "2"),
        user("Where do I live? ", "3"),
        call("Memory", {"path": "places"}, "c1", "4"),
        result("c1", "Memory", "Leeds", "5"),
        reply("You live in Leeds.", "6"),
        user("  - milk\n- eggs  ", "7"),
        {"type": "message", "id": "8", "message": "not a message"},
    ]
    assert session_of(found) == [
        ("user", "My locker code is 4417."),
        ("assistant", "Noted."),
        ("user", "Where do I live?"),
        ("assistant", "You live in Leeds."),
        ("user", "- milk\n- eggs"),
    ]


def test_compactions_carry_tokens_before_and_after() -> None:
    stats = {
        "trigger": "context_window_pressure",
        "context_tokens_before": 101_200,
        "context_tokens_after": 40_800,
        "messages_count_before": 88,
        "messages_count_after": 9,
    }
    found = [
        user("Hello.", "1"),
        {"type": "compaction", "id": "9", "tokensBefore": 101_200, "details": {"stats": stats}},
        {"type": "compaction", "id": "10", "tokensBefore": "many"},
    ]
    assert compactions(found) == [
        ("9", 101_200, 40_800, "trigger context_window_pressure: messages 88->9"),
        ("10", None, None, "trigger ?"),
    ]


def _store(root: Path) -> AgentFolder:
    store = root / "home" / ".letta" / "lc-local-backend"
    (store / "agents").mkdir(parents=True)
    (store / "agents" / "YWdlbnQ.json").write_text(json.dumps({"id": AGENT, "model": "openai-compatible/m"}))
    for folder, ident, made in (("b", "local-conv-2", "2031-01-02"), ("a", "local-conv-1", "2031-01-01")):
        where = root / CONVERSATIONS / folder
        where.mkdir(parents=True)
        (where / "conversation.json").write_text(
            json.dumps({"id": ident, "agent_id": AGENT, "created_at": made})
        )
    default = root / CONVERSATIONS / "d"
    default.mkdir()
    (default / "conversation.json").write_text(json.dumps({"id": "default", "agent_id": AGENT}))
    return AgentFolder(root)


def test_the_store_lists_its_agent_and_conversations_oldest_first(tmp_path: Path) -> None:
    folder = _store(tmp_path)
    assert agent_ids(folder) == [AGENT]
    found = conversations(folder, AGENT)
    assert [c.id for c in found] == ["local-conv-1", "local-conv-2"]  # never its "default" one
    assert conversations(folder, "agent-local-other") == []
    lines = [
        json.dumps(user("Hi.", "1")),
        '{"type": "message", "id": "2", "mess',
    ]  # a write cut short by a kill
    (tmp_path / found[0].transcript).write_text("\n".join(lines))
    assert [e["id"] for e in entries(folder, found[0])] == ["1"]


def test_a_link_planted_in_the_store_is_refused(tmp_path: Path) -> None:
    folder = _store(tmp_path)
    outside = tmp_path / "host-file"
    outside.write_text(json.dumps(user("not the agent's", "1")))
    first = conversations(folder, AGENT)[0]
    os.symlink(outside, tmp_path / first.transcript)
    with pytest.raises(AdapterError, match="symbolic link"):
        entries(folder, first)


def test_the_memory_is_the_working_tree_without_git(tmp_path: Path) -> None:
    folder = _store(tmp_path)
    memory = tmp_path / MEMFS / AGENT / "memory"
    for name in (
        "MEMORY.md",
        "system/human.md",
        "projects/bike/parts.md",
        ".git/config",
        ".git/objects/ab/cd",
    ):
        (memory / name).parent.mkdir(parents=True, exist_ok=True)
        (memory / name).write_text("x")
    os.symlink("/etc/passwd", memory / "planted.md")
    names = [name for _, name in memory_files(folder, AGENT)]
    assert names == [
        "MEMORY.md",
        "planted.md",
        "projects/bike/parts.md",
        "system/human.md",
    ]  # a link: refused on read
    assert memory_files(folder, "") == [] and memory_files(folder, "agent-local-none") == []


# --- its tool calls as actions ----------------------------------------------------------------------


def test_writes_and_reads_of_its_memfs_are_memory_actions() -> None:
    found = [
        user("Remember my locker.", "1"),
        call(
            "Write",
            {"file_path": str(MEMORY / "MEMORY.md"), "content": "# Memory\n- locker 212\n"},
            "c1",
            "2",
        ),
        result("c1", "Write", "Successfully wrote", "3"),
        call(
            "Edit",
            {"file_path": str(MEMORY / "system/human.md"), "old_string": "212", "new_string": "305"},
            "c2",
            "4",
        ),
        result("c2", "Edit", "old_string not found", "5", error=True),
        call("Read", {"file_path": str(MEMORY / "MEMORY.md")}, "c3", "6"),
        result("c3", "Read", "# Memory", "7"),
        call("Memory", {"path": "projects"}, "c4", "8"),
        call("Write", {"file_path": "/tmp/notes.txt", "content": "x"}, "c5", "9"),
        call("Read", {"file_path": "/etc/hostname"}, "c6", "10"),
        call(
            "Bash",
            {"command": "cd $MEMORY_DIR && git commit -am 'locker'", "description": "commit"},
            "c7",
            "11",
        ),
        call("Grep", {"pattern": "locker"}, "c8", "12"),
        call("TaskCreate", {"subject": "call the gym"}, "c9", "13"),
        reply("Saved.", "14"),
    ]
    done, last = actions_after(found, "", MEMORY)
    assert [(a.tool, a.kind, a.target) for a in done] == [
        ("Write", "memory write", "MEMORY.md"),
        ("Edit", "memory write", "system/human.md"),
        ("Read", "memory read", "MEMORY.md"),
        ("Memory", "memory read", "projects"),
        ("Write", "file write", "/tmp/notes.txt"),
        ("Read", "file read", "/etc/hostname"),
        ("Bash", "command", ""),
        ("Grep", "search", ""),
        ("TaskCreate", "other", ""),
    ]
    assert last == "14"
    assert "locker 212" in done[0].summary and done[0].error == ""
    assert done[1].summary == 'replace "212" → "305"' and done[1].error == "old_string not found"
    assert "git commit" in done[6].summary and "call the gym" in done[8].summary


def test_actions_are_read_once_from_where_the_last_look_stopped() -> None:
    found = [user("Hi.", "1"), call("Bash", {"command": "ls"}, "c1", "2"), result("c1", "Bash", "", "3")]
    first, last = actions_after(found, "", MEMORY)
    assert [a.summary for a in first] == ["ls"] and last == "3"
    assert actions_after(found, last, MEMORY) == ([], "3")
    found += [user("Again.", "4"), call("Bash", {"command": "pwd"}, "c2", "5")]
    again, last = actions_after(found, last, MEMORY)
    assert [a.summary for a in again] == ["pwd"] and last == "5"
    rewritten = found[3:]  # Letta rewrote its transcript: the entry looked at last is gone
    assert [a.summary for a in actions_after(rewritten, "3", MEMORY)[0]] == ["pwd"]
    stringified = call("Write", {"file_path": str(MEMORY / "a.md")}, "c3", "6")
    stringified["message"]["content"][0]["arguments"] = json.dumps({"file_path": str(MEMORY / "a.md")})
    assert actions_after([stringified], "", MEMORY)[0][0].target == "a.md"


# --- one call -------------------------------------------------------------------------------------------


def test_a_calls_result_is_found_among_its_warnings() -> None:
    printed = (
        "(node:7) ExperimentalWarning: SQLite is an experimental feature\n"
        + json.dumps(
            {"type": "result", "subtype": "success", "result": "Noted.", "usage": {"context_tokens": 24_054}},
            indent=2,
        )
        + "\n(node:7) Warning: {not json\n"
    )
    found = call_result(printed, "exited with code 0")
    assert found["result"] == "Noted." and context_tokens(found) == 24_054
    assert last_result('{"type": "system"}\n{"type": "result", "result": "b"}\n') == {
        "type": "result",
        "result": "b",
    }
    assert context_tokens({"usage": {"context_tokens": 0}}) is None and context_tokens({}) is None


@pytest.mark.parametrize(
    ("printed", "said"),
    [
        ('Error: {\n  "error": {"message": "Unknown model"}\n}\n', "without a result:\nError: {"),
        ("", "without a result"),
        (
            json.dumps({"type": "result", "subtype": "error", "is_error": True, "result": "rate limited"}),
            "failed: rate limited",
        ),
        (
            json.dumps({"type": "result", "subtype": "error_max_turns", "result": "too many turns"}),
            "failed: too many turns",
        ),
    ],
)
def test_a_call_without_a_good_result_is_an_error_saying_why(printed: str, said: str) -> None:
    with pytest.raises(AdapterError, match="letta: its call") as failed:
        call_result(printed, "exited with code 1")
    assert said in str(failed.value)


def test_where_a_message_goes() -> None:
    where = Whereabouts()
    assert where.opens and where.selection("scripted/agent") == [
        "--new-agent",
        "-m",
        "openai-compatible/scripted/agent",
    ]
    where.took({"agent_id": AGENT, "conversation_id": "local-conv-1"})
    assert not where.opens and where.selection("m") == ["--conversation", "local-conv-1"]
    where.pending_new = True
    assert where.opens and where.selection("m") == ["--agent", AGENT, "--new"]
    where.took({"agent_id": AGENT, "conversation_id": "local-conv-2"})
    assert where.known == ["local-conv-1", "local-conv-2"] and not where.pending_new
    where.actions = ("local-conv-2", "e9")
    assert Whereabouts.restore(json.loads(json.dumps(where.export()))) == where
    assert (
        Whereabouts.restore(None) == Whereabouts() and Whereabouts.restore({"actions": [1]}) == Whereabouts()
    )


def test_a_message_fits_one_command_line_argument() -> None:
    assert fit("short") == "short"
    long = "é" * 100_000  # 200,000 bytes
    cut = fit(long)
    assert len(cut.encode("utf-8")) <= 120_000 and long.startswith(cut)


def test_the_provider_file_and_the_scripted_alias() -> None:
    provider = json.loads(provider_json("http://127.0.0.1:9/v1", "sk-1"))["providers"]["openai-compatible"]
    assert provider["base_url"] == "http://127.0.0.1:9/v1" and provider["auth"] == {
        "type": "api",
        "key": "sk-1",
    }
    assert alias_of("scripted/agent?faults=1:hang") == alias_of("scripted/agent?faults=1:hang")
    assert alias_of("scripted/agent?faults=1:hang") != alias_of("scripted/agent?faults=2:hang")
    assert "?" not in alias_of("scripted/agent?plan=save") and "/" not in alias_of("scripted/agent?plan=save")
