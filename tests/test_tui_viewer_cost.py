"""The app's work follows what it shows (issue 25, point 2): a pane out of sight is not updated, a status line
that keeps its height lays nothing out, an appended event costs the same in a long transcript as in a short
one, and zooming on a run played by another process again and again keeps one attachment. Counted, not
timed: the CPU itself is ``bench/viewer_cpu.py``'s."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import ROOT
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Static
from tui_fakes import Scene, settle, wait_until

from engine.api import RunView
from engine.commands import Command, CommandResult
from engine.config import load_config
from engine.events import Event, PersonaThinking
from engine.placement.remote import ControlServer, socket_path
from engine.placement.scheduler import Scheduler
from engine.run.lock import RunLock
from mmb_tui.app import make_app
from mmb_tui.screens.runs_screen import RunsScreen
from mmb_tui.static_text import show_text
from mmb_tui.transcript.repaint_pace import FASTEST, SLOWEST, WINDOW, RepaintPace
from mmb_tui.widgets import transcript_view
from mmb_tui.widgets.phase_pane import PhasePane
from mmb_tui.widgets.run_column import RunColumn
from mmb_tui.widgets.runs_table import RunsTable
from mmb_tui.widgets.transcript_view import TranscriptView


class Layouts:
    """Counts the screen's layouts (each one arranges every widget and repaints those that moved)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        layout = Screen._refresh_layout

        def counted(screen: Screen[Any], *args: Any, **kwargs: Any) -> None:
            self.count += 1
            layout(screen, *args, **kwargs)

        monkeypatch.setattr(Screen, "_refresh_layout", counted)


