"""The agent's own actions read from its own records (issue 33), offline: Hermes' session store as its API
gives it, OpenClaw's SQLite transcript (read from a copy taken without following a link), each with a cursor
that a resume restores, and the memory files a history reads (regular files only)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from adapters.hermes.actions import actions_of
from adapters.local.files.memory_read import read_memory
from adapters.local.files.safe_files import AgentFolder, UnsafePath
from adapters.openclaw.actions import ActionReader, memory_name


def _hermes_call(number: int, name: str, args: dict[str, object], call_id: str) -> dict[str, object]:
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
    return {"id": number, "role": "assistant", "content": "", "tool_calls": [call]}


def _hermes_result(number: int, call_id: str, result: dict[str, object]) -> dict[str, object]:
    return {"id": number, "role": "tool", "tool_call_id": call_id, "content": json.dumps(result)}


STORE = [
    {"id": 1, "role": "user", "content": "Please remember that my locker code is 4417."},
    _hermes_call(2, "memory", {"action": "add", "target": "memory", "content": "locker 4417"}, "a"),
    _hermes_result(3, "a", {"success": True}),
    _hermes_call(4, "memory", {"action": "replace", "target": "user", "old_text": "x", "content": "y"}, "b"),
    _hermes_result(5, "b", {"success": False, "error": "No entry matched 'x'."}),
    _hermes_call(6, "terminal", {"command": "cat ~/memories/MEMORY.md"}, "c"),
    _hermes_call(7, "write_file", {"path": "/home/h/memories/USER.md", "content": "z"}, "d"),
    _hermes_call(8, "session_search", {"query": "locker"}, "e"),
    _hermes_call(9, "todo", {"todos": []}, "f"),
    {"id": 10, "role": "assistant", "content": "Saved."},
]


def test_hermes_tool_calls_become_actions_with_their_memory_file_and_failure() -> None:
    found, cursor = actions_of(STORE, 0)
    assert cursor == 10
    shown = [(a.tool, a.kind, a.target, a.summary, a.error) for a in found]
    assert shown == [
        ("memory", "memory write", "MEMORY.md", "add: locker 4417", ""),
        ("memory", "memory write", "USER.md", "replace: 'x' → 'y'", "No entry matched 'x'."),
        ("terminal", "command", "", "cat ~/memories/MEMORY.md", ""),
        ("write_file", "memory write", "USER.md", "write_file", ""),
        ("session_search", "search", "", "locker", ""),
        ("todo", "other", "", '{"todos": []}', ""),
    ]


def test_hermes_actions_after_the_cursor_only() -> None:
    found, cursor = actions_of(STORE, 5)  # a resume restored the cursor of its checkpoint
    assert [a.tool for a in found] == ["terminal", "write_file", "session_search", "todo"] and cursor == 10
    assert actions_of(STORE, 10) == ([], 10)


def _transcript(path: Path, rows: list[tuple[str, int, dict[str, object]]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE IF NOT EXISTS transcript_events (session_id TEXT, seq INTEGER, event_json TEXT, "
            "created_at INTEGER, event_zstd BLOB, navigation_json TEXT)"
        )
        (count,) = db.execute("SELECT count(*) FROM transcript_events").fetchone()
        for at, (session, seq, message) in enumerate(rows, start=count):  # stored in the order written
            event = json.dumps({"type": "message", "message": message})
            db.execute(
                "INSERT INTO transcript_events VALUES (?, ?, ?, ?, NULL, NULL)", (session, seq, event, at)
            )


def _call(call_id: str, name: str, **args: object) -> dict[str, object]:
    return {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": call_id, "name": name, "arguments": args}],
    }


def _result(call_id: str, error: str = "") -> dict[str, object]:
    details = {"status": "error", "error": error} if error else {"changed": True}
    return {"role": "toolResult", "toolCallId": call_id, "isError": bool(error), "details": details}


DB = Path("home/state/agents/main/agent/openclaw-agent.sqlite")


def test_openclaw_tool_calls_become_actions_read_once_each(tmp_path: Path) -> None:
    folder = AgentFolder(tmp_path / "agent")
    db = folder.root / DB
    _transcript(
        db,
        [
            ("s1", 4, {"role": "user", "content": "Please remember that my locker code is 4417."}),
            ("s1", 5, _call("c1", "read", path="MEMORY.md")),
            ("s1", 6, _result("c1", error="File not found: /w/workspace/MEMORY.md.")),
            ("s1", 7, _call("c2", "write", path="/x/home/workspace/MEMORY.md", content="- locker 4417\n")),
            ("s1", 8, _result("c2")),
            ("s1", 9, _call("c3", "edit", path="memory/notes.md", oldText="4417", newText="5820")),
            ("s1", 10, _call("c4", "exec", command="ls -la")),
            ("s1", 11, _call("c5", "write", path="notes/todo.txt", content="x")),
        ],
    )
    reader = ActionReader(folder, DB)
    shown = [(a.tool, a.kind, a.target, a.summary, a.error) for a in reader.new_actions()]
    assert shown == [
        ("read", "memory read", "MEMORY.md", "", "File not found: /w/workspace/MEMORY.md."),
        ("write", "memory write", "MEMORY.md", "wrote 14 characters", ""),
        ("edit", "memory write", "memory/notes.md", "edit: '4417' → '5820'", ""),
        ("exec", "command", "", "ls -la", ""),
        ("write", "file write", "notes/todo.txt", "wrote 1 characters", ""),
    ]
    assert reader.new_actions() == []
    _transcript(db, [("s2", 1, _call("c6", "read", path="memory/2026-03-01.md"))])  # a new session
    assert [(a.target, a.kind) for a in reader.new_actions()] == [("memory/2026-03-01.md", "memory read")]
    resumed = ActionReader(folder, DB)
    resumed.seen = {"s1": 8}  # a resume: the cursor of its checkpoint
    assert [a.tool for a in resumed.new_actions()] == ["edit", "exec", "write", "read"]


def test_a_transcript_database_the_agent_swapped_for_a_link_is_refused(tmp_path: Path) -> None:
    folder = AgentFolder(tmp_path / "agent")
    host = tmp_path / "host.sqlite"
    _transcript(host, [("s1", 1, _call("c1", "exec", command="id"))])
    (folder.root / DB).parent.mkdir(parents=True)
    (folder.root / DB).symlink_to(host)
    with pytest.raises(UnsafePath, match="a symbolic link"):
        ActionReader(folder, DB).new_actions()


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("MEMORY.md", "MEMORY.md"),
        ("./MEMORY.md", "MEMORY.md"),
        ("/r/agent/home/workspace/memory/2026-03-01.md", "memory/2026-03-01.md"),
        ("memory/notes.md", "memory/notes.md"),
        ("memory/notes.txt", None),
        ("docs/MEMORY.md", None),
    ],
)
def test_a_path_is_named_as_the_memory_history_names_the_file(path: str, name: str | None) -> None:
    assert memory_name(path) == name


def test_memory_files_are_read_without_following_a_link_the_agent_planted(tmp_path: Path) -> None:
    folder = AgentFolder(tmp_path / "agent")
    memories = folder.root / "home" / "memories"
    memories.mkdir(parents=True)
    (memories / "MEMORY.md").write_text("locker 4417")
    (memories / "USER.md").write_text("Sam")
    (tmp_path / "secret.md").write_text("host secret")
    (memories / "STOLEN.md").symlink_to(tmp_path / "secret.md")
    (memories / "folder.md").mkdir()
    (memories / "notes.txt").write_text("not memory")
    found = read_memory(folder, [], [(Path("home/memories"), ".md", "")])
    assert found == {"MEMORY.md": b"locker 4417", "USER.md": b"Sam"}
