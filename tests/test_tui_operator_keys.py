"""The operator's points of issue 35, item 5, the screen's side: the run header gives a reason whole at 80
columns, ``q`` offers to detach instead, ``d`` is said in one text everywhere, the overview has a column header,
``a`` is in the footer, and the headless printer uses the TUI's markers."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from textual.widgets import Static
from textual.widgets._footer import FooterKey
from tui_fakes import Scene, scene_events, settle

from engine.api import Activity
from engine.events import ErrorOccurred, OperatorActed, RunEnded, RunStarted, StatusChanged, TerminationReason
from mmb_tui.app import DETACH_TEXT, HELP
from mmb_tui.front_ends.headless import HeadlessPrinter
from mmb_tui.screens.help_screen import HelpScreen
from mmb_tui.screens.quit_screen import QuitScreen
from mmb_tui.transcript.event_render import TUI_MARKERS, marker
from mmb_tui.widgets.dashboard import Dashboard

LONG_REASONS = [
    "agent: HTTP 502 from the gateway at http://127.0.0.1:18789/v1/chat/completions: upstream closed the"
    " connection before sending a response header (hermes restarted twice; see agent.log) [END-A]",
    "persona model: HTTP 429: rate limited by the provider for this key, retry after the window resets in"
    " the organisation's settings page (tier 1, 500 requests per minute) [END-B]",
    "persona stuck: 6 plain-text turns in a row without a tool call; write it a note (m) or step to the next"
    " phase (n) to move it on [END-C]",
]


def _header(app: object, run_id: str) -> str:
    column = app.main.column_for(run_id)  # type: ignore[attr-defined]
    assert column is not None
    text = str(column.query_one(".run-column-header", Static).render())
    return " ".join(text.split())  # as read, whatever the wrapping


@pytest.mark.parametrize("reason", LONG_REASONS)
@pytest.mark.parametrize("status", ["waiting", "crashed", "paused", "back-off"])
async def test_the_run_header_gives_a_long_reason_whole_at_80_columns(
    scene: Scene, reason: str, status: str
) -> None:
    update: dict[str, object] = {"status": status, "reason": reason}
    if status == "back-off":  # counting down to its retry: the failure follows the countdown
        update = {
            "status": "waiting",
            "reason": reason,
            "activity": Activity(waiting_for="back-off", since=1.0),
        }
    scene.engine.views["chatbot-1"] = scene.engine.views["chatbot-1"].model_copy(update=update)
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        header = _header(app, "chatbot-1")
        assert " ".join(reason.split()) in header, header
        assert "…" not in header and header.endswith("phase 3/12")


async def test_a_short_reason_keeps_the_header_on_one_line(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("down")
        await settle(pilot)
        column = app.main.column_for("hermes-1")
        assert column is not None
        header = column.query_one(".run-column-header", Static)
        assert str(header.render()) == "hermes-1 · ⚠ waiting: 429 from model; retry in 8 s · phase 3/12"
        assert header.size.height == 1


# ---- q and d ------------------------------------------------------------------------------------------


async def test_q_with_runs_in_flight_offers_to_detach_instead(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("q")
        screen = app.screen
        assert isinstance(screen, QuitScreen)
        text = " ".join(str(w.render()) for w in screen.query(Static))
        assert "3 runs are in flight" in text and DETACH_TEXT in " ".join(text.split())
        await pilot.press("escape")  # neither: back where it was
        assert app.screen is app.main and scene.engine.stop_all_calls == 0
        await pilot.press("q", "d")
        await pilot.pause()
    assert app.detached == "key" and scene.engine.stop_all_calls == 0  # handed over, not stopped


async def test_q_then_y_still_stops_the_runs_and_quits(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("q", "y")
        await pilot.pause()
    assert scene.engine.stop_all_calls == 1 and not app.detached


async def test_detach_is_said_in_one_text_in_the_palette_the_help_and_the_quit_dialog(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        titles = [str(command.title) for command in app.get_system_commands(app.main)]
        (detach,) = [title for title in titles if title.startswith("Detach")]
        assert detach == f"Detach: {DETACH_TEXT}"
        assert ("d", DETACH_TEXT) in [row for _, rows in HELP for row in rows]
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=200, record=True, file=io.StringIO())
        for widget in app.screen.query(Static):
            console.print(widget.content)
        shown = " ".join(console.export_text().split())
        assert f"d {DETACH_TEXT}" in shown


# ---- the overview's header and the footer ---------------------------------------------------------------


def _line(dashboard: Dashboard, y: int) -> str:
    return "".join(segment.text for segment in dashboard.render_line(y))


@pytest.mark.parametrize("width", [80, 120])
async def test_the_overview_has_a_column_header_over_its_rows(scene: Scene, width: int) -> None:
    app = scene.app()
    async with app.run_test(size=(width, 24)) as pilot:
        await pilot.press("o")
        await settle(pilot)
        dashboard = app.query_one(Dashboard)
        header = _line(dashboard, 0)
        assert re.match(r"\s*Run\s+Status\s+Phase\s+Evals\s+✂\s+Clock", header), header
        first = _line(dashboard, 1)
        assert first.lstrip().startswith("chatbot-1")
        assert header.index("Phase") == first.index("3/12")  # each title over its cells
        assert header.index("Clock") == first.index("20 Aug")
        assert "👤 Morning! Tom turns 6" in _line(dashboard, 2)  # its last event
        assert _line(dashboard, 3).lstrip().startswith("hermes-1")


async def test_the_overview_header_stays_as_it_scrolls_and_clicks_still_select(scene: Scene) -> None:
    for i in range(12):
        run_id = f"extra-{i}"
        scene.engine.views[run_id] = scene.engine.views["chatbot-1"].model_copy(update={"run_id": run_id})
        for event in scene_events(run_id, 0)[:2]:
            scene.engine.emit(run_id, event)
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("o")
        await settle(pilot)
        dashboard = app.query_one(Dashboard)
        await pilot.press(*["down"] * 10)
        await settle(pilot)
        assert app.main.selected_run == "extra-7"
        assert dashboard.scroll_y > 0 and _line(dashboard, 0).lstrip().startswith("Run")
        shown = [_line(dashboard, y) for y in range(1, dashboard.size.height)]
        assert any(line.lstrip().startswith("extra-7") for line in shown)  # the cursor's run is in sight
        await pilot.click(Dashboard, offset=(2, 1))  # the first row under the header
        first = int(dashboard.scroll_y) // 2
        assert app.main.selected_run == dashboard.run_ids[first]


async def test_a_is_in_the_footer_at_80_columns(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        keys = {key.key: key for key in app.main.query(FooterKey)}
        assert "a" in keys and keys["a"].description == "Abort"
        assert all(key.region.right <= 80 for key in keys.values())


# ---- the headless printer's markers -------------------------------------------------------------------


def test_headless_prints_the_tuis_markers_never_a_variation_selector_or_a_joiner(scene: Scene) -> None:
    out = io.StringIO()
    printer = HeadlessPrinter(scene.engine, out)  # type: ignore[arg-type]
    events = [
        RunStarted(run_id="r", benchmark="demo", agent="chatbot"),
        *scene_events("chatbot-1", 0)[1:],
        OperatorActed(action="pause"),
        StatusChanged(status="paused", reason="paused by the operator"),
        ErrorOccurred(message="boom", where="engine"),
        RunEnded(reason=TerminationReason.FINISHED),
    ]
    for event in events:
        before = out.tell()
        printer.on_event("chatbot-1", event)
        printed = out.getvalue()[before:]
        assert printed.startswith(TUI_MARKERS.get(event.kind, "•") + " "), (event.kind, printed)
    printer.note("the log cannot be written")
    assert out.getvalue().splitlines()[-1] == "⚠ the log cannot be written"
    assert "\ufe0f" not in out.getvalue() and "\u200d" not in out.getvalue()
    assert {marker(event.kind).strip() for event in events} <= set(TUI_MARKERS.values())
