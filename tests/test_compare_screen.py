"""The comparison screen (``c``): the table of ``mmb-tui compare`` and a bar chart per check type over the runs,
repeats and matrix cells of config.jsonc that have results."""

from __future__ import annotations

from pathlib import Path

from compare_scene import SCORES, compare_app, hold_as_playing
from textual.widgets import DataTable, Static
from textual_plotext import PlotextPlot
from tui_fakes import Scene, wait_until

from engine.comparison.stats import bootstrap_ci
from mmb_tui.screens.compare_screen import CompareScreen
from mmb_tui.screens.main_screen import MainScreen
from mmb_tui.widgets.runs_table import RunsTable


async def test_c_opens_the_comparison_of_the_configs_groups_and_runs(tmp_path: Path) -> None:
    app = compare_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("c")
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await wait_until(pilot, lambda: screen.loaded)
        assert [fig.name for fig in screen.figures] == ["demo", "solo"]  # "fresh" has no results
        demo = screen.figures[0]
        headline = [sum(s) / 6 for run, s in SCORES.items() if run.startswith("demo.")]
        low, high = bootstrap_ci(headline)
        assert (demo.n, demo.score.mean, demo.score.low, demo.score.high) == (3, sum(headline) / 3, low, high)
        table = screen.query_one(DataTable)
        assert table.row_count == 2
        row = table.get_row("demo")
        assert row[:3] == ["demo", "3", f"{sum(headline) / 3:.2f} [{low:.2f}, {high:.2f}]"]
        # 3.1 right in all 3 runs, 3.2 in 2, 3.3 in 2, 3.4 in 1, 3.5 in 2, 3.6 in 1: pass^3 = 1/6
        assert row[3].replace("…", " ").split()[-1] == f"{1 / 6:.2f}"  # pass^1…3, as its span at 120
        # cost: 3 runs × (50,000 × $1 + 1,000 × $4 + 8,000 × $0.5) per million
        assert demo.cost is not None and abs(demo.cost - 3 * 0.058) < 1e-9
        chart = screen.query_one(PlotextPlot)
        assert chart.size.height >= 8
        assert "mean score per check type" in chart.plt.build()
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_the_comparison_says_when_nothing_has_results(tmp_path: Path) -> None:
    app = compare_app(tmp_path)
    for run_id in SCORES:
        (tmp_path / "results" / run_id / "state.json").unlink()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("c")
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await wait_until(pilot, lambda: screen.loaded)
        assert screen.figures == []
        notes = screen.query_one("#compare-notes", Static)
        assert "No run of config.jsonc has results yet" in str(notes.render())


async def test_the_runs_table_shows_the_cost_and_still_fits_80_columns(scene: Scene) -> None:
    for run_id, view in scene.engine.views.items():
        scene.engine.views[run_id] = view.model_copy(update={"cost": 1.234})
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.query_one(RunsTable)
        assert "$1.2" in str(table.get_cell("chatbot-1", "evals"))
        assert table.virtual_size.width <= 80


async def test_at_80x24_a_run_still_playing_is_marked_and_every_figure_is_in_reach(tmp_path: Path) -> None:
    """Issue 25, point 7: a run still playing is not counted as a result; the table fits 80 columns (the
    figures it leaves out are in the line under it) and the chart's legend covers no bar."""
    app = compare_app(tmp_path)
    lock = hold_as_playing(tmp_path / "results", "demo.r3")
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("c")
            screen = app.screen
            assert isinstance(screen, CompareScreen)
            await wait_until(pilot, lambda: screen.loaded)
            await pilot.pause()
            demo = screen.figures[0]
            assert (demo.runs, demo.playing) == (("demo.r1", "demo.r2"), ("demo.r3",))
            header = str(screen.query_one("#compare-header", Static).render())
            assert header.endswith("3 runs with results, 1 playing (left out)")
            table = screen.query_one(DataTable)
            assert table.get_row("demo")[1] == "2 +1 playing"
            assert table.virtual_size.width <= table.size.width <= 80
            detail = str(screen.query_one("#compare-detail", Static).render())
            assert "still playing, left out: demo.r3" in detail and "tokens p 102000 a 16000" in detail
            assert "AGG 5.0 [0.0, 10.0]" in detail  # a type's figures, out of the table at this width
            chart = screen.query_one(PlotextPlot)
            assert "demo" not in chart.plt.build() and chart.size.height >= 8  # no legend over the bars
            legend = str(screen.query_one("#compare-legend", Static).render())
            assert "██ demo" in legend and "██ solo" in legend
            await pilot.press("down")
            assert str(screen.query_one("#compare-detail", Static).render()).startswith("solo: solo")
    finally:
        lock.release()


async def test_at_80x24_the_heading_counts_every_run_still_playing_a_whole_rows_too(tmp_path: Path) -> None:
    """Issue 35, item 5: a row whose runs all play has no figures, so no line of the table; its note sits below
    the chart, out of sight at 80×24. The heading counts its runs with the others still playing."""
    app = compare_app(tmp_path)
    locks = [hold_as_playing(tmp_path / "results", run_id) for run_id in ("demo.r3", "solo")]
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("c")
            screen = app.screen
            assert isinstance(screen, CompareScreen)
            await wait_until(pilot, lambda: screen.loaded)
            await pilot.pause()
            assert [fig.name for fig in screen.figures] == ["demo"]
            header = str(screen.query_one("#compare-header", Static).render())
            assert "2 runs with results, 2 playing (left out" in header, header
            assert "solo" in header  # the row that has no line yet is named where it shows
            notes = screen.query_one("#compare-notes", Static)
            assert "solo: still playing" in str(notes.render())
            assert screen.query_one("#compare-header", Static).region.bottom <= 24
    finally:
        for lock in locks:
            lock.release()


async def test_the_heading_says_nothing_of_playing_runs_when_none_plays(tmp_path: Path) -> None:
    app = compare_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("c")
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await wait_until(pilot, lambda: screen.loaded)
        header = str(screen.query_one("#compare-header", Static).render())
        assert header == "Comparison — 2 rows, 4 runs with results"
