"""Shared pytest fixtures, found by name (never imported).

- ``no_blinking_cursor`` (autouse): a blinking cursor makes snapshots depend on timing.
- ``steady_repaints`` (autouse): transcripts repaint at their fastest pace, however busy the test process is.
- ``scene``: three runs mid-run on a fake engine, their transcripts and a ``report.md`` (``tui_fakes.Scene``).

Plain helpers are imported from their modules: ``engine_helpers`` (configs, whole runs), ``tui_fakes`` (the
fake engine, the scene, Pilot helpers) and ``fixture_agents`` (in-process agents named in configs as
``fixture_agents:<Class>``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, TextArea
from tui_fakes import REPORT_MD, Scene, scene_engine, write_config

from mmb_tui.transcript.repaint_pace import RepaintPace
from mmb_tui.widgets.transcript_view import TranscriptView


@pytest.fixture(autouse=True)
def no_blinking_cursor(monkeypatch: pytest.MonkeyPatch) -> None:
    """A blinking cursor makes snapshots depend on timing."""
    monkeypatch.setattr(Input, "cursor_blink", False)
    monkeypatch.setattr(TextArea, "cursor_blink", False)


@pytest.fixture(autouse=True)
def steady_repaints(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test process is always busy: its transcripts are not slowed as a busy app's are (the pace's own tests
    hand a view their clocks: ``tests/test_tui_viewer_cost.py``)."""
    monkeypatch.setattr(TranscriptView, "pace", RepaintPace(cpu=lambda: 0.0))


@pytest.fixture
def scene(tmp_path: Path) -> Scene:
    """Three runs mid-run (running, waiting, paused), their transcripts and a report.md."""
    engine = scene_engine(tmp_path / "results")
    config_path = write_config(tmp_path, engine.run_ids())
    (tmp_path / "results" / "report.md").write_text(REPORT_MD, encoding="utf-8")
    return Scene(tmp_path, engine, config_path)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """With ``-n 2 --dist loadgroup`` (``make test``): the real agents' tests in one worker, one after the other
    (one pinned install at a time, a gateway's start not beside another's), the Ray tests in one too (one local
    Ray instance at a time); every other test goes to whichever worker is free."""
    for item in items:
        if item.get_closest_marker("agents"):
            item.add_marker(pytest.mark.xdist_group("agents"))
        elif item.path.name.startswith("test_ray_"):
            item.add_marker(pytest.mark.xdist_group("ray"))
