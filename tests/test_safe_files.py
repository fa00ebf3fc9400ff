"""The agent's folder as the engine touches it (issue 32, items 1, 2 and 5): nothing read, written, copied,
measured or deleted there follows a link the agent planted (``adapters/local/files/safe_files.py``,
``adapters/local/files/safe_tree.py``), without a real agent: links to host files and folders at every depth, hard
links, FIFOs, sockets, links swapped in while the engine works, a tree too deep or too big."""

from __future__ import annotations

import contextlib
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from adapters.local.files.agent_files import SKIPPED_NOTE, copy_memory, size_problem
from adapters.local.files.safe_files import AgentFileError, AgentFolder, UnsafePath
from adapters.local.files.safe_tree import MAX_DEPTH, FolderUsage, folder_usage, remove_tree
from adapters.openclaw.transcript import TranscriptReader

CANARY = b"host file: must stay byte-identical\n"
SECRET = "root-only-secret-4f9c2e"


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """Host files outside the agent's folder: a canary that must not change, a secret that must not be read,
    a folder that must not be written in."""
    outside = tmp_path / "host"
    outside.mkdir()
    (outside / "canary.txt").write_bytes(CANARY)
    (outside / "secret.txt").write_text(SECRET)
    (outside / "secret.txt").chmod(0o600)
    (outside / "dir").mkdir()
    (outside / "dir" / "secret.md").write_text(SECRET)
    return outside


@pytest.fixture
def agent(tmp_path: Path) -> AgentFolder:
    (tmp_path / "agent" / "home" / "memories").mkdir(parents=True)
    return AgentFolder(tmp_path / "agent")


def host_unchanged(host: Path) -> None:
    assert (host / "canary.txt").read_bytes() == CANARY
    assert sorted(p.name for p in host.iterdir()) == ["canary.txt", "dir", "secret.txt"]
    assert sorted(p.name for p in (host / "dir").iterdir()) == ["secret.md"]


