"""What the Ray mirror's link tests share (``test_ray_mirror_node.py``, ``test_ray_mirror_head.py``): the host
folder and file the agent aims at, a run folder on a node and on the head, and the swap an agent makes
between the watcher's listing and its reads."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.placement import watcher as watcher_module
from engine.placement.watcher import Changes

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


def _target(host: Host, tmp_path: Path, name: str) -> Path:
    places = {"secret": host.secret, "host folder": host.folder, "host MEMORY.md": host.folder / "MEMORY.md"}
    return Path(name) if name.startswith("/") else places.get(name, tmp_path / "nowhere" / "MEMORY.md")
