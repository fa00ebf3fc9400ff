"""Files change while the app runs; the report parser; the log file; reading transcript tails."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tui_fakes import REPORT_MD, Scene, settle, wait_until, write_config

from engine.events import MessageSent
from engine.report.entries import load_report, parse_report_entries
from mmb_tui.transcript.files import read_tail_events
from mmb_tui.widgets.runs_table import RunsTable


async def test_invalid_config_edit_shows_the_error_and_stops_nothing(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        scene.config_path.write_text('{"runs": {"x": {"benchmark": "demo"}}}', encoding="utf-8")
        assert await app.reload_config() is False
        await pilot.pause()
        banner = app.main.query_one("#banner")
        assert banner.has_class("-visible") and "runs.x.agent" in str(banner.render())
        assert scene.engine.reloaded == [] and scene.engine.stop_all_calls == 0
        assert app.is_running
        # a valid edit with a new run: it shows up and the banner goes
        write_config(scene.folder, [*scene.engine.run_ids(), "newcomer"])
        assert await app.reload_config() is True
        await settle(pilot)
        assert "newcomer" in app.query_one(RunsTable).run_ids
        assert not banner.has_class("-visible")


async def test_the_watcher_reloads_on_a_real_file_change(scene: Scene) -> None:
    app = scene.app(watch=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.3)  # let inotify settle before the write
        write_config(scene.folder, [*scene.engine.run_ids(), "watched"])
        await wait_until(pilot, lambda: bool(scene.engine.reloaded), timeout=10)
        assert "watched" in scene.engine.reloaded[-1].runs
        await pilot.press("q", "y")
    await asyncio.sleep(0)


async def test_diagnostics_go_to_the_log_file(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        scene.config_path.write_text("{ not json", encoding="utf-8")
        await app.reload_config()
        await pilot.pause()
    log = (scene.results / "mmb-tui.log").read_text(encoding="utf-8")
    assert "reload refused" in log


def test_report_entries_newest_first_with_wrapped_imperfect_answers(tmp_path: Path) -> None:
    (tmp_path / "report.md").write_text(REPORT_MD, encoding="utf-8")
    entries = load_report(tmp_path / "report.md")
    assert [e.run_id for e in entries] == ["openclaw-1", "chatbot-1"]
    newest = entries[0]
    assert (newest.evaluations, newest.average, newest.coverage, newest.run_time) == (
        36,
        9.24,
        "36/36",
        "68.6 min",
    )
    first = newest.imperfect[0]
    assert (first.score, first.attempt, first.check_id, first.expected) == (2.5, 2, "3.2", "11")
    assert first.got == "9, I think — Mia 5 and Tom 4"  # joined across the wrapped line
    assert first.comment == "forgot Tom's birthday; found it only after a search"
    assert [a.check_id for a in newest.imperfect] == ["3.2", "20.8", "20.9"]
    assert parse_report_entries("garbage\n📊 orphan line\n") == []


def test_transcript_tail_skips_torn_lines(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    lines = [MessageSent(text=f"m{i}", n=i + 1).model_dump_json() for i in range(500)]
    path.write_text("\n".join(lines) + '\n{"kind": "message_sent", "te', encoding="utf-8")
    events = read_tail_events(path, 100)
    assert [e.n for e in events] == list(range(401, 501))
    assert read_tail_events(tmp_path / "absent.jsonl", 10) == []
    assert json.loads(lines[0])["kind"] == "message_sent"
