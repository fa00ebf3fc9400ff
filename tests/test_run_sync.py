"""A run folder mirrored from its player to the head (``engine/placement/sync.py``): appends, whole files, removals and
report entries arrive in order, a lost shipment is sent again, a shipment applied twice changes nothing."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
from pathlib import Path

from engine_helpers import make_config, play

from engine.placement.sync import FolderWatcher, apply_changes, new_events, read_tree, snapshot_for_resume
from engine.report.writer import append_entry
from engine.state import load_state
from engine.transcript import read_events


def _folders(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """A player's run folder with a few files, and the head's copy of it."""
    player, head = tmp_path / "player" / "r", tmp_path / "head" / "r"
    (player / "agent").mkdir(parents=True)
    (player / "transcript.jsonl").write_bytes(b'{"n": 0}\n')
    (player / "journal.1.jsonl").write_bytes(b'{"m": 1}\n')
    (player / "state.json").write_text('{"journal": 1}')
    (player / "agent" / "chatbot.jsonl").write_bytes(b"hello\n")
    shutil.copytree(player, head)
    return player, head, player.parent / "report.md", head.parent / "report.md"


def _replace(path: Path, text: str) -> None:
    """As a checkpoint is written: a new file renamed over the old one."""
    tmp = path.with_name(".state.json.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def test_a_shipment_makes_the_head_what_the_player_has(tmp_path: Path) -> None:
    player, head, player_report, head_report = _folders(tmp_path)
    watcher = FolderWatcher(player, player_report)
    with open(player / "transcript.jsonl", "ab") as handle:
        handle.write(b'{"n": 1}\n')
    (player / "journal.2.jsonl").write_bytes(b'{"m": 1}\n{"m": 2}\n')
    _replace(player / "state.json", '{"journal": 2}')
    (player / "journal.1.jsonl").unlink()
    (player / "memory" / "end").mkdir(parents=True)
    (player / "memory" / "end" / "notes.md").write_bytes(b"remember")
    append_entry(player_report, "## one\n📊 Entry: aaaa\n")
    append_entry(player_report, "## two\n📊 Entry: bbbb\n")

    seq, changes = watcher.changes(0)
    by_path = {change.path: change for change in changes.files}
    assert by_path["transcript.jsonl"].offset == len(b'{"n": 0}\n')  # only what was appended travels
    assert by_path["transcript.jsonl"].data == b'{"n": 1}\n' and not by_path["transcript.jsonl"].whole
    assert changes.files[-1].path == "state.json"  # written last at the head
    assert changes.deleted == ["journal.1.jsonl"]
    assert changes.entries == ["## one\n📊 Entry: aaaa\n", "## two\n📊 Entry: bbbb\n"]
    apply_changes(head, head_report, changes)
    assert read_tree(head) == read_tree(player)
    assert head_report.read_text() == player_report.read_text()

    apply_changes(head, head_report, changes)  # again: nothing changes
    assert read_tree(head) == read_tree(player)
    assert head_report.read_text().count("Entry") == 2
    assert watcher.changes(seq)[1].files == []


def test_a_lost_shipment_is_sent_again_with_the_next(tmp_path: Path) -> None:
    player, head, player_report, head_report = _folders(tmp_path)
    watcher = FolderWatcher(player, player_report)
    with open(player / "transcript.jsonl", "ab") as handle:
        handle.write(b'{"n": 1}\n')
    append_entry(player_report, "## one\n📊 Entry: aaaa\n")
    watcher.changes(0)  # never reaches the head
    with open(player / "transcript.jsonl", "ab") as handle:
        handle.write(b'{"n": 2}\n')
    _replace(player / "state.json", '{"journal": 1, "more": true}')
    _, changes = watcher.changes(0)  # the head still acknowledges shipment 0
    apply_changes(head, head_report, changes)
    assert read_tree(head) == read_tree(player)
    assert head_report.read_text() == "## one\n📊 Entry: aaaa\n"


def test_a_file_rewritten_or_cut_travels_whole(tmp_path: Path) -> None:
    player, head, player_report, head_report = _folders(tmp_path)
    watcher = FolderWatcher(player, player_report)
    chatbot = player / "agent" / "chatbot.jsonl"
    stat = chatbot.stat()
    with open(chatbot, "r+b") as handle:  # same size, same time stamp: only its content tells
        handle.write(b"HELLO\n")
    os.utime(chatbot, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with open(player / "journal.1.jsonl", "r+b") as handle:  # cut, then grown past its old end
        handle.truncate(2)
        handle.seek(2)
        handle.write(b"xxxxxxxxxxxxxxxx\n")
    _, changes = watcher.changes(0)
    whole = {change.path for change in changes.files if change.whole}
    assert whole == {"agent/chatbot.jsonl", "journal.1.jsonl"}
    apply_changes(head, head_report, changes)
    assert read_tree(head) == read_tree(player)


async def test_a_resume_snapshot_is_cut_back_to_the_checkpoint(tmp_path: Path) -> None:
    config = make_config(
        tmp_path, {"r": {"benchmark": "full", "agent": "chatbot", "model": "scripted/recall"}}
    )
    await play(config, "r")
    run_dir = config.results_path() / "r"
    state = load_state(run_dir / "state.json")
    assert state is not None
    with open(
        run_dir / "transcript.jsonl", "ab"
    ) as handle:  # written after the checkpoint by a killed player
        handle.write(b'{"kind": "error", "message": "after"}\n')
    files = snapshot_for_resume(run_dir)
    assert len(files["transcript.jsonl"]) == state.transcript_bytes
    assert (run_dir / "transcript.jsonl").stat().st_size == state.transcript_bytes
    assert "run.lock" not in files

    events, end = new_events(run_dir / "transcript.jsonl", 0)
    assert [e.n for e in events] == [e.n for e in read_events(run_dir / "transcript.jsonl")]
    assert end == state.transcript_bytes
    with open(run_dir / "transcript.jsonl", "ab") as handle:
        handle.write(b'{"kind": "err')  # a line being written is left for the next look
    assert new_events(run_dir / "transcript.jsonl", end) == ([], end)


def _sqlite(path: Path, rows: range) -> None:
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, text TEXT)")
        db.executemany("INSERT OR REPLACE INTO notes VALUES (?, ?)", [(i, f"note {i} " * 40) for i in rows])


def test_an_agents_sqlite_database_changed_in_place_arrives_intact(tmp_path: Path) -> None:
    # an agent's memory (OpenClaw's SQLite): pages rewritten in place, the file growing, the header changing
    player, head, player_report, head_report = _folders(tmp_path)
    _sqlite(player / "agent" / "memory.sqlite", range(200))
    shutil.copy2(player / "agent" / "memory.sqlite", head / "agent" / "memory.sqlite")
    watcher, seq = FolderWatcher(player, player_report), 0
    for rows in (range(200, 260), range(10, 12), range(0, 400)):  # grows; two rows rewritten; most rewritten
        _sqlite(player / "agent" / "memory.sqlite", rows)
        seq, changes = watcher.changes(seq)
        apply_changes(head, head_report, changes)
        apply_changes(head, head_report, changes)  # again: nothing changes
        assert read_tree(head) == read_tree(player), f"after rows {rows}"
        with contextlib.closing(sqlite3.connect(head / "agent" / "memory.sqlite")) as db:
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            assert db.execute("SELECT count(*) FROM notes").fetchone() == (max(rows.stop, 260),)
    size = (player / "agent" / "memory.sqlite").stat().st_size
    _sqlite(player / "agent" / "memory.sqlite", range(5, 6))  # one row: a few pages of a large file travel
    seq, changes = watcher.changes(seq)
    (change,) = changes.files
    assert change.patch is not None and 0 < sum(len(piece) for _, piece in change.patch) <= size // 4
    apply_changes(head, head_report, changes)
    assert read_tree(head) == read_tree(player)


def test_a_file_rewritten_at_its_start_and_grown_is_not_taken_for_an_append(tmp_path: Path) -> None:
    player, head, player_report, head_report = _folders(tmp_path)
    (player / "agent" / "counter.bin").write_bytes(b"version 1\n" + b"x" * 100)
    watcher = FolderWatcher(player, player_report)
    seq, changes = watcher.changes(0)  # a new file: whole
    apply_changes(head, head_report, changes)
    with open(player / "agent" / "counter.bin", "r+b") as handle:  # in place: the inode stays
        handle.write(b"version 2\n")
        handle.seek(0, os.SEEK_END)
        handle.write(b"more")
    _, changes = watcher.changes(seq)
    apply_changes(head, head_report, changes)
    assert (head / "agent" / "counter.bin").read_bytes() == b"version 2\n" + b"x" * 100 + b"more"


def test_a_file_rewritten_once_then_appended_to_goes_back_to_sending_its_appends(tmp_path: Path) -> None:
    # the chatbot's history: rewritten when a run resumes, then only appended to
    player, head, player_report, head_report = _folders(tmp_path)
    history = player / "agent" / "chatbot.jsonl"
    watcher = FolderWatcher(player, player_report)
    history.write_bytes(b'{"m": "an old line"}\n' * 8000)  # rewritten in place: the inode stays
    seq, changes = watcher.changes(0)
    assert [change.whole for change in changes.files] == [True]
    apply_changes(head, head_report, changes)
    for line in range(3):
        with open(history, "ab") as handle:
            handle.write(b'{"m": "new"}\n')
        seq, changes = watcher.changes(seq)
        (change,) = changes.files
        assert line == 0 or (change.patch is None and not change.whole)  # an append again after one patch
        apply_changes(head, head_report, changes)
        assert read_tree(head) == read_tree(player)
