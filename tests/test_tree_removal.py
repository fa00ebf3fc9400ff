"""A folder the agent could write in is removed without following its links, however deep it nested its folders
(``engine/run/tree_removal.py``): a fresh run's reset of ``results/<run>/``, a player's scratch copy, a sandbox's
support folder. ``shutil.rmtree`` recursed: 5,000 nested folders raised ``RecursionError`` in the engine."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from engine_helpers import FORGETFUL, events, fast, kinds, make_config

from engine.placement.scheduler import Scheduler
from engine.run.tree_removal import remove_tree, remove_tree_quietly

DEEP = 5000


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """Host files the agent aims at: they must stay as they are."""
    outside = tmp_path / "host"
    (outside / "dir").mkdir(parents=True)
    (outside / "dir" / "kept.txt").write_text("kept\n")
    (outside / "canary.txt").write_text("canary\n")
    return outside


def host_unchanged(host: Path) -> None:
    assert (host / "canary.txt").read_text() == "canary\n"
    assert (host / "dir" / "kept.txt").read_text() == "kept\n"
    assert sorted(p.name for p in host.iterdir()) == ["canary.txt", "dir"]


def plant(folder: Path, host: Path) -> None:
    """What a hostile agent leaves in its folder: links to host files and folders, a hard link, a FIFO, a closed
    folder, and folders nested ``DEEP`` levels (made from descriptors: no path is that long) with a link at the
    bottom."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "to-dir").symlink_to(host / "dir")
    (folder / "to-file").symlink_to(host / "canary.txt")
    os.link(host / "canary.txt", folder / "hard")
    os.mkfifo(folder / "fifo")
    (folder / "closed" / "inner").mkdir(parents=True)
    (folder / "closed" / "inner" / "x").write_text("x")
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(DEEP):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.symlink(host / "dir", "leaf", dir_fd=fd)
    os.close(fd)
    (folder / "closed").chmod(0)


def test_a_deep_folder_full_of_links_is_removed_and_what_they_name_is_kept(
    tmp_path: Path, host: Path
) -> None:
    folder = tmp_path / "agent"
    plant(folder, host)
    remove_tree(folder)
    assert not folder.exists()
    host_unchanged(host)
    remove_tree(folder)  # gone already: nothing to do
    link = tmp_path / "link-to-host"
    link.symlink_to(host)
    remove_tree_quietly(link)  # a link at the top is removed itself
    assert not link.exists()
    host_unchanged(host)


async def test_a_fresh_start_of_a_run_whose_agent_nested_folders_deep_removes_them_all(
    tmp_path: Path, host: Path
) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    scheduler = Scheduler(config, tune=fast)
    await scheduler.start("r")
    await scheduler.wait(["r"])
    run_dir = config.results_path() / "r"
    plant(run_dir / "agent" / "home", host)  # as its agent would have left them
    await scheduler.restart("r")
    await scheduler.wait(["r"])
    assert len(kinds(events(config, "r"), "run_started")) == 1  # a fresh transcript
    assert not (run_dir / "agent" / "home" / "d").exists()
    host_unchanged(host)
