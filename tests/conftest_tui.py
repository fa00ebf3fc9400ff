"""Fixtures for the TUI tests (imported by ``tests/test_tui_*.py``; the lead owns ``conftest.py``).

Deterministic screens: no blinking cursors, frozen clock ticks, fixed data from ``tui_fakes``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, TextArea
from tui_fakes import REPORT_MD, FakeEngine, scene_engine, write_config

from mmb_tui.app import MmbApp, make_app
from mmb_tui.widgets.transcript_view import TranscriptView


@pytest.fixture(autouse=True)
def no_blinking_cursor(monkeypatch: pytest.MonkeyPatch) -> None:
    """A blinking cursor makes snapshots depend on timing."""
    monkeypatch.setattr(Input, "cursor_blink", False)
    monkeypatch.setattr(TextArea, "cursor_blink", False)


@dataclass
class Scene:
    folder: Path
    engine: FakeEngine
    config_path: Path

    @property
    def results(self) -> Path:
        return self.folder / "results"

    def app(self, *, watch: bool = False) -> MmbApp:
        return make_app(self.engine, self.config_path, clock_frozen=True, watch=watch)


@pytest.fixture
def scene(tmp_path: Path) -> Scene:
    """Three runs mid-run (running, waiting, paused), their transcripts and a report.md."""
    engine = scene_engine(tmp_path / "results")
    config_path = write_config(tmp_path, engine.run_ids())
    (tmp_path / "results" / "report.md").write_text(REPORT_MD, encoding="utf-8")
    return Scene(tmp_path, engine, config_path)


async def settle(pilot: Pilot[None]) -> None:
    """Flush coalesced transcript repaints and let messages run (no sleeping)."""
    await pilot.pause()
    for view in pilot.app.query(TranscriptView):
        view.flush()
    for screen in pilot.app.screen_stack:
        for view in screen.query(TranscriptView):
            view.flush()
    await pilot.pause()


async def wait_until(pilot: Pilot[None], predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Let the app run until ``predicate`` holds (for the real engine's asynchronous runs)."""
    import asyncio

    async with asyncio.timeout(timeout):
        while not predicate():
            await pilot.pause(0.01)
