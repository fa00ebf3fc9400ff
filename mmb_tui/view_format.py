"""Small text helpers shared by the runs table, the phase pane and the run columns."""

from __future__ import annotations

import time
from datetime import datetime

from rich.cells import cell_len
from rich.text import Text

from engine.api import Activity, RunStatus, RunView
from engine.placement.status import placement_text

STATUS_STYLES: dict[RunStatus, str] = {
    "idle": "dim",
    "running": "bold green",
    "paused": "bold yellow",
    "waiting": "bold magenta",
    "finished": "bold blue",
    "crashed": "bold red",
    "error": "bold red",
}

IN_FLIGHT: tuple[RunStatus, ...] = ("running", "paused", "waiting")
WAITING_MARK = "⚠"  # a run that waits for the operator (a fault outlived its retries, a stuck persona)
PAUSE_PENDING_MARK = "⏸"
ELSEWHERE_MARK = "↗"  # a run another process plays (watched and steered from here)
PLACED_MARK = "⬡"  # a run this engine plays on a Ray node (``RunView.node``)

wall_clock = time.time
"""Now, for "for how long" and the age of the last event (snapshot tests freeze it)."""


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
    return moment.strftime("%d %b %H:%M") if moment else "–"


def phase_label(view: RunView) -> str:
    return f"{view.phase_index + 1}/{view.total_phases}" if view.total_phases else "–"


def compact_usd(amount: float) -> str:
    """A cost in at most five cells: ``$.12``, ``$1.2``, ``$12``, ``$340``, ``$12k``."""
    if amount < 0.995:
        return f"${amount:.2f}".replace("$0.", "$.")
    if amount < 9.95:
        return f"${amount:.1f}"
    if amount < 999.5:
        return f"${amount:.0f}"
    return f"${amount / 1000:.0f}k"


def average_label(view: RunView) -> str:
    return f"{view.average:.2f}" if view.average is not None else "–"


def duration_label(seconds: float) -> str:
    """A wait, to the second: ``45s``, ``2m05s``, ``1h02m``, ``3d04h``."""
    whole = max(0, int(seconds))
    minutes, secs = divmod(whole, 60)
    hours, mins = divmod(minutes, 60)
    days, hrs = divmod(hours, 24)
    if not minutes:
        return f"{secs}s"
    if not hours:
        return f"{minutes}m{secs:02d}s"
    return f"{hours}h{mins:02d}m" if not days else f"{days}d{hrs:02d}h"


def age_label(seconds: float) -> str:
    """An age, coarsely: ``45s``, ``12m``, ``3h``, ``2d``."""
    whole = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if whole >= size:
            return f"{whole // size}{unit}"
    return f"{whole}s"


def activity_label(activity: Activity, now: float) -> str:
    """What a run waits for and for how long: ``⏳ persona 2m05s 2/4``, ``⏳ agent 12s``, ``💤 until Tue 07:00``;
    the back-off after a failure counts down to its end: ``⏳ retrying in 27s``."""
    waited = duration_label(now - activity.since) if activity.since is not None else ""
    match activity.waiting_for:
        case "persona model":
            attempt = f" {activity.attempt}/{activity.attempts}" if activity.attempt else ""
            return f"⏳ persona {waited}{attempt}"
        case "agent reply":
            return f"⏳ agent {waited}"
        case "virtual sleep":
            wake = parse_clock(activity.until)
            return f"💤 until {wake:%a %H:%M}" if wake else "💤 asleep"
        case "back-off":
            left = activity.ends_at - now if activity.ends_at is not None else 0.0
            return f"⏳ retrying in {duration_label(left)}" if left >= 1 else "⏳ retrying now"
    return ""


def status_text(view: RunView, now: float, width: int | None = 26, every_reason: bool = False) -> Text:
    """The runs table's status: what a running run waits for (``running`` between waits), or the status
    and why (``⚠`` marks a run waiting for the operator; one backing off after a failure counts down to its
    next attempt instead, with the failure), and a pause still pending; cut to ``width`` cells (``None``: whole).
    ``every_reason``: also the reason of a running or idle run (who plays it elsewhere, why it stopped), as
    the run's header shows it."""
    style = STATUS_STYLES.get(view.status, "")
    text = Text(no_wrap=width is not None, overflow="ellipsis" if width is not None else "fold")
    if view.owner:
        text.append(f"{ELSEWHERE_MARK} ", style="bold cyan")
    stage = view.placement.stage  # a run on Ray: the same words as the header and headless (placement_text)
    if view.node or stage:
        where = placement_text(view, now, short=True) if stage == "playing" and width is not None else ""
        text.append(f"{PLACED_MARK} {where} " if where else f"{PLACED_MARK} ", style="bold cyan")
    if stage in ("placing", "restarting"):
        text.append(placement_text(view, now, short=width is not None), style=style)
        if width is not None:
            text.truncate(width, overflow="ellipsis")
        return text
    backing_off = view.activity.waiting_for == "back-off"  # waiting, but not for the operator
    doing = activity_label(view.activity, now) if view.status == "running" or backing_off else ""
    if doing:  # a running run shows what it waits for instead of the word
        text.append(doing, style=style)
    else:
        if view.status == "waiting":
            text.append(f"{WAITING_MARK} ", style=style)
        text.append(view.status, style=style)
    if view.reason and (
        every_reason
        or backing_off
        or (not doing and view.status in ("waiting", "crashed", "paused", "error"))
    ):
        said = view.reason.removeprefix(f"{view.status} ")  # "paused by the operator": not "paused: paused …"
        text.append(f" {said}" if said != view.reason else f": {view.reason}", style="italic")
    mark = f" {PAUSE_PENDING_MARK}" if view.pause_pending else ""
    if width is not None:
        text.truncate(width - cell_len(mark), overflow="ellipsis")
    text.append(mark, style=STATUS_STYLES["paused"])
    return text
