"""The Ray mirror never follows a link the agent could have planted (``engine/placement/no_follow.py``): on the
node nothing under a link is listed or read, even a link swapped in between the listing and the reading; on the
head a shipment replaces a link in its way by what the node has there (a real folder, a regular file) and a
removal unlinks names, so a host folder or file is never created in, written, truncated, read or deleted."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.placement import watcher as watcher_module
from engine.placement.sync import FolderWatcher, apply_changes, new_events, read_tree, snapshot_for_resume
from engine.placement.watcher import RACY_MAX, Changes, FileChange, run_files

SECRET = b"host secret, readable by its owner only\n"
HOST_MEMORY = b"# the host's own MEMORY.md\nnot the agent's\n"
MEMORY = "agent/home/memories/MEMORY.md"


@dataclass
class Host:
    """A folder and a 0600 file of the host, outside every run folder."""

    folder: Path
    secret: Path
    before: dict[str, tuple[int, bytes | str]]

    def unchanged(self) -> bool:
        """Byte for byte, mode for mode, name for name as the test made them."""
        return _contents(self.folder) == self.before and self.secret.read_bytes() == SECRET


def _contents(folder: Path) -> dict[str, tuple[int, bytes | str]]:
    found: dict[str, tuple[int, bytes | str]] = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        what: bytes | str = (
            os.readlink(path) if path.is_symlink() else b"" if path.is_dir() else path.read_bytes()
        )
        found[str(path.relative_to(folder))] = (info.st_mode, what)
    return found


@pytest.fixture
def host(tmp_path: Path) -> Host:
    folder = tmp_path / "host"
    (folder / "notes").mkdir(parents=True)
    (folder / "MEMORY.md").write_bytes(HOST_MEMORY)
    (folder / "notes" / "deep.md").write_bytes(SECRET)
    secret = tmp_path / "host-secret.txt"
    secret.write_bytes(SECRET)
    secret.chmod(0o600)
    return Host(folder, secret, _contents(folder))


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What every ``os.open`` of the test reached, as the kernel names it (no path under the host's may
    appear: not even opened)."""
    real, reached = os.open, []

    def spy(path: object, flags: int, *args: object, **kwargs: object) -> int:
        fd = real(path, flags, *args, **kwargs)  # type: ignore[arg-type]
        reached.append(os.readlink(f"/proc/self/fd/{fd}"))
        return fd

    monkeypatch.setattr(os, "open", spy)
    return reached


def _never_opened(opened: list[str], host: Host) -> bool:
    folder, secret = str(host.folder.resolve()), str(host.secret.resolve())
    return not [path for path in opened if path in (folder, secret) or path.startswith(folder + "/")]


def _shipped(changes: Changes) -> bytes:
    pieces = [change.data for change in changes.files]
    pieces += [piece for change in changes.files for _, piece in change.patch or ()]
    return b"".join(pieces)


def _link(path: Path, target: Path) -> None:
    """``path`` replaced by a link to ``target`` in one rename, as an agent's ``ln -sfn`` does it."""
    temp = path.with_name(f".{path.name}.link")
    temp.symlink_to(target)
    os.replace(temp, path)


def _run(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """A player's run folder with an agent's memory, and the head's copy of it."""
    player, head = tmp_path / "player" / "r", tmp_path / "head" / "r"
    (player / "agent" / "home" / "memories").mkdir(parents=True)
    (player / "transcript.jsonl").write_bytes(b'{"n": 0}\n')
    (player / "state.json").write_text('{"journal": 1}')
    (player / MEMORY).write_bytes(b"- the plumber charges $950\n")
    (player / "agent" / "home" / "log.txt").write_bytes(b"started\n")
    shutil.copytree(player, head)
    return player, head, player.parent / "report.md", head.parent / "report.md"


def _swap_after_listing(monkeypatch: pytest.MonkeyPatch, swap: Callable[[], None]) -> None:
    """The agent acts right after the watcher listed the folder, before it reads what it listed."""
    real = watcher_module.run_files
    swapped: list[bool] = []

    def listed_then_swapped(folder: Path) -> dict[str, os.stat_result]:
        found = real(folder)
        if not swapped:
            swap()
            swapped.append(True)
        return found

    monkeypatch.setattr(watcher_module, "run_files", listed_then_swapped)


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


def _target(host: Host, tmp_path: Path, name: str) -> Path:
    places = {"secret": host.secret, "host folder": host.folder, "host MEMORY.md": host.folder / "MEMORY.md"}
    return Path(name) if name.startswith("/") else places.get(name, tmp_path / "nowhere" / "MEMORY.md")


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
