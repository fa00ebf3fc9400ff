"""Watch ``config.jsonc`` and the benchmark folders (watchfiles), yielding once per batch of changes.

The config's folder is watched without recursion (``results/`` lives there and changes all the time);
the benchmarks folder recursively. Editors that save by rename are covered by watching the folder.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from watchfiles import Change, awatch

Changes = set[tuple[Change, str]]


async def _pump(
    paths: list[Path], recursive: bool, keep: Path | None, stop: asyncio.Event, queue: asyncio.Queue[Changes]
) -> None:
    def accept(_change: Change, path: str) -> bool:
        return keep is None or Path(path).name == keep.name

    async for changes in awatch(
        *paths, watch_filter=accept, recursive=recursive, stop_event=stop, debounce=200, step=50
    ):
        await queue.put(changes)


async def watch_paths(config_path: Path, benchmarks_dir: Path, stop: asyncio.Event) -> AsyncIterator[Changes]:
    """Changes to ``config_path`` or anything under ``benchmarks_dir`` until ``stop`` is set."""
    queue: asyncio.Queue[Changes] = asyncio.Queue()
    config_path = config_path.resolve()
    tasks = [asyncio.create_task(_pump([config_path.parent], False, config_path, stop, queue))]
    if benchmarks_dir.is_dir():
        tasks.append(asyncio.create_task(_pump([benchmarks_dir.resolve()], True, None, stop, queue)))
    try:
        while not stop.is_set():
            getter = asyncio.create_task(queue.get())
            stopper = asyncio.create_task(stop.wait())
            done, _ = await asyncio.wait({getter, stopper}, return_when=asyncio.FIRST_COMPLETED)
            stopper.cancel()
            if getter in done:
                yield getter.result()
            else:
                getter.cancel()
    finally:
        stop.set()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
