"""Small text helpers shared by the runs table, the phase pane and the run columns."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text

from engine.api import RunStatus, RunView

STATUS_STYLES: dict[RunStatus, str] = {
    "idle": "dim",
    "running": "bold green",
    "paused": "bold yellow",
    "waiting": "bold magenta",
    "finished": "bold blue",
    "crashed": "bold red",
}

IN_FLIGHT: tuple[RunStatus, ...] = ("running", "paused", "waiting")


def parse_clock(iso: str) -> datetime | None:
    try:
        return datetime.fromisoformat(iso)
    except ValueError:
        return None


def short_clock(iso: str) -> str:
    moment = parse_clock(iso)
    return moment.strftime("%a %d %b %H:%M") if moment else "–"


def compact_clock(iso: str) -> str:
    moment = parse_clock(iso)
    return moment.strftime("%a %d %H:%M") if moment else "–"


def status_text(view: RunView, reason_width: int = 28) -> Text:
    text = Text(view.status, style=STATUS_STYLES.get(view.status, ""))
    if view.reason and view.status in ("waiting", "crashed", "paused"):
        reason = view.reason if len(view.reason) <= reason_width else view.reason[: reason_width - 1] + "…"
        text.append(f": {reason}", style="italic")
    return text


def phase_label(view: RunView) -> str:
    return f"{view.phase_index + 1}/{view.total_phases}" if view.total_phases else "–"


def average_label(view: RunView) -> str:
    return f"{view.average:.2f}" if view.average is not None else "–"
