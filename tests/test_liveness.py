"""Liveness you can see (issue 12): what a run waits for and for how long, retries as transcript events, the
stuck limits, and the runs table's markers."""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import FORGETFUL, events, fast, kinds, make_config, play
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from tui_fakes import Scene, wait_until

from engine.api import Activity, RunView
from engine.config import ConfigError, load_config, parse_config
from engine.event_summary import summary
from engine.events import Event, TerminationReason
from engine.models.base import Completion, Message, ToolSchema
from engine.models.server import start_server
from engine.placement.scheduler import Scheduler
from engine.run.build import build_run
from engine.run.loop import Run
from engine.run.view import run_view
from mmb_tui import view_format
from mmb_tui.app import make_app
from mmb_tui.view_format import activity_label, age_label, duration_label, status_text
from mmb_tui.widgets.runs_table import RunsTable

NOW = 1_790_000_000.0  # the frozen wall clock of the snapshot


@pytest.fixture
async def server_port() -> AsyncIterator[int]:
    runner, port = await start_server("127.0.0.1", 0, hang_seconds=30)
    yield port
    await runner.cleanup()


class Probe:
    """Records what the run says it waits for at each event of the given kinds."""

    def __init__(self, run: Run, *watched: str) -> None:
        self.run = run
        self.watched = watched
        self.seen: list[tuple[str, Activity]] = []

    def on_event(self, run_id: str, event: Event) -> None:
        if event.kind in self.watched:
            self.seen.append((event.kind, self.run.liveness.activity))


