"""The comparison screen (``c``): every run, repeated run and matrix cell of config.jsonc that has results,
side by side — the table of ``mmb-tui compare`` (score and each check type as mean [95 % CI], pass^k,
coverage, persona faults, tokens, cost) and a bar chart of the mean score per check type, a bar per row
(``textual-plotext``). Figures are read from the saved states in a worker thread (``engine/comparison/compare.py``),
so a large results folder never blocks the screen; ``ctrl+r`` reads them again.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static
from textual_plotext import PlotextPlot

from engine.comparison.compare import config_rows, figures_of, table_rows
from engine.comparison.figures import GroupFigures
from engine.config import ConfigError, load_config

SCORE = "Score"  # the chart's first bar group: the headline


class CompareScreen(Screen[None]):
    BINDINGS = [
        Binding("escape,c", "close", "Back"),
        Binding("ctrl+r", "reload", "Reload", tooltip="Read the results again"),
    ]

    def __init__(self, config_path: Path) -> None:
        super().__init__()
        self.config_path = config_path
        self.figures: list[GroupFigures] = []
        self.problems: list[str] = []
        self.loaded = False  # the first reading is done (tests wait for it)

    def compose(self) -> ComposeResult:
        yield Static("Comparison — reading results…", id="compare-header")
        yield DataTable(id="compare-table", cursor_type="row", zebra_stripes=True)
        yield PlotextPlot(id="compare-chart")
        yield Static("", id="compare-notes")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one(DataTable).focus()
        self.action_reload()

    def action_close(self) -> None:
        self.dismiss(None)

    def action_reload(self) -> None:
        self._read()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def _read(self) -> None:
        try:
            config = load_config(self.config_path)
        except ConfigError as exc:
            self.app.call_from_thread(self.show, [], [str(exc)])
            return
        figures, problems = figures_of(config, config_rows(config))
        self.app.call_from_thread(self.show, figures, problems)

    def show(self, figures: list[GroupFigures], problems: list[str]) -> None:
        """Fill the table, the chart and the notes with ``figures``."""
        self.figures, self.problems, self.loaded = figures, problems, True
        runs = sum(fig.n for fig in figures)
        header = f"Comparison — {len(figures)} rows, {runs} runs with results" if figures else "Comparison"
        self.query_one("#compare-header", Static).update(header)
        table: DataTable[str] = self.query_one(DataTable)
        table.clear(columns=True)
        columns, rows = table_rows(figures)
        if figures:
            table.add_columns(*columns)
            for cells in rows:
                table.add_row(*cells, key=cells[0])
        self._chart(figures)
        notes = problems or ([] if figures else ["No run of config.jsonc has results yet: start one (s)."])
        hint = "score and types: mean [95% CI] over the runs (bootstrap) · pass^k k=1..n · Esc back"
        self.query_one("#compare-notes", Static).update(Text("\n".join([*notes, hint]), style="dim"))

    def _chart(self, figures: list[GroupFigures]) -> None:
        chart = self.query_one(PlotextPlot)
        plt = chart.plt
        plt.clear_data()
        plt.clear_figure()
        types = sorted({t for fig in figures for t in fig.types})
        if figures:
            groups = [SCORE, *types]
            series = [
                [fig.score.mean, *(fig.types[t].score.mean if t in fig.types else 0.0 for t in types)]
                for fig in figures
            ]
            names = [fig.name for fig in figures]
            plt.multiple_bar(groups, series, labels=names)  # type: ignore[call-arg]  # the stub says label; plotext takes labels
            plt.ylim(0, 10)
        plt.title("mean score per check type (0–10)")
        chart.refresh()
