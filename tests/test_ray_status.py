"""One status of a run on Ray for every front end (``engine/placement/status.py``): placing with what it waits
for, restarting with its restart, the back-off left and why, playing with its node, short for a table and whole
for a header or the headless output; and a cause cut to fit a line after a whole word (``crash_cause.clip``).
Without Ray."""

from __future__ import annotations

import pytest

from engine.api import Placement, RunView
from engine.placement.crash_cause import clip
from engine.placement.status import placement_text, seconds_label

NOW = 1_800_000_000.0
NODE = "1a2b3c@gpu-node-2"


def _view(**placement: object) -> RunView:
    return RunView(
        run_id="r0",
        benchmark="max",
        agent="chatbot",
        node=NODE,
        placement=Placement.model_validate({"restarts": 3, "node_short": "1a2b@gpu-node-2", **placement}),
    )


def test_a_run_played_here_has_no_placement_line() -> None:
    view = RunView(run_id="r0", benchmark="max", agent="chatbot")
    assert placement_text(view, NOW) == "" and placement_text(view, NOW, short=True) == ""


@pytest.mark.parametrize(
    ("detail", "whole", "short"),
    [
        (
            "waiting for room for 1 CPU, 1.75 GB",
            "placing on Ray: waiting for room for 1 CPU, 1.75 GB",
            "placing: waiting for room for 1 CPU, 1.75 GB",
        ),
        ("starting on 1a2b3c@gpu-node-2", "placing on Ray: starting on 1a2b3c@gpu-node-2", None),
        ("", "placing on Ray", "placing"),
    ],
)
def test_a_first_placement_says_what_it_waits_for(detail: str, whole: str, short: str | None) -> None:
    view = _view(stage="placing", detail=detail)
    assert placement_text(view, NOW) == whole
    assert placement_text(view, NOW, short=True) == (short or whole.replace("placing on Ray", "placing"))


@pytest.mark.parametrize("restart", [1, 2, 3])
def test_a_restart_placed_again_says_it_is_a_restart_not_a_first_placement(restart: int) -> None:
    view = _view(stage="placing", detail="waiting for room for 2 CPU, 0.25 GB", restart=restart)
    text = placement_text(view, NOW)
    assert text == f"restart {restart}/3: placing on Ray: waiting for room for 2 CPU, 0.25 GB"
    assert placement_text(view, NOW, short=True).startswith(f"restart {restart}/3: placing: ")


@pytest.mark.parametrize(
    ("left", "said"),
    [
        (27.2, "in 28s"),
        (27.0, "in 27s"),
        (65, "in 1m05s"),
        (1.0, "in 1s"),
        (0.2, "in 1s"),
        (0, "now"),
        (-4, "now"),
    ],
)
def test_a_restart_counts_its_back_off_down_to_now(left: float, said: str) -> None:
    cause = "its Ray actor on 1a2b3c@gpu-node-2 died: The actor is dead because its node has died."
    view = _view(stage="restarting", detail=cause, restart=2, resume_at=NOW + left)
    assert placement_text(view, NOW) == f"restart 2/3 {said}: {cause}"
    assert placement_text(view, NOW, short=True) == f"restart 2/3 {said}"  # a table's column: no cause


def test_a_restart_a_minute_on_is_not_stale() -> None:
    view = _view(stage="restarting", detail="died", restart=1, resume_at=NOW + 2)
    assert placement_text(view, NOW) == "restart 1/3 in 2s: died"
    assert placement_text(view, NOW + 62) == "restart 1/3 now: died"  # never "in 2 s" a minute later


def test_a_playing_run_names_its_node_whole_or_by_its_shortest_unique_name() -> None:
    view = _view(stage="playing")
    assert placement_text(view, NOW) == f"on {NODE}"
    assert placement_text(view, NOW, short=True) == "1a2b@gpu-node-2"
    bare = view.model_copy(update={"placement": Placement(stage="playing")})
    assert placement_text(bare, NOW, short=True) == NODE  # no short name known: the full one


@pytest.mark.parametrize(
    ("seconds", "label"),
    [(0, "0s"), (0.3, "1s"), (59.4, "1m00s"), (59, "59s"), (60, "1m00s"), (3599, "59m59s")],
)
def test_seconds_are_said_as_a_countdown_reads(seconds: float, label: str) -> None:
    assert seconds_label(seconds) == label


@pytest.mark.parametrize(
    ("text", "limit", "clipped"),
    [
        ("The actor is dead because its node has died.", 100, "The actor is dead because its node has died."),
        ("The actor is dead because its node has died.", 28, "The actor is dead because…"),
        ("The actor is dead because its node has died.", 30, "The actor is dead because its…"),
        ("The actor is dead because its node has died.", 31, "The actor is dead because its…"),
        ("ModuleNotFoundError: No module named 'json5'", 25, "ModuleNotFoundError: No…"),
        ("a\n  b\tc", 10, "a b c"),
        ("Supercalifragilistic", 8, "Superca…"),  # one word longer than the line: cut, it is all there is
        ("x, y; z: and so on", 12, "x, y; z…"),
    ],
)
def test_a_line_is_cut_after_a_whole_word(text: str, limit: int, clipped: str) -> None:
    assert clip(text, limit) == clipped
    assert len(clip(text, limit)) <= limit


def test_the_runs_table_and_the_header_say_the_placement_as_headless_does() -> None:
    """The TUI's status (``mmb_tui/view_format.py`` ``status_text``) uses ``placement_text``: the table names the
    node by its short name and counts a restart down; the header says the cause whole, never cut."""
    from mmb_tui.view_format import status_text

    playing = _view(stage="playing")
    assert "1a2b@gpu-node-2" in status_text(playing, NOW).plain
    cause = "its Ray actor on 1a2b3c@gpu-node-2 died: The actor is dead because its node has died."
    restarting = _view(stage="restarting", restart=1, resume_at=NOW + 27, detail=cause)
    table = status_text(restarting, NOW).plain
    assert table.endswith("restart 1/3 in 27s") and len(table) <= 26
    header = status_text(restarting, NOW, width=None, every_reason=True).plain
    assert header.endswith(f"restart 1/3 in 27s: {cause}")  # whole
    placing = _view(stage="placing", detail="waiting for room for 1 CPU, 1.75 GB")
    assert status_text(placing, NOW, width=None).plain.endswith(placement_text(placing, NOW))
