"""The selected run's current phase: its text as the persona saw it, checks, gates and untold facts."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from engine.api import RunView
from engine.events import ClockJumped
from mmb_tui.static_text import show_text
from mmb_tui.transcript.event_render import score_style
from mmb_tui.view_format import IN_FLIGHT, STATUS_STYLES, phase_label
from mmb_tui.widgets.virtual_clock import VirtualClock

COMPACT_BELOW = 30  # rows of the pane under which the clock takes two lines, not seven


class PhasePane(VerticalScroll):
    """Read-only; refreshed by the screen when the selected run changes."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: tuple[RunView, ClockJumped | None] | None = None

    def compose(self) -> ComposeResult:
        yield VirtualClock(id="virtual-clock")
        yield Static("", id="phase-title", classes="phase-section")
        yield Static("", id="phase-gates", classes="phase-section")
        yield Static("", id="phase-checks", classes="phase-section")
        yield Static("", id="phase-untold", classes="phase-section")
        yield Static("", id="phase-text", classes="phase-section")

    def on_resize(self) -> None:
        self.query_one(VirtualClock).set_class(self.size.height < COMPACT_BELOW, "-compact")

    def show(self, view: RunView | None, last_jump: ClockJumped | None = None) -> None:
        if view is None:
            self.query_one("#phase-title", Static).update("No run selected")
            return
        if self._shown == (view, last_jump):
            return
        self._shown = (view, last_jump)
        self.query_one(VirtualClock).show(
            view.clock,
            real_time=not view.virtual_time and view.status in IN_FLIGHT,  # a playing run's view knows
            jumps=view.clock_jumps,
            last_jump=last_jump,
        )
        title = Text()
        title.append(f"{view.run_id} ", style="bold")
        title.append(view.status, style=STATUS_STYLES.get(view.status, ""))
        title.append(f"\nPhase {phase_label(view)}", style="bold")
        if view.chapter:
            title.append(f" · {view.chapter}")
        if view.phase_title:
            title.append(f"\n{view.phase_title}", style="bold underline")
        show_text(self.query_one("#phase-title", Static), title)
        show_text(self.query_one("#phase-gates", Static), self._gates(view))
        show_text(self.query_one("#phase-checks", Static), self._checks(view))
        show_text(self.query_one("#phase-untold", Static), self._untold(view))
        show_text(self.query_one("#phase-text", Static), Text(view.phase_text or "(no phase text yet)"))

    @staticmethod
    def _gates(view: RunView) -> Text:
        gates = [gate for gate in view.gates if gate]
        if not gates:
            return Text("✔ next phase open", style="green")
        text = Text("⛔ next phase waits for:", style="bold red")
        for gate in gates:
            text.append(f"\n  • {gate}")
        return text

    @staticmethod
    def _checks(view: RunView) -> Text:
        text = Text(f"Checks ({sum(c.graded for c in view.checks)}/{len(view.checks)} graded)", style="bold")
        for item in view.checks:
            text.append("\n")
            if item.graded:
                score = item.score if item.score is not None else 0.0
                text.append(f"✔ {score:>4g} ", style=score_style(score))
            else:
                text.append("○  –   ", style="dim")
            types = f"[{' '.join(item.check.types)}] " if item.check.types else ""
            text.append(f"{item.check.id} {types}", style="bold")
            text.append(item.check.question)
        return text

    @staticmethod
    def _untold(view: RunView) -> Text:
        count = sum(len(facts) for facts in view.untold.values())
        text = Text(f"Untold facts of the loaded sheets ({count})", style="bold")
        if view.loaded_sheets and not count:
            text.append("\n  ✔ all facts of the loaded sheets told", style="green")
        elif view.facts and not view.loaded_sheets:
            text.append("\n  no sheet loaded yet", style="dim")
        elif not count:
            started = view.status != "idle" or view.phase_index > 0 or view.evaluations > 0
            text.append(
                "\n  shown while the run plays here" if started else "\n  no sheet loaded yet", style="dim"
            )
        for sheet, facts in ((sheet, facts) for sheet, facts in view.untold.items() if facts):
            text.append(f"\n{sheet}", style="bold underline")
            text.append(f" ({len(facts)})", style="dim")
            for fact in facts:
                text.append(f"\n  {fact.id:>5} ", style="bold")
                text.append(fact.text)
        return text
