"""The comparison screen (``c``): every run, repeated run and matrix cell of config.jsonc that has results,
side by side — the table of ``mmb-tui compare`` (score and each check type as mean [95 % CI], pass^k,
coverage, persona faults, cost, tokens) and a bar chart of the mean score per check type, a bar per row
(``textual-plotext``). Figures are read from the saved states in a worker thread (``engine/comparison/compare.py``),
so a large results folder never blocks the screen; ``ctrl+r`` reads them again.

A run still playing (its lock held: by this app, another process or for a Ray node) is left out of every
figure until it ends, as ``mmb-tui compare`` does: its row's ``n`` says ``+1 playing``, the heading counts them
all and names a row whose runs all play (it has no line in the table, only a note under the chart). At 80 columns the table keeps the columns that fit (pass^k as its
first and last value); the line under it gives the highlighted row's runs and every figure the table leaves
out. The chart's legend is a line of its own above it (plotext's would cover the first bars).
"""

from __future__ import annotations

from pathlib import Path

from rich.cells import cell_len
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static
from textual_plotext import PlotextPlot

from engine.comparison.compare import config_rows, figures_of, pass_k_label, table_rows
from engine.comparison.figures import GroupFigures
from engine.config import ConfigError, load_config
from engine.report.prices import usd
from engine.run.lock import held

SCORE = "Score"  # the chart's first bar group: the headline
PALETTE = [  # a colour per row, its bars' and its legend's (textual-plotext's own sequence)
    (0, 130, 200),
    (60, 180, 75),
    (230, 25, 75),
    (255, 225, 25),
    (245, 130, 48),
    (145, 30, 180),
    (70, 240, 240),
    (240, 50, 230),
    (180, 225, 40),
    (250, 190, 212),
    (0, 128, 128),
    (220, 190, 255),
]
KEPT = 3  # columns a narrow table always keeps: run / group, n, score
PASS_K, COST = 3, 6  # the pass^k and cost columns of ``table_rows``: shortened in a narrow table


def pass_k_span(values: list[float | None]) -> str:
    """pass^k in few cells: ``0.61…0.17`` for k = 1 and k = n (as ``pass_k_label`` up to n = 2)."""
    if len(values) <= 2:
        return pass_k_label(values)
    return "…".join(pass_k_label([v]) for v in (values[0], values[-1]))


def fit_columns(header: list[str], rows: list[list[str]], room: int) -> list[int]:
    """The columns shown in ``room`` cells (each padded by one cell on both sides): every one that fits, in
    order, the first ``KEPT`` always."""
    widths = [2 + max(cell_len(cells[i]) for cells in [header, *rows]) for i in range(len(header))]
    shown = list(range(len(header)))
    while len(shown) > KEPT and sum(widths[i] for i in shown) > room:
        shown.pop()
    return shown


