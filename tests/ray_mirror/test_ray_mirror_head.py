"""The Ray mirror, on the head: never follows a link the agent could have planted (``engine/placement/no_follow.py``): on the
node nothing under a link is listed or read, even a link swapped in between the listing and the reading; on the
head a shipment replaces a link in its way by what the node has there (a real folder, a regular file) and a
removal unlinks names, so a host folder or file is never created in, written, truncated, read or deleted."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from mirror_helpers import (
    HOST_MEMORY,
    MEMORY,
    SECRET,
    Host,
    _contents,
    _never_opened,
    _run,
    _target,
)

from engine.placement.sync import apply_changes, new_events, read_tree, snapshot_for_resume
from engine.placement.watcher import Changes, FileChange

# -- the head: a link in the way is replaced, never followed -------------------------------------------------

DATA = b"- the plumber charges $950\n- the tiles went up to $55\n"


def _shipment(variant: str, path: str = MEMORY) -> tuple[Changes, bytes]:
    """A shipment of ``path`` in one of the forms the watcher sends, and what the head's file then holds."""
    if variant == "whole":
        return Changes(files=[FileChange(path, 0, DATA, whole=True)]), DATA
    if variant == "appended from its start":
        return Changes(files=[FileChange(path, 0, DATA)]), DATA
    if variant == "appended":  # the head's file was the link: nothing of its first 10 bytes is there
        return Changes(files=[FileChange(path, 10, DATA)]), b"\0" * 10 + DATA
    patch = ((0, DATA[:20]), (20, DATA[20:]))
    return Changes(files=[FileChange(path, 0, b"", patch=patch, size=len(DATA))]), DATA


VARIANTS = ["whole", "appended from its start", "appended", "patched"]


def _plant(head: Path, planted: str, target: Path) -> None:
    place = head / planted
    if place.is_dir() and not place.is_symlink():
        shutil.rmtree(place)
    else:
        place.unlink(missing_ok=True)
    place.parent.mkdir(parents=True, exist_ok=True)
    place.symlink_to(target)


def _real_all_the_way(head: Path, relative: str) -> bool:
    path = head
    for part in Path(relative).parts[:-1]:
        path = path / part
        if not stat.S_ISDIR(path.lstat().st_mode):
            return False
    return stat.S_ISREG((head / relative).lstat().st_mode)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("planted", ["agent/home/memories", "agent/home", "agent"])
def test_a_shipment_under_a_folder_linked_to_the_host_makes_a_real_folder(
    tmp_path: Path, host: Host, opened: list[str], variant: str, planted: str
) -> None:
    _, head, _, head_report = _run(tmp_path)
    _plant(head, planted, host.folder)  # left by a local play before
    changes, expected = _shipment(variant)
    apply_changes(head, head_report, changes)
    assert _real_all_the_way(head, MEMORY)
    assert (head / MEMORY).read_bytes() == expected
    assert host.unchanged() and _never_opened(opened, host)
    apply_changes(head, head_report, changes)  # applied twice: the same
    assert (head / MEMORY).read_bytes() == expected and host.unchanged()


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("target", ["secret", "host MEMORY.md", "host folder", "nowhere"])
@pytest.mark.parametrize("path", [MEMORY, "transcript.jsonl"])
def test_a_file_that_is_a_link_on_the_head_becomes_a_regular_file(
    tmp_path: Path, host: Host, opened: list[str], variant: str, target: str, path: str
) -> None:
    _, head, _, head_report = _run(tmp_path)
    _plant(head, path, _target(host, tmp_path, target))
    changes, expected = _shipment(variant, path)
    apply_changes(head, head_report, changes)
    assert _real_all_the_way(head, path) and (head / path).read_bytes() == expected
    assert not (tmp_path / "nowhere").exists()
    assert host.unchanged() and _never_opened(opened, host)


def _memories_a_file(head: Path) -> None:
    shutil.rmtree(head / "agent" / "home" / "memories")
    (head / "agent" / "home" / "memories").write_bytes(b"was a file here")


def _memory_a_fifo(head: Path) -> None:
    (head / MEMORY).unlink()
    os.mkfifo(head / MEMORY)  # opened to be written, it would wait for a reader


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("in_the_way", [_memories_a_file, _memory_a_fifo])
def test_a_file_or_fifo_in_the_way_on_the_head_is_replaced(
    tmp_path: Path, variant: str, in_the_way: Callable[[Path], None]
) -> None:
    _, head, _, head_report = _run(tmp_path)
    in_the_way(head)
    changes, expected = _shipment(variant)
    apply_changes(head, head_report, changes)
    assert _real_all_the_way(head, MEMORY) and (head / MEMORY).read_bytes() == expected


