"""One owner per run: a second engine refuses with the owner's name; a dead owner's lock is taken over."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from engine_helpers import FORGETFUL, ROOT, make_config, slow_demo_config

from engine.config import BuildError
from engine.placement.scheduler import Scheduler
from engine.run.build import build_run
from engine.run.lock import LOCK_NAME, SOCKET_FOLDER_PREFIX, RunLock, owner_of
from engine.transcript import read_events

HOLDER = """
import sys, time
from pathlib import Path
from engine.run.lock import RunLock
lock = RunLock(Path(sys.argv[1]), "test-holder")
lock.acquire()
print("held", flush=True)
time.sleep(60)
"""


def hold_lock(run_dir: Path) -> subprocess.Popen[str]:
    """Another process that takes the run's lock and keeps it."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(run_dir)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "held"
    return process


async def test_a_second_engine_is_refused_with_the_owners_name(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    first = build_run(config, "r", front_end="headless")
    with pytest.raises(
        BuildError, match=rf"run r is being played by pid {os.getpid()} on .*\(headless, since "
    ):
        build_run(config, "r", front_end="tui")
    await first.run()  # ends and releases the lock: the next start works
    second = build_run(config, "r")
    assert second.lock is not None and second.lock.held
    second.lock.release()


def test_the_lock_of_a_killed_owner_is_taken_over(tmp_path: Path) -> None:
    run_dir = tmp_path / "results" / "r"
    holder = hold_lock(run_dir)
    assert "test-holder" in owner_of(run_dir) and f"pid {holder.pid}" in owner_of(run_dir)
    with pytest.raises(Exception, match="being played by"):
        RunLock(run_dir, "tui").acquire()
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert owner_of(run_dir) == ""
    lock = RunLock(run_dir, "tui")
    lock.acquire()
    assert json.loads((run_dir / LOCK_NAME).read_text())["front_end"] == "tui"
    lock.release()


async def test_the_scheduler_shows_a_run_played_elsewhere_and_does_not_start_it(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    holder = hold_lock(config.results_path() / "r")
    try:
        scheduler = Scheduler(config, front_end="tui")
        view = scheduler.view("r")
        assert (
            view.status == "running"
            and "test-holder" in view.owner
            and view.reason.startswith("played by pid")
        )
        await scheduler.start("r")
        assert not scheduler.running("r")
        assert "being played by" in scheduler.view("r").reason or scheduler.view("r").owner
    finally:
        holder.kill()
        holder.wait()


async def test_relabel_renames_the_front_end_in_the_locks_of_the_runs_played(tmp_path: Path) -> None:
    """An app gone headless on a hang-up (``mmb_tui/front_ends/session.py``) is no longer labelled ``(tui …)``."""
    hung = {"benchmark": "full", "agent": FORGETFUL, "persona": "scripted/persona?faults=1:hang"}
    config = make_config(tmp_path, {"r": hung, "idle": {"benchmark": "full", "agent": FORGETFUL}})
    scheduler = Scheduler(config, front_end="tui")
    await scheduler.start("r")
    run_dir = config.results_path() / "r"
    try:
        assert "(tui, since" in owner_of(run_dir)
        socket_path = json.loads((run_dir / LOCK_NAME).read_text()).get("socket")
        scheduler.relabel("headless after a hang-up")
        info = json.loads((run_dir / LOCK_NAME).read_text())
        assert info["front_end"] == "headless after a hang-up" and info.get("socket") == socket_path
        owner = owner_of(run_dir)
        assert f"pid {os.getpid()}" in owner and "(headless after a hang-up, since" in owner
        assert owner_of(config.results_path() / "idle") == ""  # a run not played here: nothing to relabel
        assert scheduler.front_end == "headless after a hang-up"  # and so the runs it starts later
    finally:
        await scheduler.stop_all()


def test_two_headless_starts_at_once_the_second_exits_naming_the_owner(tmp_path: Path) -> None:
    path = slow_demo_config(tmp_path, latency=0.02)
    command = [
        sys.executable,
        "-m",
        "mmb_tui.front_ends.cli",
        "--config",
        str(path),
        "run",
        "demo",
        "--headless",
    ]
    first = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lock = tmp_path / "results" / "demo" / LOCK_NAME
    deadline = time.monotonic() + 30
    while not (lock.exists() and lock.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    second = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert first.wait(timeout=120) == 0
    assert second.returncode != 0
    assert f"being played by pid {first.pid}" in second.stdout + second.stderr
    numbers = [e.n for e in read_events(tmp_path / "results" / "demo" / "transcript.jsonl")]
    assert numbers == list(range(len(numbers)))  # one writer: no duplicated event numbers


def test_a_run_folder_left_open_by_an_older_version_is_made_private_when_taken(tmp_path: Path) -> None:
    """Results of a version that wrote 0644 files in 0755 folders: the next start closes them to others (the
    run's folder and everything in it; the results folder itself). What lies outside is not touched."""
    results = tmp_path / "results"
    run_dir = results / "r"
    (run_dir / "agent" / "home").mkdir(parents=True)
    for name in ("transcript.jsonl", "journal.1.jsonl", "agent/process.log", "agent/home/MEMORY.md"):
        (run_dir / name).write_text("conversation")
    outside = tmp_path / "outside.txt"
    outside.write_text("not the run's")
    (run_dir / "link").symlink_to(outside)
    for path in [results, *results.rglob("*"), outside]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)
    lock = RunLock(run_dir, "tui")
    lock.acquire()
    lock.release()
    for path in [results, *results.rglob("*")]:
        if not path.is_symlink():
            assert stat.S_IMODE(path.stat().st_mode) == (0o700 if path.is_dir() else 0o600), path
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644  # a symlink is not followed


def test_the_private_socket_folder_of_a_killed_owner_is_removed_by_the_next(tmp_path: Path) -> None:
    run_dir = tmp_path / "results" / "r"
    holder = hold_lock(run_dir)
    folder = Path(tempfile.mkdtemp(prefix=SOCKET_FOLDER_PREFIX))  # as a control server makes it
    left = socket.socket(socket.AF_UNIX)
    left.bind(str(folder / "control.sock"))
    info = json.loads((run_dir / LOCK_NAME).read_text())
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    (run_dir / LOCK_NAME).write_text(json.dumps({**info, "socket": str(folder / "control.sock")}))
    lock = RunLock(run_dir, "tui")
    lock.acquire()
    lock.release()
    left.close()
    assert not folder.exists()


def test_making_an_older_run_folder_private_never_follows_a_link_swapped_in_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent may swap a file of its folder for a link to a host file between the walk's look and its change,
    and nest folders deep: the host files keep their modes, the walk ends, the run folder is private."""
    from engine.run import lock as run_lock

    run_dir = tmp_path / "results" / "r"
    home = run_dir / "agent" / "home"
    deep = home.joinpath(*["d"] * (run_lock.TIGHTEN_DEPTH + 20))
    deep.mkdir(parents=True)
    (deep / "leaf.md").write_text("deep")
    (home / "MEMORY.md").write_text("memory")
    host = tmp_path / "host"
    (host / "dir").mkdir(parents=True)
    (host / "passwd").write_text("root:x:0:0")
    (home / "to-dir").symlink_to(host / "dir")
    os.mkfifo(home / "fifo")
    for path in [tmp_path / "results", *(tmp_path / "results").rglob("*"), host, *host.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)
    listed = run_lock._names

    def swap_after_listing(folder: int) -> list[str]:
        names = listed(folder)
        if "MEMORY.md" in names:  # looked at: now a link to a host file
            os.unlink("MEMORY.md", dir_fd=folder)
            os.symlink(host / "passwd", "MEMORY.md", dir_fd=folder)
        return names

    monkeypatch.setattr(run_lock, "_names", swap_after_listing)
    lock = RunLock(run_dir, "tui")
    lock.acquire()
    lock.release()
    assert stat.S_IMODE((host / "passwd").stat().st_mode) == 0o644
    assert stat.S_IMODE((host / "dir").stat().st_mode) == 0o755 and stat.S_IMODE(host.stat().st_mode) == 0o755
    assert stat.S_IMODE(run_dir.stat().st_mode) == 0o700 and stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE((home / "fifo").stat().st_mode) == 0o600
    assert stat.S_IMODE((home / "d").stat().st_mode) == 0o700