def nothing_reads_the_secret(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert SECRET not in path.read_text(errors="replace"), path


# --- planted links, one name at a time ------------------------------------------------------------------

PLANTS: dict[str, Callable[[Path, Path], None]] = {
    "link to a file": lambda at, host: at.symlink_to(host / "canary.txt"),
    "link to a missing host file": lambda at, host: at.symlink_to(host / "new.txt"),
    "relative link out": lambda at, host: at.symlink_to(os.path.relpath(host / "canary.txt", at.parent)),
    "link to a folder": lambda at, host: at.symlink_to(host / "dir"),
    "hard link": lambda at, host: os.link(host / "canary.txt", at),
    "fifo": lambda at, host: os.mkfifo(at),
    "folder": lambda at, host: at.mkdir(),
}


@pytest.mark.parametrize("plant", PLANTS)
@pytest.mark.parametrize("where", ["home/.env", "config.json", "home/memories/MEMORY.md"])
def test_a_planted_name_is_refused_for_reading_and_writing_and_the_host_is_unchanged(
    agent: AgentFolder, host: Path, plant: str, where: str
) -> None:
    PLANTS[plant](agent.root / where, host)
    with pytest.raises(UnsafePath) as read:
        agent.read(where, 1024)
    assert str(agent.root / where) in str(read.value) and "\n" not in str(read.value)
    with pytest.raises(UnsafePath):
        agent.write_text(where, "API_SERVER_PORT=1\n")
    with pytest.raises(UnsafePath):
        agent.copy_out(where, agent.root.parent / "copy", 1024)
    with pytest.raises(UnsafePath):
        agent.is_file(where)
    host_unchanged(host)
    assert not (agent.root.parent / "copy").exists()
    assert not [p for p in (agent.root / where).parent.iterdir() if p.name.endswith(".mmb-tmp")]


@pytest.mark.parametrize("depth", ["home", "home/memories"])
@pytest.mark.parametrize("target", ["dir", "canary.txt"])
def test_a_link_in_place_of_a_folder_on_the_way_is_refused(
    agent: AgentFolder, host: Path, depth: str, target: str
) -> None:
    moved = agent.root / depth
    moved.rename(agent.root / "moved-away")
    moved.symlink_to(host / target)
    for act in (
        lambda: agent.read(f"{depth}/secret.md", 1024),
        lambda: agent.write_text(f"{depth}/canary.txt", "overwritten"),
        lambda: agent.write_text(f"{depth}/new/file", "created"),
        lambda: agent.names(depth),
        lambda: agent.unlink(f"{depth}/secret.md"),
        lambda: agent.make_dirs(f"{depth}/logs"),
        lambda: agent.read_appended(f"{depth}/agent.log", 0),
    ):
        with pytest.raises(UnsafePath, match=rf"refused {moved}: a symbolic link"):
            act()
    host_unchanged(host)


def test_regular_files_are_read_written_and_copied(agent: AgentFolder, tmp_path: Path) -> None:
    agent.write_text("home/.env", "API_SERVER_PORT=8642\n")
    agent.write_text("home/.env", "API_SERVER_PORT=8643\n")  # replaced, no temp file left
    assert agent.read_text("home/.env") == "API_SERVER_PORT=8643\n"
    assert sorted(os.listdir(agent.root / "home")) == [".env", "memories"]
    assert (agent.root / "home" / ".env").stat().st_mode & 0o777 == 0o600
    agent.write("state/deep/new.db", b"\x00\x01")  # its folders made
    assert agent.read("state/deep/new.db", 2) == b"\x00\x01"
    assert agent.read("absent", 10) is None and agent.size("absent") == 0 and not agent.is_file("absent")
    with pytest.raises(UnsafePath, match="longer than 1 bytes"):
        agent.read("state/deep/new.db", 1)
    agent.copy_out("home/.env", tmp_path / "copy.env", 100)
    assert (tmp_path / "copy.env").read_text() == "API_SERVER_PORT=8643\n"
    with pytest.raises(UnsafePath, match="outside the agent's folder"):
        agent.read(tmp_path / "copy.env", 100)
    with pytest.raises(UnsafePath, match="not a name inside"):
        agent.read("home/../../copy.env", 100)


def test_a_log_is_read_from_where_it_was_left_and_again_from_the_start_when_new(agent: AgentFolder) -> None:
    log = agent.root / "home" / "agent.log"
    log.write_text("one\ntwo\n")
    start, chunk = agent.read_appended("home/agent.log", 0)
    assert (start, chunk) == (0, b"one\ntwo\n")
    with log.open("a") as handle:
        handle.write("three\n")
    assert agent.read_appended("home/agent.log", 8) == (8, b"three\n")
    log.write_text("new\n")  # rotated: shorter than where it was left
    assert agent.read_appended("home/agent.log", 14) == (0, b"new\n")
    assert agent.read_appended("home/absent.log", 14) == (0, b"")


def test_a_fifo_or_a_socket_never_holds_the_engine(agent: AgentFolder, host: Path) -> None:
    os.mkfifo(agent.root / "home" / "agent.log")  # nobody ever writes into it: a blocking open would hang
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(agent.root / "home" / "sock"))
        started = time.monotonic()
        for where in ("home/agent.log", "home/sock"):
            with pytest.raises(UnsafePath, match="a FIFO|a socket"):
                agent.read_appended(where, 0)
            with pytest.raises(UnsafePath):
                agent.read(where, 10)
    assert time.monotonic() - started < 5


# --- a link swapped in while the engine works -------------------------------------------------------------