def test_an_append_to_a_file_with_another_name_leaves_the_other_name_alone(
    tmp_path: Path, host: Host
) -> None:
    _, head, _, head_report = _run(tmp_path)
    (head / MEMORY).unlink()
    os.link(host.folder / "MEMORY.md", head / MEMORY)  # a hard link an earlier play left
    apply_changes(head, head_report, Changes(files=[FileChange(MEMORY, len(HOST_MEMORY), b"more\n")]))
    assert (head / MEMORY).read_bytes() == HOST_MEMORY + b"more\n"
    assert (head / MEMORY).stat().st_nlink == 1
    assert host.unchanged()


@pytest.mark.parametrize(
    ("planted", "target"),
    [
        ("agent/home/memories", "host folder"),
        ("agent/home", "host folder"),
        ("agent/home/memories/MEMORY.md", "host MEMORY.md"),
        ("agent/home/memories/MEMORY.md", "secret"),
    ],
)
def test_a_removal_through_a_link_removes_nothing_of_the_host(
    tmp_path: Path, host: Host, opened: list[str], planted: str, target: str
) -> None:
    _, head, _, head_report = _run(tmp_path)
    _plant(head, planted, _target(host, tmp_path, target))
    (host.folder / "notes" / "MEMORY.md").write_bytes(HOST_MEMORY)  # a removal of both names
    host.before = _contents(host.folder)
    changes = Changes(deleted=[MEMORY, "agent/home/memories/notes/MEMORY.md", "agent/home/log.txt"])
    apply_changes(head, head_report, changes)
    assert host.unchanged() and _never_opened(opened, host)
    if planted == MEMORY:
        assert not os.path.lexists(head / MEMORY)  # the link's name removed, never its target
    else:
        assert (head / planted).is_symlink()  # a link in the way is left alone, never followed


# -- the head's folder read for a node: no file through a link ------------------------------------------------


def test_the_heads_folder_is_read_without_following_a_link(
    tmp_path: Path, host: Host, opened: list[str]
) -> None:
    _, head, _, _ = _run(tmp_path)
    (head / "state.json").unlink()  # no checkpoint yet: the transcript stays whole
    _plant(head, "agent/home/memories", host.folder)
    _plant(head, "agent/home/log.txt", host.secret)
    _plant(head, "agent/home/elsewhere", host.folder / "notes")
    for tree in (read_tree(head), snapshot_for_resume(head)):
        assert tree == {"transcript.jsonl": b'{"n": 0}\n'}
        assert SECRET not in b"".join(tree.values()) and HOST_MEMORY not in b"".join(tree.values())
    assert host.unchanged() and _never_opened(opened, host)


def test_a_benchmark_folder_may_itself_be_a_link(tmp_path: Path, host: Host) -> None:
    bench = tmp_path / "bench"
    (bench / "chapters").mkdir(parents=True)
    (bench / "chapters" / "chapter1.md").write_text("# one\n")
    (bench / "stolen").symlink_to(host.secret)
    linked = tmp_path / "benchmarks-link"
    linked.symlink_to(bench, target_is_directory=True)
    assert read_tree(linked) == {"chapters/chapter1.md": b"# one\n"}


@pytest.mark.parametrize("name", ["state.json", "transcript.jsonl", "journal.1.jsonl"])
def test_a_resume_refuses_a_run_file_that_is_a_link(
    tmp_path: Path, host: Host, opened: list[str], name: str
) -> None:
    _, head, _, _ = _run(tmp_path)
    _plant(head, name, host.secret)
    with pytest.raises(ValueError, match=f"{name}: a symbolic link"):
        snapshot_for_resume(head)
    assert host.unchanged() and _never_opened(opened, host)  # neither read nor cut back


def test_a_run_folder_that_is_a_link_is_refused(tmp_path: Path, host: Host) -> None:
    linked = tmp_path / "results" / "r"
    linked.parent.mkdir()
    linked.symlink_to(host.folder, target_is_directory=True)
    with pytest.raises(ValueError, match="r: a symbolic link"):
        snapshot_for_resume(linked)
    with pytest.raises(NotADirectoryError, match="never follows a link"):
        apply_changes(linked, tmp_path / "report.md", Changes(files=[FileChange("x", 0, b"x", whole=True)]))
    assert host.unchanged()


def test_no_event_is_read_through_a_transcript_link(tmp_path: Path, host: Host) -> None:
    (host.folder / "transcript.jsonl").write_bytes(b'{"kind": "error", "message": "host"}\n')
    link = tmp_path / "transcript.jsonl"
    link.symlink_to(host.folder / "transcript.jsonl")
    assert new_events(link, 0) == ([], 0)
