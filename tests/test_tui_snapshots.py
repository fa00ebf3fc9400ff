"""Snapshots of the TUI over fixed data (fake engine, prepared results dir, frozen clock)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compare_scene import compare_app, hold_as_playing
from test_report_screen import cursor_on, open_reports, write_report
from test_tui_memory_autopsy import answer_entry, grade, write_run
from textual.pilot import Pilot
from tui_fakes import Scene, wait_until

from mmb_tui.screens.compare_screen import CompareScreen
from mmb_tui.screens.main_screen import MainScreen


def test_main_screen_80x24(snap_compare: Any, scene: Scene) -> None:
    assert snap_compare(scene.app(), terminal_size=(80, 24))


def test_main_screen_200x50_three_runs_side_by_side(snap_compare: Any, scene: Scene) -> None:
    assert snap_compare(scene.app(), terminal_size=(200, 50))


def test_phase_pane_with_untold_facts(snap_compare: Any, scene: Scene) -> None:
    assert snap_compare(scene.app(), terminal_size=(100, 48), press=["v"])


def test_phase_pane_80x24_keeps_the_untold_facts_in_view(snap_compare: Any, scene: Scene) -> None:
    # the clock takes two lines, not seven, at this height (issue 25, point 10)
    assert snap_compare(scene.app(), terminal_size=(80, 24), press=["v"])


def test_fact_editor(snap_compare: Any, scene: Scene) -> None:
    assert snap_compare(
        scene.app(), terminal_size=(80, 24), press=["e", *"family", "tab", *"2.4", "tab", *"Tom is allergic"]
    )


def test_report_browser_with_an_expanded_imperfect_answer(snap_compare: Any, scene: Scene) -> None:
    # newest entry expanded; down to its first imperfect answer and open it
    assert snap_compare(scene.app(), terminal_size=(100, 32), press=["r", *["down"] * 5, "enter"])


def test_help_screen(snap_compare: Any, scene: Scene) -> None:
    assert snap_compare(scene.app(), terminal_size=(90, 40), press=["question_mark"])


def test_expanded_evaluation_in_the_transcript(snap_compare: Any, scene: Scene) -> None:
    async def open_answer(pilot: Pilot[None]) -> None:
        await pilot.pause()
        screen = pilot.app.screen
        assert isinstance(screen, MainScreen)
        screen.open_evaluation("hermes-1", "3.2")
        await pilot.pause()

    assert snap_compare(scene.app(), terminal_size=(80, 24), run_before=open_answer)


def test_a_run_played_by_another_process_is_shown_attached(snap_compare: Any, scene: Scene) -> None:
    owner = "pid 4242 on bench-1 (headless, since 2026-08-20 09:58:12 UTC)"
    view = scene.engine.views["hermes-1"]
    scene.engine.views["hermes-1"] = view.model_copy(
        update={"status": "running", "reason": f"played by {owner}", "owner": owner}
    )
    assert snap_compare(scene.app(), terminal_size=(80, 24), press=["down"])


async def open_comparison(pilot: Pilot[None]) -> None:
    await pilot.press("c")
    screen = pilot.app.screen
    assert isinstance(screen, CompareScreen)
    await wait_until(pilot, lambda: screen.loaded)
    await pilot.pause()


def test_comparison_screen_with_a_chart(snap_compare: Any, tmp_path: Path) -> None:
    assert snap_compare(compare_app(tmp_path), terminal_size=(110, 34), run_before=open_comparison)


def test_comparison_screen_80x24_marks_a_run_still_playing(snap_compare: Any, tmp_path: Path) -> None:
    # issue 25, point 7: demo.r3 plays (left out, "+1 playing"); the table fits, the legend covers no bar
    app = compare_app(tmp_path)
    lock = hold_as_playing(tmp_path / "results", "demo.r3")
    try:
        assert snap_compare(app, terminal_size=(80, 24), run_before=open_comparison)
    finally:
        lock.release()


def test_comparison_screen_80x24_counts_a_whole_row_still_playing(snap_compare: Any, tmp_path: Path) -> None:
    # issue 35, item 5: solo plays (no line, its note below the chart), demo.r3 too: the heading counts both
    app = compare_app(tmp_path)
    locks = [hold_as_playing(tmp_path / "results", run_id) for run_id in ("demo.r3", "solo")]
    try:
        assert snap_compare(app, terminal_size=(80, 24), run_before=open_comparison)
    finally:
        for lock in locks:
            lock.release()


def test_report_browser_80x24_an_answer_beside_its_memory_line(snap_compare: Any, scene: Scene) -> None:
    # issue 33: the memory file at the line behind a wrong answer, before and after the change that mattered
    old, new = "- locker code 4417", "- locker code 5820 (new locker)"
    files = [{"USER.md": f"Sam, runs Tuesdays\n{line}\n- bike: blue\n"} for line in (old, new, old)]
    answer = grade("3.1", "What is my locker code?", "5820", "It's 4417.")
    write_run(scene.results, "hermes-1", [(0, {}), (10, files[0]), (20, files[1]), (30, files[2])], answer)
    memory = "lost — 5820 was at USER.md:2 (written in phase 3 by memory replace #18); gone at phase 4"
    write_report(scene, answer_entry("hermes-1", answer, memory))

    async def on_the_answer(pilot: Pilot[None]) -> None:
        screen = await open_reports(pilot.app, pilot)  # type: ignore[arg-type]
        await cursor_on(pilot, screen, "hermes-1", "3.1")

    assert snap_compare(scene.app(), terminal_size=(80, 24), run_before=on_the_answer)
