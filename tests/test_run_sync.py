"""A run folder mirrored from its player to the head (``engine/run_sync.py``): appends, whole files, removals and
report entries arrive in order, a lost shipment is sent again, a shipment applied twice changes nothing."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from engine_helpers import make_config, play

from engine.report import append_entry
from engine.run_sync import FolderWatcher, apply_changes, new_events, read_tree, snapshot_for_resume
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