class ProbedModel:
    """Wraps the persona model and records the run's activity during each completion."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.inner = run.persona_model
        self.name = self.inner.name
        self.seen: list[Activity] = []

    async def complete(self, messages: list[Message], tools: list[ToolSchema] | None = None) -> Completion:
        self.seen.append(self.run.liveness.activity)
        return await self.inner.complete(messages, tools)


async def test_the_run_says_what_it_waits_for_and_when_it_last_did_something(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    run = build_run(config, "r", tune=fast)
    probe = Probe(run, "message_sent", "agent_replied", "tool_called")
    run.observers.append(probe)
    model = ProbedModel(run)
    run.persona_model = model
    before = time.time()
    assert await run.run() is TerminationReason.FINISHED
    assert model.seen and {a.waiting_for for a in model.seen} == {"persona model"}
    assert all(a.since is not None and a.since >= before for a in model.seen)
    waits = {kind: {a.waiting_for for k, a in probe.seen if k == kind} for kind in probe.watched}
    assert waits == {"message_sent": {"agent reply"}, "agent_replied": {"agent reply"}, "tool_called": {""}}
    assert run.liveness.activity == Activity()  # every wait was left
    assert run.liveness.last_event_at is not None and before <= run.liveness.last_event_at <= time.time()
    view = run_view(run, running=False)
    assert view.activity == Activity() and not view.pause_pending and view.last_event_at is not None


async def test_retries_are_transcript_events_and_the_wait_counts_the_attempts(
    tmp_path: Path, server_port: int
) -> None:
    models = {
        "p": {
            "base_url": f"http://127.0.0.1:{server_port}/v1",
            "model": "scripted/persona?faults=1:429",
            "timeout": 10,
            "max_retries": 3,
        }
    }
    config = make_config(
        tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL, "persona": "p"}}, models=models
    )
    run = build_run(config, "r", tune=fast)
    probe = Probe(run, "model_retry")
    run.observers.append(probe)
    assert await run.run() is TerminationReason.FINISHED
    (retry,) = kinds(events(config, "r"), "model_retry")  # the server says Retry-After: 1
    assert (retry.where, retry.attempt, retry.of, retry.delay) == ("persona model", 2, 4, 1.0)
    assert retry.reason.startswith("HTTP 429") and "scripted rate limit (call 1)" in retry.reason
    assert summary(retry).startswith("persona model: attempt 2/4 in 1 s after HTTP 429")
    ((_, activity),) = probe.seen
    assert (activity.waiting_for, activity.attempt, activity.attempts) == ("persona model", 2, 4)
    assert activity.reason.startswith("HTTP 429") and activity.since is not None
    assert activity_label(activity, activity.since + 3) == "⏳ persona 3s 2/4"


async def test_a_virtual_sleep_says_until_when(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"d": {"benchmark": "days", "agent": "chatbot"}})

    def quick(settings: Any) -> None:
        fast(settings)
        settings.time_master_pre_wake = 0.05
        settings.time_master_poll = 0.01

    run = build_run(config, "d", tune=quick)
    probe = Probe(run, "clock_jumped")
    run.observers.append(probe)
    await run._initialise()
    await run.tool_wait("20:05")
    await run.adapter.close()
    ((_, activity),) = probe.seen
    assert (activity.waiting_for, activity.until) == ("virtual sleep", "2026-03-01T20:05:00")
    assert activity_label(activity, time.time()) == "💤 until Sun 20:05"
    assert run.liveness.activity == Activity()


async def test_a_stuck_persona_waits_with_its_reason_and_the_table_marks_it(tmp_path: Path) -> None:
    config = make_config(
        tmp_path,
        {"r": {"benchmark": "full", "agent": FORGETFUL}},
        persona={"model": "scripted/persona", "max_turns_per_phase": 3},
    )
    run = await play(config, "r")
    assert run.termination is TerminationReason.WAITING
    assert run.state.reason == "persona stuck (4 turns in phase 1)"
    view = run_view(run, running=False)
    assert status_text(view, time.time()).plain == "⚠ waiting: persona stuck …"
    assert status_text(view, time.time(), width=60).plain == "⚠ waiting: persona stuck (4 turns in phase 1)"
    for key in ("max_turns_per_phase", "stuck_after"):
        with pytest.raises(ConfigError, match=f"persona.{key}"):
            parse_config(json.dumps({"persona": {key: 0}}))


def test_waits_and_ages_read_at_a_glance() -> None:
    assert [duration_label(s) for s in (0, 45, 125, 3725, 97200)] == ["0s", "45s", "2m05s", "1h02m", "1d03h"]
    assert [age_label(s) for s in (-1, 45, 125, 3725, 97200)] == ["0s", "45s", "2m", "1h", "1d"]
    agent = Activity(waiting_for="agent reply", since=NOW - 12)
    assert activity_label(agent, NOW) == "⏳ agent 12s"
    assert activity_label(Activity(), NOW) == ""
    view = RunView(run_id="r", benchmark="b", agent="a", status="running", activity=agent, pause_pending=True)
    assert status_text(view, NOW).plain == "⏳ agent 12s ⏸"  # a running run says what it waits for
    slow = view.model_copy(update={"activity": agent.model_copy(update={"since": NOW - 40_000})})
    assert status_text(slow, NOW, width=12).plain == "⏳ agent … ⏸"  # the pending pause is never cut
    assert status_text(view.model_copy(update={"activity": Activity()}), NOW).plain == "running ⏸"


def _hanging_config(tmp_path: Path, port: int) -> Path:
    models = {
        "hangs": {
            "base_url": f"http://127.0.0.1:{port}/v1",
            "model": "scripted/persona?faults=1:hang",  # the server holds the first call for 30 s
            "timeout": 60,
            "max_retries": 0,
        }
    }
    make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL, "persona": "hangs"}}, models=models)
    return tmp_path / "config.jsonc"


def _status(pilot: Pilot[None]) -> str:
    cell = pilot.app.query_one(RunsTable).get_cell("r", "status")
    return cell.plain if hasattr(cell, "plain") else str(cell)


async def test_a_hanging_persona_model_shows_in_the_runs_table_within_5_s(
    tmp_path: Path, server_port: int
) -> None:
    config_path = _hanging_config(tmp_path, server_port)
    scheduler = Scheduler(load_config(config_path), tune=fast)
    app = make_app(scheduler, config_path, watch=False)  # the clock ticks: ages follow
    async with app.run_test(size=(80, 24)) as pilot:
        started = time.monotonic()
        await pilot.press("s")
        await wait_until(pilot, lambda: "⏳ persona" in _status(pilot), timeout=5)
        assert time.monotonic() - started < 5
        view = scheduler.view("r")
        assert view.status == "running" and view.activity.waiting_for == "persona model"
        assert view.activity.since is not None and view.last_event_at is not None
        # for how long: the wait grows on the table's own refresh, with no event in between
        await wait_until(pilot, lambda: re.search(r"⏳ persona [1-9]\d*s", _status(pilot)) is not None)
        last = pilot.app.query_one(RunsTable).get_cell("r", "last")
        assert re.fullmatch(r"\d+s", str(last))
        await pilot.press("p")  # a pause never waits behind the hung call: it is cut short (issue 25)
        await wait_until(pilot, lambda: scheduler.view("r").status == "paused", timeout=5)
        assert scheduler.view("r").activity == Activity() and not scheduler.view("r").pause_pending
        await scheduler.stop_all()
        await wait_until(pilot, lambda: not scheduler.running("r"))
        assert scheduler.view("r").activity == Activity()


class TableApp(App[None]):
    """The runs table alone, over fixed views (the rest of the screen is other snapshots' business)."""

    def __init__(self, views: list[RunView]) -> None:
        super().__init__()
        self.views = views

    def compose(self) -> ComposeResult:
        yield RunsTable(id="runs")

    def on_mount(self) -> None:
        self.query_one(RunsTable).show_views(self.views)


def test_liveness_markers_in_the_runs_table(
    snap_compare: Any, scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(view_format, "wall_clock", lambda: NOW)
    views = scene.engine.views
    waits_on_persona = Activity(
        waiting_for="persona model", since=NOW - 125, attempt=2, attempts=4, reason="HTTP 429"
    )
    rows = [
        views["chatbot-1"].model_copy(
            update={"activity": waits_on_persona, "pause_pending": True, "last_event_at": NOW - 4}
        ),
        views["hermes-1"].model_copy(
            update={
                "reason": "persona stuck (4 turns in a row without a valid tool call: echo)",
                "last_event_at": NOW - 700,
            }
        ),
        views["openclaw-1"].model_copy(
            update={
                "status": "running",
                "activity": Activity(waiting_for="agent reply", since=NOW - 42),
                "last_event_at": NOW - 42,
            }
        ),
        views["openclaw-1"].model_copy(
            update={
                "run_id": "days-1",
                "status": "running",
                "activity": Activity(waiting_for="virtual sleep", since=NOW - 3, until="2026-03-03T07:00:00"),
                "last_event_at": NOW - 3,
            }
        ),
        views["chatbot-1"].model_copy(update={"run_id": "idle-1", "status": "running", "last_event_at": NOW}),
    ]
    assert snap_compare(TableApp(rows), terminal_size=(80, 8))
