"""A local agent's memory files read for the run's memory history (``AgentAdapter.memory_files``): the same files
a snapshot copies (``adapters/local/files/agent_files.py`` ``copy_memory``: ``files`` and ``folders`` alike), each read through
``AgentFolder`` (a regular file of one name, never through a link, at most ``MEMORY_FILE_LIMIT`` bytes). A file
that is not one (a link, a FIFO, a folder, too long) is left out of the history and logged, as a copy leaves it
out and notes it."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from adapters.local.files.agent_files import MEMORY_FILE_LIMIT
from adapters.local.files.safe_files import AgentFileError, AgentFolder

log = logging.getLogger(__name__)


def read_memory(
    folder: AgentFolder, files: Sequence[tuple[Path, str]], folders: Sequence[tuple[Path, str, str]] = ()
) -> dict[str, bytes]:
    """``{name in the memory: bytes}`` of ``files`` (``(source, name)``) and, for each ``(folder, suffix,
    prefix)`` of ``folders``, of its names ending in ``suffix`` as ``prefix + name``; absent files are left out."""
    wanted = list(files)
    for source_dir, suffix, prefix in folders:
        try:
            names = folder.names(source_dir)
        except AgentFileError as exc:
            log.warning("memory history: %s", exc)
            continue
        wanted += [(source_dir / name, prefix + name) for name in names if name.endswith(suffix)]
    found: dict[str, bytes] = {}
    for source, name in wanted:
        try:
            data = folder.read(source, MEMORY_FILE_LIMIT)
        except AgentFileError as exc:
            log.warning("memory history: left out %s: %s", name, exc)
            continue
        if data is not None:
            found[name] = data
    return found
