"""What the engine does with a local agent's folder as a whole (``results/<run>/agent``, the only place the
boxed agent writes, so every file in it may be a trap): its memory copied out into a snapshot (``copy_memory``)
and its size held to ``agent_disk_mb`` (``size_problem``). Single files go through ``adapters/local/files/safe_files.py``;
the walk and the wipe are ``adapters/local/files/safe_tree.py``'s.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from adapters.local.files.safe_files import AgentFileError, AgentFolder
from adapters.local.files.safe_tree import FolderUsage, remove_tree
from adapters.options import DISK_KEY

log = logging.getLogger(__name__)

MB = 1024 * 1024
MEMORY_FILE_LIMIT = 16 * MB  # a memory file longer than this is not copied into a snapshot (noted)
SKIPPED_NOTE = "skipped.txt"  # in a memory snapshot: what was not copied, and why


def snapshot_name(label: str) -> str:
    """A snapshot's folder name: the label with anything but letters, digits, ``-_.`` made ``_``, no dot first."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in label).lstrip(".") or "snapshot"


def copy_memory(
    folder: AgentFolder,
    target: Path,
    files: Sequence[tuple[Path, str]],
    folders: Sequence[tuple[Path, str, str]] = (),
) -> list[str]:
    """Copy an agent's memory from ``folder`` into a fresh ``target``: ``files`` as ``(source, name in the
    snapshot)``, and for each ``(folder, suffix, prefix)`` of ``folders`` its names ending in ``suffix`` as
    ``prefix + name``. Only regular files of one name are copied, read without following a link
    (``AgentFolder.copy_out``); anything else (a link, a FIFO, a hard link, a folder, a file over
    ``MEMORY_FILE_LIMIT``) is left out, said in ``target``'s ``skipped.txt`` and returned."""
    remove_tree(target)
    target.mkdir(parents=True)
    wanted, skipped = list(files), []
    for source_dir, suffix, prefix in folders:
        try:
            names = folder.names(source_dir)
        except AgentFileError as exc:
            skipped.append(str(exc))
            continue
        wanted += [(source_dir / name, prefix + name) for name in names if name.endswith(suffix)]
    for source, name in wanted:
        try:
            destination = target.joinpath(*AgentFolder(target).parts(name))
            destination.parent.mkdir(parents=True, exist_ok=True)
            folder.copy_out(source, destination, MEMORY_FILE_LIMIT)
        except FileNotFoundError:
            continue
        except AgentFileError as exc:
            skipped.append(str(exc))
    if skipped:
        log.warning("memory snapshot %s left out: %s", target, "; ".join(skipped))
        (target / SKIPPED_NOTE).write_text("".join(f"{line}\n" for line in skipped), encoding="utf-8")
    return skipped


def size_problem(usage: FolderUsage, limit_mb: int, where: Path) -> str:
    """What is wrong with the size of the agent's folder ``where`` (``agent_disk_mb`` = ``limit_mb``), or ""."""
    held = f"{usage.bytes / MB:,.1f} MB in {usage.entries:,} entries"
    if usage.stopped:
        return f"the agent's folder {where} could not be measured ({usage.stopped}; {held} seen): clear it"
    if usage.bytes > limit_mb * MB:
        return (
            f"the agent's folder {where} holds {held}, over {DISK_KEY} ({limit_mb:,} MB): free room in it or "
            f"raise {DISK_KEY}, then resume the run"
        )
    return ""
