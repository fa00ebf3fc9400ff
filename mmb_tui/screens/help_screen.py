"""Every key binding, grouped (the footer shows the common ones, this shows all), and a legend of what the
screens show: the transcript's markers, the runs pane's columns, the statuses and the other glyphs."""

from __future__ import annotations

from typing import get_args

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from engine.events import MARKERS, Event, RunStatus
from mmb_tui.transcript.event_render import ACTION_MARKERS, TUI_MARKERS
from mmb_tui.view_format import STATUS_STYLES

HelpSection = tuple[str, list[tuple[str, str]]]


def marker_meanings() -> dict[str, str]:
    """What each transcript marker means: the first line of its event's docstring ("🔧 a persona tool call
    and its result."), one line per marker as the TUI shows it (the two compactions share ✂)."""
    union = get_args(get_args(Event)[0])
    meanings: dict[str, list[str]] = {}
    for event_type in union:
        kind = event_type.model_fields["kind"].default
        marker = TUI_MARKERS.get(kind, "•")
        doc = (event_type.__doc__ or kind).strip().splitlines()[0]
        doc = doc.removeprefix(MARKERS.get(kind, "•")).strip(" .")
        doc = doc.replace("``", "")
        if kind == "agent_compacted":
            doc = "the agent compacted its own context (reported by it; grades are not affected)"
        meanings.setdefault(marker, []).append(doc)
    for action, glyph in ACTION_MARKERS.items():  # the agent's own actions, each by what it did
        if action != "other":
            meanings.setdefault(glyph, []).append(f"the agent's own tool call: a {action}")
    return {marker: "; ".join(docs) for marker, docs in meanings.items()}


STATUS_MEANINGS: dict[RunStatus, str] = {
    "idle": "not started here; a stopped run resumes from its state with s",
    "running": "playing; what it waits for follows",
    "paused": "paused by the operator (or at quit); p resumes",
    "waiting": "a fault outlived its retries, or the persona is stuck; p resumes",
    "finished": "played to its end",
    "crashed": "a bug: reported; s resumes after the fix",
    "error": "its config cannot start it; the reason says why",
}

GLYPHS: list[tuple[str, str]] = [
    ("✂ column", "compactions the agent reported (its own context; grades are not affected)"),
    ("Evals", "graded checks · average score so far (out of 10) · cost so far where models have prices"),
    ("Clock", "the run's clock: virtual time in multi-day benchmarks, with the date"),
    ("▸", "folded: Enter shows the whole event (▸ +n lines: n more lines)"),
    ("── Thu 20 Aug ──", "a new day begins in the transcript (times restart after a night)"),
    ("⛔ / ✔", "the next phase waits for the gates listed / is open"),
    ("✔ 10 / ○ –", "a check of the phase graded (its score) / not yet graded"),
    ("⏳ persona 1m05s 2/4", "a running run waits for the persona model: for how long, attempt k of n"),
    ("⏳ agent 12s / 💤 until 07:00", "… waits for the agent's reply / sleeps until a virtual time"),
    ("Last", "the age of the run's last event (a run that says nothing for long may be stuck)"),
    ("⚠ / ⏸", "a run waiting for the operator / a pause still pending"),
    ("↗", "a run another process plays (its owner in the status line): watched and steered from here"),
    ("⬡", "a run played on a Ray node for this engine (the node in its status line)"),
    ("⏩", "clock jumps so far (the phase pane's clock turns amber)"),
    ("#12–#340", "in a status line: a window of older events; End loads the tail"),
]


def legend() -> list[tuple[str, Table]]:
    """The legend's sections, each a two-column table."""
    markers = _table()
    for marker, meaning in marker_meanings().items():
        markers.add_row(marker, meaning)
    statuses = _table()
    for status, meaning in STATUS_MEANINGS.items():
        statuses.add_row(Text(status, style=STATUS_STYLES.get(status, "")), meaning)
    glyphs = _table()
    for glyph, meaning in GLYPHS:
        glyphs.add_row(glyph, meaning)
    return [("Transcript markers", markers), ("Statuses", statuses), ("Columns and glyphs", glyphs)]


def _table() -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(min_width=12, style="bold")
    table.add_column()
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark,f1", "close", "Close")]

    def __init__(self, sections: list[HelpSection]) -> None:
        super().__init__(classes="dialog-screen")
        self.sections = sections

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog", id="help"):
            yield Static("MarathonMemBench — keys", classes="dialog-title")
            for title, rows in self.sections:
                table = _table()
                for key, description in rows:
                    table.add_row(key, description)
                yield Static(Text(title, style="bold underline"), classes="help-section-title")
                yield Static(table)
            yield Static("Legend", classes="dialog-title")
            for title, table in legend():
                yield Static(Text(title, style="bold underline"), classes="help-section-title")
                yield Static(table)
            yield Static(
                "Commands reach a run between persona turns and are recorded in its transcript. "
                "ctrl+p finds any action by name. Esc closes this screen.",
                classes="hint",
            )

    def action_close(self) -> None:
        self.dismiss(None)