def heading(figures: list[GroupFigures], playing: int, whole: list[str]) -> str:
    """``Comparison — 2 rows, 5 runs with results, 2 playing (left out; all of solo)``: the runs still playing
    are counted here, where they show at any size (a row whose runs all play is only a note under the chart)."""
    if not figures and not playing:
        return "Comparison"
    runs = sum(fig.n for fig in figures)
    text = f"Comparison — {plural(len(figures), 'row')}, {plural(runs, 'run')} with results"
    if playing:
        text += f", {playing} playing (left out{'; all of ' + ', '.join(whole) if whole else ''})"
    return text


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


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
        self._header: list[str] = []  # the table's columns, all of them (``table_rows``)
        self._rows: list[list[str]] = []  # their cells, a row per figure
        self._hidden: list[int] = []  # the columns left out at this width: said under the table

    def compose(self) -> ComposeResult:
        yield Static("Comparison — reading results…", id="compare-header")
        yield DataTable(id="compare-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="compare-detail")
        yield Static("", id="compare-legend")
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
        results = config.results_path()
        left_out: list[str] = []  # every run left out while it plays, a whole row's too (it has no figures)

        def playing(run_id: str) -> bool:
            if held(results / run_id):
                left_out.append(run_id)
                return True
            return False

        rows = config_rows(config)
        figures, problems = figures_of(config, rows, playing=playing)
        shown = {fig.name for fig in figures}
        whole = [name for name, run_ids in rows if name not in shown and set(run_ids) & set(left_out)]
        self.app.call_from_thread(self.show, figures, problems, len(left_out), whole)

    def show(
        self,
        figures: list[GroupFigures],
        problems: list[str],
        playing: int = 0,
        whole: list[str] | None = None,
    ) -> None:
        """Fill the table, the chart and the notes with ``figures``; the heading counts the ``playing`` runs
        left out, and names the rows ``whole`` that have no line because every run of theirs plays."""
        self.figures, self.problems, self.loaded = figures, problems, True
        self.query_one("#compare-header", Static).update(Text(heading(figures, playing, whole or [])))
        self._header, self._rows = table_rows(figures)
        self._fill_table()
        self._chart(figures)
        notes = problems or ([] if figures else ["No run of config.jsonc has results yet: start one (s)."])
        hint = "score, types: mean [95% CI] over runs (bootstrap) · pass^k k=1..n · Esc back"
        self.query_one("#compare-notes", Static).update(Text("\n".join([*notes, hint]), style="dim"))

    def on_resize(self) -> None:
        if self.loaded:
            self._fill_table()

    def _fill_table(self) -> None:
        """The columns that fit the screen's width; the others are said under the table."""
        table: DataTable[str] = self.query_one(DataTable)
        row = table.cursor_row
        table.clear(columns=True)
        header, rows = list(self._header), [list(cells) for cells in self._rows]
        room = self.size.width - 2  # a vertical scrollbar's room
        shown = fit_columns(header, rows, room)
        if len(shown) < len(header):  # narrow: pass^k as its span, the cost as its total, and what fits
            header[PASS_K] = "pass^1…n"
            for cells, fig in zip(rows, self.figures, strict=True):
                cells[PASS_K] = pass_k_span(fig.pass_k)
                cells[COST] = usd(fig.cost) if fig.cost is not None else "–"
            shown = fit_columns(header, rows, room)
        said = [i for i in shown if any(a[i] != b[i] for a, b in zip(rows, self._rows, strict=True))]
        self._hidden = sorted({i for i in range(len(header)) if i not in shown} | set(said))
        if self.figures:
            table.add_columns(*(header[i] for i in shown))
            for cells in rows:
                table.add_row(*(cells[i] for i in shown), key=cells[0])
            table.move_cursor(row=min(row, len(rows) - 1))
        self._show_detail(table.cursor_row)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail(event.cursor_row)

    def _show_detail(self, row: int) -> None:
        """The highlighted row's runs (those playing and those without a result named) and the figures the
        table leaves out or shortens at this width."""
        detail = self.query_one("#compare-detail", Static)
        if not 0 <= row < len(self.figures):
            detail.update("")
            return
        fig, cells = self.figures[row], self._rows[row]
        parts = [f"{fig.name}: {', '.join(fig.runs)}"]
        if fig.playing:
            parts.append(f"still playing, left out: {', '.join(fig.playing)}")
        if fig.missing:
            parts.append(f"no result yet: {', '.join(fig.missing)}")
        if fig.finished < fig.n:
            parts.append(f"finished {fig.finished} of {fig.n} (a stopped run's unasked checks count 0)")
        parts += [f"{self._header[i]} {cells[i]}" for i in self._hidden]
        detail.update(Text(" · ".join(parts)))

    def _chart(self, figures: list[GroupFigures]) -> None:
        chart = self.query_one(PlotextPlot)
        plt = chart.plt
        plt.clear_data()
        plt.clear_figure()
        types = sorted({t for fig in figures for t in fig.types})
        legend = Text()
        if figures:
            groups = [SCORE, *types]
            series = [
                [fig.score.mean, *(fig.types[t].score.mean if t in fig.types else 0.0 for t in types)]
                for fig in figures
            ]
            colours = [PALETTE[i % len(PALETTE)] for i in range(len(figures))]
            plt.multiple_bar(groups, series, color=colours)  # type: ignore[arg-type]  # one colour per series
            plt.ylim(0, 10)
            for fig, (red, green, blue) in zip(figures, colours, strict=True):
                legend.append("██ ", style=f"rgb({red},{green},{blue})")
                legend.append(f"{fig.name}   ")
        self.query_one("#compare-legend", Static).update(legend)
        plt.title("mean score per check type (0–10)")
        chart.refresh()
