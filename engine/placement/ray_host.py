"""The player process of a node (made a Ray actor by the driver, ``engine/placement/ray_pool.py``; nothing here
imports Ray): ``RunHost`` plays every run the driver places on its node, each a ``RunActor`` (its own scratch
folder, its own run) on this worker's one asyncio loop, as the local executor plays many runs on one loop.

Why one process per node and not one per run: a Ray worker's start and the engine's import cost about a second
of CPU each, and under load the eight of a matrix competed with the runs for the cores (11–31 s from joining to
the first event); one warm player per node pays it once, and the next runs placed there start at once. Each
run's Ray resources are held by its reservation (a placement group, ``ray_pool.py``), not by this process.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from engine.commands import Command, CommandResult
from engine.config import Config
from engine.placement.preflight import Build
from engine.placement.ray_actor import Pulled, RunActor, Started


class RunHost:
    """Plays the runs one driver placed on this node, each by its key (used as a Ray actor)."""

    def __init__(self) -> None:
        self.players: dict[str, RunActor] = {}

    def where(self) -> tuple[str, int]:
        """This player's host name and process id."""
        return socket.gethostname(), os.getpid()

    async def open(
        self,
        key: str,
        config: Config,
        run_id: str,
        settings: dict[str, Any],
        front_end: str,
        run_files: dict[str, bytes],
        bench_files: dict[str, bytes],
        head: Build | None = None,
    ) -> Started:
        """Start playing ``run_id`` here under ``key``, or say why this node cannot (``Started.problem``);
        ``head``: the driver's project, which this node's must be."""
        player = RunActor(config, run_id, settings, front_end, run_files, bench_files, head)
        self.players[key] = player
        started = await player.start()
        if started.problem:
            await self.close(key)
        return started

    def _player(self, key: str) -> RunActor:
        player = self.players.get(key)
        if player is None:
            raise KeyError(f"no run {key!r} plays on this node")
        return player

    async def pull(self, key: str, acked: int) -> Pulled:
        return await self._player(key).pull(acked)

    async def command(self, key: str, command: Command) -> CommandResult:
        return await self._player(key).command(command)

    async def stop(self, key: str, handed_over: bool = False) -> None:
        await self._player(key).stop(handed_over)

    async def close(self, key: str) -> None:
        """The run's player let go: its run stopped if it still plays (the driver is gone or gave up on it),
        its scratch folder removed."""
        player = self.players.pop(key, None)
        if player is not None:
            await player.stop()
            player.close()

    def playing(self) -> int:
        return len(self.players)
