"""The run's keeper of the agent's memory history and of its own actions (issue 33).

``MemoryKeeper.take`` reads the agent's memory files (``AgentAdapter.memory_files``) and keeps what changed in
``results/<run>/memory/`` (``engine/autopsy/history.py``): at the run's start or resume, after every message
(only when a file changed), at the end of every phase, at each session switch and agent compaction, and at the
run's end. ``MemoryKeeper.actions`` records the tool calls the agent made for the message just answered
(``AgentAdapter.agent_actions``) as ``agent_action`` events. Both run off the event loop where they touch files;
an agent that exposes neither is asked once. A failure here never stops the run: it is an error event and the
history goes on at the next snapshot.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from engine.agents import AdapterError, AgentAction, AgentAdapter
from engine.autopsy.blobs import BlobError
from engine.autopsy.history import MemoryHistory, SnapshotKind
from engine.events import ACTION_TEXT, AgentActed, ErrorOccurred
from engine.run.recorder import Recorder

log = logging.getLogger(__name__)


class MemoryKeeper:
    def __init__(self, recorder: Recorder, adapter: AgentAdapter, run_dir: Path) -> None:
        self.rec = recorder
        self.adapter = adapter
        self.history = MemoryHistory(run_dir)
        # the run's start: a resume plays on from the checkpoint's event count (the transcript is cut back there)
        self.started_at = recorder.state.transcript_events
        self.access = True  # False once the adapter said it has no memory access
        self.exposes_actions = True  # False once the adapter said it exposes no actions

    async def take(self, kind: SnapshotKind) -> None:
        """A snapshot of the memory now (after a message: kept only when a file changed)."""
        if not self.access:
            return
        state = self.rec.state
        n = self.started_at if kind == "start" else state.transcript_events
        moment = (n, state.phase_index, kind, self.rec.clock.iso())
        try:
            files = await asyncio.to_thread(self.adapter.memory_files)
            if files is None:
                self.access = False
                return
            await asyncio.to_thread(self.history.record, files, *moment, kind != "message")
        except (AdapterError, OSError, BlobError) as exc:
            log.warning("memory snapshot (%s) failed: %s", kind, exc)
            self.rec.emit(ErrorOccurred(message=f"memory snapshot ({kind}) failed: {exc}", where="engine"))

    async def actions(self) -> None:
        """The agent's own tool calls since the last look, each an ``agent_action`` event."""
        if not self.exposes_actions:
            return
        try:
            found = await self.adapter.agent_actions()
        except (AdapterError, OSError, ValueError) as exc:
            log.warning("the agent's actions could not be read: %s", exc)
            return
        if found is None:
            self.exposes_actions = False
            return
        phase = self.rec.state.phase_index
        for action in found:
            self.rec.emit(acted(action, phase))


def acted(action: AgentAction, phase_index: int) -> AgentActed:
    """The event of one of the adapter's actions, its texts bounded (``ACTION_TEXT``)."""
    return AgentActed(
        tool=action.tool[:80],
        action=action.kind,
        target=action.target[:300],
        summary=_bounded(action.summary),
        error=_bounded(action.error),
        phase_index=phase_index,
    )


def _bounded(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= ACTION_TEXT else text[: ACTION_TEXT - 1] + "…"
