"""One status of a run another executor (Ray) plays for this engine, for every front end: the runs table (short),
the run's header and the headless output (whole) all say it with ``placement_text`` from the view's
``Placement`` (``engine/api.py``), so they never disagree. Being placed: what it waits for; restarting: which
restart of how many, the back-off left and why its player died; playing: on which node."""

from __future__ import annotations

import math

from engine.api import RunView


def seconds_label(left: float) -> str:
    """A back-off left, counted down to the second as a clock does (27.2 s left: ``28s``): ``28s``, ``1m05s``."""
    whole = max(0, math.ceil(left - 1e-6))
    minutes, secs = divmod(whole, 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def placement_text(view: RunView, now: float, short: bool = False) -> str:
    """The run's placement in one line ("" for a run played here): ``placing on Ray: waiting for room for 1
    CPU, 1.75 GB``; ``restart 1/3 in 27s: its Ray actor on 1a2b3c@gpu2 died: …``; ``on 1a2b3c@gpu2``.
    ``short``: for a table's column (the node by its shortest unique name; a restart without its cause)."""
    placement = view.placement
    restart = f"restart {placement.restart}/{placement.restarts}" if placement.restart else ""
    match placement.stage:
        case "placing":
            head = f"{restart}: " if restart else ""
            where = "placing" if short else "placing on Ray"
            return f"{head}{where}: {placement.detail}" if placement.detail else f"{head}{where}"
        case "restarting":
            left = placement.resume_at - now if placement.resume_at is not None else 0.0
            when = f"{restart} in {seconds_label(left)}" if left > 1e-6 else f"{restart} now"
            return when if short or not placement.detail else f"{when}: {placement.detail}"
        case "playing":
            if short:
                return placement.node_short or view.node
            return f"on {view.node}" if view.node else "on Ray"
    return ""
