"""The Ray mirror, on the node: never follows a link the agent could have planted (``engine/placement/no_follow.py``): on the
node nothing under a link is listed or read, even a link swapped in between the listing and the reading; on the
head a shipment replaces a link in its way by what the node has there (a real folder, a regular file) and a
removal unlinks names, so a host folder or file is never created in, written, truncated, read or deleted."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from mirror_helpers import (
    HOST_MEMORY,
    MEMORY,
    SECRET,
    Host,
    _link,
    _never_opened,
    _run,
    _shipped,
    _swap_after_listing,
    _target,
)

from engine.placement.sync import FolderWatcher, apply_changes, read_tree
from engine.placement.watcher import RACY_MAX, run_files

# -- the node: nothing listed or read through a link ---------------------------------------------------------


def _grow(path: Path) -> None:
    with open(path, "ab") as handle:
        handle.write(b"- the tiles went up to $55\n")


CHANGES: dict[str, Callable[[Path], object]] = {
    "grown": _grow,  # read from its old end
    "rewritten": lambda path: path.write_bytes(b"- a whole new memory\n" * 3),
    "untouched": lambda path: None,  # read again for its digest only (written within the tick)
    "made big": lambda path: path.write_bytes(b"x" * (RACY_MAX + 10)),
}


@pytest.mark.parametrize("change", CHANGES)
@pytest.mark.parametrize("target", ["secret", "host folder", "host MEMORY.md", "/etc/hostname", "nowhere"])
def test_a_file_made_a_link_after_the_listing_ships_nothing_of_its_target(
    tmp_path: Path, host: Host, opened: list[str], monkeypatch: pytest.MonkeyPatch, change: str, target: str
) -> None:
    player, head, player_report, head_report = _run(tmp_path)
    aim = _target(host, tmp_path, target)
    if target.startswith("/") and not aim.is_file():
        pytest.skip(f"{target} is not on this machine")
    watcher = FolderWatcher(player, player_report)
    memory = player / MEMORY
    CHANGES[change](memory)
    _swap_after_listing(monkeypatch, lambda: _link(memory, aim))
    _, changes = watcher.changes(0)

    assert MEMORY not in [c.path for c in changes.files]
    assert changes.deleted == [MEMORY]  # a link is no file: the head drops its copy
    shipped = _shipped(changes)
    assert SECRET not in shipped and HOST_MEMORY not in shipped
    if aim.is_file():
        assert aim.read_bytes() not in shipped
    apply_changes(head, head_report, changes)
    assert not (head / MEMORY).exists() and not (head / MEMORY).is_symlink()
    assert host.unchanged() and _never_opened(opened, host)


def test_a_folder_made_a_link_after_the_listing_ships_nothing_under_it(
    tmp_path: Path, host: Host, opened: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    player, head, player_report, head_report = _run(tmp_path)
    (player / "agent" / "home" / "memories" / "notes").mkdir()
    (player / "agent" / "home" / "memories" / "notes" / "deep.md").write_bytes(b"agent notes\n")
    watcher = FolderWatcher(player, player_report)
    _grow(player / MEMORY)  # listed as changed, the same names as in the host's folder
    (player / "agent" / "home" / "memories" / "notes" / "deep.md").write_bytes(b"agent notes, more\n")
    memories = player / "agent" / "home" / "memories"

    def swap() -> None:
        memories.rename(tmp_path / "memories-moved-away")
        memories.symlink_to(host.folder, target_is_directory=True)

    _swap_after_listing(monkeypatch, swap)
    _, changes = watcher.changes(0)
    assert changes.files == []
    assert changes.deleted == [MEMORY, "agent/home/memories/notes/deep.md"]  # no file under a link
    assert SECRET not in _shipped(changes) and HOST_MEMORY not in _shipped(changes)
    apply_changes(head, head_report, changes)
    assert read_tree(head) == read_tree(player)
    assert host.unchanged() and _never_opened(opened, host)


@pytest.mark.parametrize("planted", ["agent/home/memories", "agent/home", "agent"])
def test_a_folder_that_is_a_link_is_never_entered(
    tmp_path: Path, host: Host, opened: list[str], planted: str
) -> None:
    player, head, player_report, head_report = _run(tmp_path)
    watcher = FolderWatcher(player, player_report)
    folder = player / planted
    shutil.rmtree(folder)
    folder.symlink_to(host.folder, target_is_directory=True)
    listed = run_files(player)
    assert not [path for path in listed if path.startswith(planted + "/")]
    assert "transcript.jsonl" in listed and "state.json" in listed
    _, changes = watcher.changes(0)
    assert changes.files == [] and MEMORY in changes.deleted
    apply_changes(head, head_report, changes)
    assert read_tree(head) == read_tree(player)
    assert host.unchanged() and _never_opened(opened, host)


def test_a_link_swapped_in_while_the_watcher_starts_is_not_read(
    tmp_path: Path, host: Host, opened: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    player, _, player_report, _ = _run(tmp_path)
    big = player / "agent" / "home" / "big.bin"
    big.write_bytes(b"y" * (RACY_MAX + 1))  # read at its head and tail only
    _swap_after_listing(monkeypatch, lambda: (_link(big, host.secret), _link(player / MEMORY, host.folder)))
    watcher = FolderWatcher(player, player_report)
    _, changes = watcher.changes(0)
    assert changes.files == [] and changes.deleted == []  # never seen, so never shipped nor removed
    assert host.unchanged() and _never_opened(opened, host)


def test_the_mirror_follows_the_agent_from_a_link_back_to_a_folder(
    tmp_path: Path, host: Host, opened: list[str]
) -> None:
    player, head, player_report, head_report = _run(tmp_path)
    watcher = FolderWatcher(player, player_report)
    memories = player / "agent" / "home" / "memories"
    shutil.rmtree(memories)
    memories.symlink_to(host.folder, target_is_directory=True)
    seq, changes = watcher.changes(0)
    apply_changes(head, head_report, changes)
    assert not (head / "agent" / "home" / "memories").exists()  # emptied by the removal: removed
    memories.unlink()
    memories.mkdir()
    (player / MEMORY).write_bytes(b"- written again\n")
    _, changes = watcher.changes(seq)
    apply_changes(head, head_report, changes)
    assert (head / MEMORY).read_bytes() == b"- written again\n"
    assert read_tree(head) == read_tree(player)
    assert host.unchanged() and _never_opened(opened, host)


def test_a_file_made_a_fifo_after_the_listing_never_holds_the_watcher(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    player, _, player_report, _ = _run(tmp_path)
    watcher = FolderWatcher(player, player_report)
    memory = player / MEMORY
    _grow(memory)
    _swap_after_listing(
        monkeypatch, lambda: (memory.unlink(), os.mkfifo(memory))
    )  # a FIFO waits for a writer
    _, changes = watcher.changes(0)
    assert MEMORY not in [c.path for c in changes.files] and changes.deleted == [MEMORY]
