"""The TUI's short cuts through Textual and Rich paint what their own paths paint.

``FrontCompositor`` (``mmb_tui/transcript/front_compositor.py``) skips the widgets hidden behind another one or outside
the region repainted; ``one_line`` (``mmb_tui/transcript/lines.py``) renders a folded transcript line without
Rich's wrapping. Both exist for the transcript's append latency (``bench/tui_transcript.py``).
"""

from __future__ import annotations

import pytest
from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual._compositor import Compositor
from textual.geometry import Region
from textual.pilot import Pilot
from textual.strip import Strip
from tui_fakes import Scene, settle

from engine.events import AgentReplied, EvaluationLogged, MessageSent, PersonaThinking, ToolCalled
from mmb_tui.transcript.event_render import folded_lines
from mmb_tui.transcript.front_compositor import FrontCompositor
from mmb_tui.transcript.lines import day_line, highlighted, one_line


def _painted(compositor: Compositor, crop: Region, *, textual_own: bool) -> list[list[Strip | None]]:
    """The strips a repaint of ``crop`` paints: per line of it, per cut inside it."""
    if textual_own:
        plain = Compositor.__new__(Compositor)
        plain.__dict__ = compositor.__dict__  # the same layout, Textual's own rendering
        compositor = plain
    chops = compositor._render_chops(crop, lambda y: True)
    return [
        [strip for cut, strip in chops[y].items() if crop.x <= cut < crop.right]
        for y in range(crop.y, crop.bottom)
    ]


async def _same_as_textual(pilot: Pilot[None]) -> list[str]:
    """The regions where the screen's compositor paints other strips than Textual's would (none expected):
    the whole screen and each visible widget's region, as if it alone were repainted."""
    await settle(pilot)
    compositor = pilot.app.screen._compositor
    assert isinstance(compositor, FrontCompositor)
    crops = [compositor.size.region]
    crops += [region.intersection(clip) for region, clip in compositor.visible_widgets.values()]
    differ = []
    for crop in crops:
        if crop.area and _painted(compositor, crop, textual_own=False) != _painted(
            compositor, crop, textual_own=True
        ):
            differ.append(str(crop))
    return differ


async def test_the_runs_screen_paints_what_textuals_compositor_paints_in_every_layout(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(130, 36), notifications=True) as pilot:
        assert await _same_as_textual(pilot) == []  # three columns side by side, the runs table above
        for key in ("v", "o", "z", "v"):  # the phase pane, the dashboard, one zoomed column, no phase pane
            await pilot.press(key)
            assert await _same_as_textual(pilot) == [], f"after {key}"
        await pilot.press("slash")  # a column's prompt open under its transcript
        assert await _same_as_textual(pilot) == []
        app.notify("A toast over the transcripts", timeout=60)  # a layer above the rest
        assert await _same_as_textual(pilot) == []
        assert any(type(w).__name__ == "Toast" for w in app.screen._compositor.visible_widgets)


async def test_a_repaint_renders_only_the_widgets_that_show_in_it(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(130, 36)) as pilot:
        await pilot.press("z")  # one column: its transcript covers the containers under it
        await settle(pilot)
        compositor = app.screen._compositor
        view = app.query_one("#column-0 TranscriptView")
        rendered = [strips for _region, _clip, strips in compositor._get_renders(view.region)]
        everything = list(Compositor._get_renders(compositor, view.region))
        assert 1 <= len(rendered) <= 2  # the transcript and its scrollbar, if any
        assert len(everything) > len(rendered) + 3  # Textual's: the screen, containers, widgets beside it


def _console() -> Console:
    return Console(width=120, color_system="truecolor", force_terminal=True)


def _rich_line(console: Console, style: Style, text: Text, width: int) -> Strip:
    options = console.options.update(width=width, no_wrap=True, overflow="ellipsis")
    return Strip(console.render_lines(text, options, style=style)[0]).adjust_cell_length(width, style)


LINES = [
    *(
        line
        for event in (
            MessageSent(
                text="Hello there, a long persona message " * 5 + "\nits second line", t="2026-08-19T20:00:00"
            ),
            AgentReplied(text="Noted.\n\tindented\nand a third line", t="2026-08-19T20:00:01"),
            ToolCalled(
                name="facts_mark_told", arguments={"ids": ["1.1"]}, result="ok", t="2026-08-19T20:00:02"
            ),
            PersonaThinking(text="thinking " * 40, t="2026-08-19T20:00:03"),
            EvaluationLogged(check_id="4.2", score=7.5, attempt=1, effective=7.5, question="Where?"),
        )
        for line in folded_lines(event)
    ),
    day_line("2026-08-19"),
    Text("日本語のテキスト、幅の広い文字" * 10, no_wrap=True, overflow="ellipsis", end=""),
    Text("e\u0301 combining " * 20, style="italic"),
    Text("a base style and a span", style="bold", spans=[]),
    Text(""),
]


@pytest.mark.parametrize("width", [1, 2, 7, 40, 117])
def test_a_folded_line_renders_as_richs_render_lines_renders_it(width: int) -> None:
    console, style = _console(), Style(color="white", bgcolor="black")
    for text in LINES:
        for shown in (text, highlighted(text, "line")):
            fast, rich = one_line(console, style, shown, width), _rich_line(console, style, shown, width)
            assert fast.cell_length == width
            assert fast.render(console) == rich.render(console), repr(shown.plain[:40])