@contextlib.contextmanager
def swapping(at: Path, target: Path) -> Iterator[None]:
    """A thread that keeps replacing ``at`` with a regular file and then a link to ``target`` (each by a rename,
    as an agent's ``ln -sf`` does) while the block runs."""
    stop = threading.Event()

    def swap() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            temp = at.with_name(f".swap-{n}")
            if n % 2:
                temp.symlink_to(target)
            else:
                temp.write_text("API_SERVER_PORT=1\n")
            os.replace(temp, at)

    thread = threading.Thread(target=swap, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def test_a_link_swapped_in_between_a_check_and_the_open_is_never_followed(
    agent: AgentFolder, host: Path
) -> None:
    at = agent.root / "home" / ".env"
    outcomes = {"read": 0, "refused": 0}
    with swapping(at, host / "secret.txt"):
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            try:
                text = agent.read_text("home/.env")
            except UnsafePath:
                outcomes["refused"] += 1
                continue
            except FileNotFoundError:
                continue
            assert text is None or SECRET not in text
            outcomes["read"] += 1
    assert outcomes["refused"] and outcomes["read"], outcomes  # both sides of the race were hit


def test_a_link_swapped_in_while_the_engine_writes_is_replaced_never_written_through(
    agent: AgentFolder, host: Path
) -> None:
    at = agent.root / "home" / ".env"
    written = 0
    with swapping(at, host / "canary.txt"):
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            with contextlib.suppress(UnsafePath):
                agent.write_text("home/.env", "API_SERVER_KEY=engine\n")
                written += 1
    assert written
    host_unchanged(host)


def test_a_folder_swapped_for_a_link_while_copied_or_removed_is_never_followed(
    agent: AgentFolder, host: Path, tmp_path: Path
) -> None:
    memories = agent.root / "home" / "memories"
    (memories / "MEMORY.md").write_text("kept")
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                os.rename(memories, agent.root / "home" / "real")
                os.symlink(host / "dir", memories)
                os.unlink(memories)
                os.rename(agent.root / "home" / "real", memories)

    thread = threading.Thread(target=swap, daemon=True)
    thread.start()
    try:
        for n in range(300):
            with contextlib.suppress(UnsafePath, FileNotFoundError):
                agent.copy_out("home/memories/secret.md", tmp_path / f"copy-{n}", 1024)
    finally:
        stop.set()
        thread.join()
    assert not list(tmp_path.glob("copy-*"))  # only ``MEMORY.md`` is there, and it was never asked for
    host_unchanged(host)


# --- memory snapshots ----------------------------------------------------------------------------------------


def test_a_snapshot_copies_regular_files_and_names_what_it_left_out(
    agent: AgentFolder, host: Path, tmp_path: Path
) -> None:
    memories = agent.root / "home" / "memories"
    (memories / "MEMORY.md").write_text("my cat is Zorblax")
    (memories / "USER.md").symlink_to(host / "secret.txt")
    (memories / "extra.md").symlink_to(host / "dir")
    os.link(host / "canary.txt", memories / "hard.md")
    os.mkfifo(memories / "pipe.md")
    (memories / "notes.txt").write_text("not memory")
    target = tmp_path / "results" / "memory" / "end"
    skipped = copy_memory(agent, target, [], [(Path("home/memories"), ".md", "")])
    assert sorted(p.name for p in target.iterdir()) == ["MEMORY.md", SKIPPED_NOTE]
    assert (target / "MEMORY.md").read_text() == "my cat is Zorblax"
    assert len(skipped) == 4 and all(line.startswith("refused ") for line in skipped), skipped
    note = (target / SKIPPED_NOTE).read_text()
    for name, why in [
        ("USER.md", "a symbolic link"),
        ("hard.md", "a file with 2 names"),
        ("pipe.md", "a FIFO"),
    ]:
        assert f"{memories / name}: {why}" in note, note
    nothing_reads_the_secret(tmp_path / "results")
    host_unchanged(host)


def test_a_snapshot_of_a_memory_folder_that_is_a_link_copies_nothing(
    agent: AgentFolder, host: Path, tmp_path: Path
) -> None:
    (agent.root / "home" / "memories").rmdir()
    (agent.root / "home" / "memories").symlink_to(host / "dir")
    target = tmp_path / "results" / "memory" / "end"
    files = [(agent.root / "home" / "memories" / "secret.md", "secret.md")]
    skipped = copy_memory(agent, target, files, [(Path("home/memories"), ".md", "")])
    assert len(skipped) == 2 and sorted(p.name for p in target.iterdir()) == [SKIPPED_NOTE]
    nothing_reads_the_secret(tmp_path / "results")


# --- removal and size ----------------------------------------------------------------------------------------


def test_removing_the_folder_unlinks_links_never_what_they_name(agent: AgentFolder, host: Path) -> None:
    home = agent.root / "home"
    (home / "to-dir").symlink_to(host / "dir")
    (home / "to-file").symlink_to(host / "canary.txt")
    os.link(host / "canary.txt", home / "hard")
    os.mkfifo(home / "fifo")
    (home / "closed" / "inner").mkdir(parents=True)
    (home / "closed" / "inner" / "x").write_text("x")
    (home / "closed").chmod(0)
    deep = home
    for _ in range(300):  # deeper than a recursive removal's stack would like
        deep = deep / "d"
    deep.mkdir(parents=True)
    (deep / "leaf").symlink_to(host / "dir")
    remove_tree(agent.root)
    assert not agent.root.exists()
    host_unchanged(host)
    link = host.parent / "link-to-host"
    link.symlink_to(host)
    remove_tree(link)  # a link at the top is removed itself
    assert not link.exists() and (host / "canary.txt").exists()


def test_the_size_counts_every_file_once_without_following_links(agent: AgentFolder, host: Path) -> None:
    big = host / "big"
    big.write_bytes(b"x" * 5_000_000)
    (agent.root / "home" / "to-big").symlink_to(big)
    (agent.root / "home" / "to-host").symlink_to(host)
    (agent.root / "home" / "own").write_bytes(b"y" * 300_000)
    os.link(agent.root / "home" / "own", agent.root / "home" / "own-again")
    with open(agent.root / "home" / "sparse", "wb") as sparse:
        sparse.truncate(50_000_000)  # no disk used, but a copy would write all of it
    usage = folder_usage(agent.root)
    assert 50_300_000 <= usage.bytes < 50_400_000, usage
    assert usage.stopped == ""
    problem = size_problem(usage, 47, agent.root)  # 47.99 MB (of 1024² bytes)
    assert problem.startswith(
        f"the agent's folder {agent.root} holds 48.0 MB in 7 entries, over agent_disk_mb"
    )
    assert "(47 MB): free room in it or raise agent_disk_mb" in problem
    assert size_problem(usage, 48, agent.root) == ""


def test_the_size_walk_is_bounded(agent: AgentFolder) -> None:
    for n in range(50):
        (agent.root / f"f{n}").touch()
    usage = folder_usage(agent.root, max_entries=20)
    assert usage.stopped == "over 20 entries"
    assert "could not be measured (over 20 entries" in size_problem(usage, 2048, agent.root)
    deep = agent.root
    for _ in range(MAX_DEPTH + 5):
        deep = deep / "d"
    deep.mkdir(parents=True)
    assert folder_usage(agent.root).stopped == f"folders nested over {MAX_DEPTH} deep"
    assert folder_usage(agent.root.parent / "absent") == FolderUsage(0, 0)


def test_a_failure_of_the_file_system_names_the_file(agent: AgentFolder) -> None:
    (agent.root / "home" / "file").write_text("x")
    with pytest.raises(UnsafePath, match=r"home/file: a file where a folder should be"):
        agent.write_text("home/file/below", "x")
    long = "n" * 300
    with pytest.raises(AgentFileError, match=rf"^cannot write .*home/{long}: File name too long$"):
        agent.write_text(f"home/{long}", "x")


def test_openclaws_transcript_is_read_from_a_copy_and_never_through_a_link(
    agent: AgentFolder, host: Path, tmp_path: Path
) -> None:
    database = agent.root / "home" / "transcript.sqlite"
    event = '{"type":"compaction","tokensBefore":900,"tokensAfter":300}'
    with contextlib.closing(sqlite3.connect(database)) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(
            "CREATE TABLE transcript_events (session_id, seq, event_json, navigation_json, event_zstd, created_at)"
        )
        db.execute("INSERT INTO transcript_events VALUES ('s', 1, ?, NULL, NULL, 1)", (event,))
        db.commit()
        reader = TranscriptReader(agent, Path("home/transcript.sqlite"))
        assert [key for key, _ in reader.rows(set())] == ["s:1"]  # the row still in the write-ahead log
        assert reader.rows(set()) == []  # nothing changed: not copied again
    assert not [p for p in agent.root.rglob("*") if p.name.endswith("-shm") and p.parent != database.parent]
    database.rename(agent.root / "home" / "away.sqlite")
    database.symlink_to(host / "secret.txt")
    with pytest.raises(UnsafePath, match=rf"^refused {database}: a symbolic link"):
        reader.rows(set())
    with pytest.raises(UnsafePath):  # asked again: refused again
        reader.rows(set())
    database.unlink()
    os.mkfifo(database)
    with pytest.raises(UnsafePath, match="a FIFO"):
        reader.rows(set())
    host_unchanged(host)