def calls(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[object]:
    """Every call of ``owner.name`` from now on (its first argument after ``self``), still made."""
    seen: list[object] = []
    method = getattr(owner, name)

    def spy(self: object, *args: Any, **kwargs: Any) -> Any:
        seen.append(args[0] if args else None)
        return method(self, *args, **kwargs)

    monkeypatch.setattr(owner, name, spy)
    return seen


def text_of(app: Any, selector: str) -> str:
    return str(app.query_one(selector, Static).content)


async def test_panes_out_of_sight_are_left_alone_and_brought_up_to_date_when_shown(
    scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = scene.app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, RunsScreen) and screen.selected_run == "chatbot-1"
        await pilot.press("z")  # the runs table out of sight; the phase pane is too
        await settle(pilot)
        shown, tabled = calls(monkeypatch, PhasePane, "show"), calls(monkeypatch, RunsTable, "show_views")
        layouts = Layouts(monkeypatch)
        for evaluations in range(3, 8):  # the selected run's row and phase pane change, nothing shown does
            view = scene.engine.views["chatbot-1"]
            scene.engine.views["chatbot-1"] = view.model_copy(
                update={"evaluations": evaluations, "phase_text": f"Phase text {evaluations}"}
            )
            screen.refresh_views()
            await pilot.pause()
        assert (shown, tabled, layouts.count) == ([], [], 0)

        await pilot.press("v")  # the phase pane comes into view: as the run is now
        await settle(pilot)
        assert text_of(app, "#phase-text") == "Phase text 7"
        await pilot.press("v", "z")  # and the runs table
        await settle(pilot)
        row = app.query_one(RunsTable).get_row("chatbot-1")
        assert str(row[4]).startswith("7 · ")


async def test_a_status_line_that_keeps_its_height_is_repainted_without_a_layout(
    scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    def header() -> Static:
        return app.query_one("#column-0 .run-column-header", Static)

    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        await pilot.press("z")
        await settle(pilot)
        layouts = Layouts(monkeypatch)
        for reason in ("played by pid 11", "played by pid 12", "played by pid 13"):  # in the header only
            scene.engine.views["chatbot-1"] = scene.engine.views["chatbot-1"].model_copy(
                update={"reason": reason}
            )
            screen.refresh_views()
            await pilot.pause()
            assert reason in str(header().content) and header().size.height == 1
        assert layouts.count == 0

        long = "played by " + "a process with a very long name " * 3  # the header takes two lines
        scene.engine.views["chatbot-1"] = scene.engine.views["chatbot-1"].model_copy(update={"reason": long})
        screen.refresh_views()
        await pilot.pause()
        assert layouts.count >= 1 and header().size.height == 2


async def test_show_text_asks_for_a_layout_for_another_height_only(
    scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        banner = app.query_one("#banner", Static)  # height auto; hidden until it has something to say
        show_text(banner, "one line")
        banner.set_class(True, "-visible")
        await settle(pilot)
        asked: list[bool] = []  # the layouts the banner asks for
        refresh = banner.refresh

        def counted(*regions: Any, layout: bool = False, **kwargs: Any) -> Static:
            asked.append(layout)
            return refresh(*regions, layout=layout, **kwargs)

        monkeypatch.setattr(banner, "refresh", counted)
        show_text(banner, "another line")
        await pilot.pause()
        assert asked and not any(asked) and banner.size.height == 1  # repainted, not laid out
        show_text(banner, "three\nlines\nnow")
        await pilot.pause()
        assert asked[-1] and banner.size.height == 3
        banner.set_class(False, "-visible")
        await settle(pilot)
        asked.clear()
        show_text(banner, "out of sight: measured when it shows")
        assert not any(asked)
        banner.set_class(True, "-visible")
        await settle(pilot)
        assert banner.size.height == 1 and "out of sight" in str(banner.content)


def _events(count: int, first: int) -> list[Event]:
    return [
        PersonaThinking(text=f"thought {n}", t="2026-08-19T10:00:00", n=n)
        for n in range(first, first + count)
    ]


async def _styled_per_append(scene: Scene, monkeypatch: pytest.MonkeyPatch, held: int) -> list[int]:
    """Lines styled and layouts for each of 20 events appended to a followed transcript of ``held`` events."""
    styled: list[int] = []
    strips = transcript_view.entry_strips

    def counted(*args: Any, **kwargs: Any) -> Any:
        styled[-1] += 1
        return strips(*args, **kwargs)

    app = scene.app()
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one("#column-0 TranscriptView", TranscriptView)
        view.load(_events(held, 1))
        await settle(pilot)
        view.append(_events(1, held + 1)[0])  # the scrollbar that came with the load takes its width
        await settle(pilot)
        monkeypatch.setattr(transcript_view, "entry_strips", counted)
        layouts = Layouts(monkeypatch)
        for event in _events(20, held + 2):
            styled.append(0)
            view.append(event)
            view.flush()
            await pilot.pause()
        assert view.following and view.events[-1].n == held + 21 and layouts.count == 0
    monkeypatch.undo()
    return styled


async def test_an_appended_event_costs_the_same_in_a_long_transcript_as_in_a_short_one(
    scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = await _styled_per_append(scene, monkeypatch, 60)
    long = await _styled_per_append(scene, monkeypatch, 3900)
    assert short == long and max(short) <= 2  # its own line (and a line a scroll brought up), never more


class Clocks:
    """A process's CPU time and the wall clock, moved by hand."""

    def __init__(self) -> None:
        self.cpu = self.wall = 0.0

    def spend(self, share: float, seconds: float = WINDOW) -> None:
        self.cpu += share * seconds
        self.wall += seconds


def test_repaints_give_way_while_the_process_is_busy_and_come_back_when_it_is_not() -> None:
    clocks = Clocks()
    pace = RepaintPace(cpu=lambda: clocks.cpu, wall=lambda: clocks.wall)
    intervals = []
    for share in (0.1, 0.3, *[0.9] * 7, 0.4, *[0.05] * 6):
        clocks.spend(share)
        intervals.append(pace.next_interval())
    fast, slow = FASTEST, SLOWEST
    assert intervals == [
        *[fast] * 2,  # under the budget
        *[fast * 2, fast * 4, fast * 8, fast * 16, slow, slow, slow],  # over it: doubled, up to the slowest
        slow,  # between half the budget and the budget: as it was
        slow / 2,
        slow / 4,
        slow / 8,
        slow / 16,
        fast,
        fast,  # under half: halved, down to the fastest
    ]
    clocks.wall += WINDOW / 2
    assert pace.next_interval() == fast  # within a window: as decided at its start


async def test_a_transcript_repaints_at_the_pace_of_the_process(
    scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    clocks = Clocks()
    pace = RepaintPace(cpu=lambda: clocks.cpu, wall=lambda: clocks.wall)
    for _ in range(5):
        clocks.spend(1.0)  # a core used: the slowest pace
        pace.next_interval()
    app = scene.app()
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one("#column-0 TranscriptView", TranscriptView)
        view.pace = pace
        await settle(pilot)
        delays: list[float] = []

        def timer(delay: float, _callback: object) -> None:
            delays.append(delay)

        monkeypatch.setattr(view, "set_timer", timer)
        view.flush()  # a repaint now …
        for event in _events(5, 100):
            view.append(event)  # … the next one a second later, with the five events at once
        assert len(delays) == 1 and SLOWEST - 0.5 < delays[0] <= SLOWEST and view.pending == 5


# ---- a run played by another process, attached ----------------------------------------------------------


@dataclass
class Owner:
    """Plays nothing, but holds the run's lock and serves its view and events as an owner does."""

    run_dir: Path
    server: ControlServer
    n: int = 0

    def emit(self) -> None:
        self.n += 1
        event = PersonaThinking(text=f"thought {self.n}", t="2026-08-19T10:00:00", n=self.n)
        with open(self.run_dir / "transcript.jsonl", "a", encoding="utf-8") as handle:
            handle.write(event.model_dump_json() + "\n")
        self.server.on_event(self.run_dir.name, event)


@asynccontextmanager
async def played_here(config_path: Path, run_id: str) -> AsyncIterator[Owner]:
    run_dir = config_path.parent / "results" / run_id
    lock = RunLock(run_dir, "headless")
    lock.acquire()
    view = RunView(run_id=run_id, benchmark="demo", agent="chatbot", status="running")

    async def command(_: Command) -> CommandResult:
        return CommandResult(ok=True, message="done")

    server = ControlServer(socket_path(run_dir), lambda: view, command, run_dir / "transcript.jsonl")
    await server.start()
    lock.announce(socket=str(server.path))
    try:
        yield Owner(run_dir, server)
    finally:
        await server.close()
        lock.release()


def write_config(tmp_path: Path) -> Path:
    raw = {
        "persona": {"model": "scripted/persona"},
        "runs": {
            run_id: {"benchmark": "demo", "agent": "chatbot", "model": "scripted/recall"}
            for run_id in ("other", "r")
        },
        "benchmarks_dir": str(ROOT / "benchmarks"),
        "results_dir": str(tmp_path / "results"),
    }
    path = tmp_path / "config.jsonc"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


def _remote_tasks() -> int:
    """The tasks that follow an owner's socket (two per attachment) or serve it (one per subscriber)."""
    names = ("RemoteRun._guard", "_Subscriber.pump")
    running = [getattr(task.get_coro(), "__qualname__", "") for task in asyncio.all_tasks()]
    return sum(any(name in coroutine for name in names) for coroutine in running)


async def _until(pilot: Pilot[None], predicate: Callable[[], bool]) -> None:
    await wait_until(pilot, predicate)
    await settle(pilot)


async def test_zooming_on_an_attached_run_again_and_again_keeps_its_column_and_one_attachment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_path = write_config(tmp_path)  # "other" first: "r" in the second column
    async with played_here(config_path, "r") as owner:
        for _ in range(30):
            owner.emit()
        scheduler = Scheduler(load_config(config_path), front_end="tui")
        app = make_app(scheduler, config_path, clock_frozen=True, watch=False)
        async with app.run_test(size=(200, 50)) as pilot:
            screen = app.screen
            assert isinstance(screen, RunsScreen)
            screen.selected_run = "r"

            def column() -> RunColumn | None:
                return screen.column_for("r")

            await _until(pilot, lambda: len(owner.server._subscribers) == 1)
            owner.emit()
            await _until(pilot, lambda: (c := column()) is not None and c.transcript.span[1] == owner.n)
            reading = column()
            assert reading is not None and reading.id == "column-1"
            reading.transcript.focus()
            await pilot.press("up", "up")  # the operator reads an event: the view stays where it is
            event, top = reading.transcript.cursor_event, reading.transcript.scroll_y
            remote, tasks = scheduler.slots["r"].remote, _remote_tasks()
            assert remote is not None and remote.alive and tasks == 3 and event is not None
            loaded = calls(monkeypatch, RunColumn, "show_run")
            for _ in range(10):
                await pilot.press("z")  # its own column alone
                owner.emit()
                assert [c.id for c in screen.query(RunColumn) if c.display] == ["column-1"]
                await pilot.press("z")  # both columns again: "other" read again from its file
                owner.emit()
            await _until(pilot, lambda: (c := column()) is not None and c.transcript.span[1] == owner.n)
            assert "r" not in loaded and column() is reading  # never read again, never moved
            transcript = reading.transcript
            assert (transcript.cursor_event, transcript.scroll_y, transcript.following) == (event, top, False)
            numbers = [event.n for event in transcript.events]
            assert numbers == list(range(1, owner.n + 1))  # every event once, in order
            assert scheduler.slots["r"].remote is remote and remote.alive
            assert len(owner.server._subscribers) == 1 and _remote_tasks() == tasks
        await scheduler.stop_all()
