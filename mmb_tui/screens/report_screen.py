"""Browse ``results/report.md``: entries newest first by real finish time, filterable, each expandable.

Opening is lazy (issue 12): entries are read up to their headers and ordered, an entry is parsed when its row
is made (the first ``FIRST_ROWS`` at once, the others after the first repaint), and its figures, answers and
faults become tree nodes only when it is expanded (``ReportTree``): a report of a thousand entries opens at
once. ``/`` filters by run, score range and check type (``EntryFilter``). An entry whose run's transcript is
gone is marked, and ``o`` says so instead of opening something else; so it does for a run the app does not
show (``runs``: not in its config), never leaving the operator on another run's tail. Dismisses with an
``AnswerRef`` (run, check, event number) when the operator opens an answer in its transcript; an entry of a run
restarted since (its state does not list it: ``report_plays.py``) is marked and never opened in the new play;
``MainScreen.open_evaluation`` lands on exactly that event. ``x`` exports the answer under the cursor (else its
entry; ``X`` the whole entry) to ``results/exports/``, ``y``/``Y`` copy the same to the clipboard (OSC 52). An
imperfect answer shows its memory autopsy line and the memory file beside it (``widgets/memory_beside.py``,
issue 33). This module owns the screen's state and actions; how entries, answers and faults
read is ``mmb_tui.widgets.report_items`` (every label a ``Text``, never markup).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Input, Static, Tree

from engine.events import EvaluationLogged, Event
from engine.report.entries import (
    FILTER_HELP,
    EntryFilter,
    ImperfectAnswer,
    LazyEntry,
    PersonaFault,
    ReportEntry,
    index_report,
    latest_per_run,
    newest_first,
)
from mmb_tui.screens.report_export import export_path, markdown, write_private
from mmb_tui.screens.report_plays import Plays
from mmb_tui.transcript.seek import events_around
from mmb_tui.widgets.memory_beside import READING, MemoryShelf
from mmb_tui.widgets.report_items import (
    HINT,
    ReportItem,
    answer_detail,
    entry_detail,
    entry_label,
    fault_detail,
)
from mmb_tui.widgets.report_tree import ReportTree

FIRST_ROWS = 100  # entries in the tree before the first repaint; the others come right after it


@dataclass(frozen=True)
class AnswerRef:
    """An answer of the report as ``o`` opens it: its run, its check and its event in the run's transcript."""

    run_id: str
    check_id: str
    event_n: int | None = None  # the ``[transcript #N]`` of the entry; None in entries written before it


def _is_the_answer(event: Event, check_id: str) -> bool:
    return isinstance(event, EvaluationLogged) and event.check_id == check_id


class ReportScreen(Screen[AnswerRef | None]):
    AUTO_FOCUS = "#report-tree"  # never the hidden filter field: the arrows work at once
    BINDINGS = [
        Binding("escape,r", "close", "Back"),
        Binding("o,t", "open_transcript", "Open in transcript"),
        Binding("slash", "edit_filter", "Filter"),
        Binding("ctrl+r", "reload", "Reload"),
        Binding(
            "x",
            "export(False)",
            "Export",
            tooltip="Export the answer under the cursor (else its entry) to a file",
        ),
        Binding("X", "export(True)", "Export entry", show=False, tooltip="Export the whole entry to a file"),
        Binding(
            "y",
            "copy(False)",
            "Copy",
            tooltip="Copy the answer under the cursor (else its entry) to the clipboard",
        ),
        Binding("Y", "copy(True)", "Copy entry", show=False, tooltip="Copy the whole entry to the clipboard"),
    ]

    def __init__(self, report_path: Path, filter_text: str = "", runs: Collection[str] | None = None) -> None:
        """``filter_text``: the filter as the operator last typed it (the main screen keeps it); ``runs``: the
        runs the app shows, the only ones ``o`` can open (None: any)."""
        super().__init__()
        self.report_path = report_path
        self.runs = frozenset(runs) if runs is not None else None
        self.results_dir = report_path.parent
        self.entries: list[LazyEntry] = []  # newest first, all of them (each parsed when first shown)
        self.shown: list[LazyEntry] = []  # those the filter lets through
        try:
            self.filter = EntryFilter.parse(filter_text)
        except ValueError:
            self.filter, filter_text = EntryFilter(), ""
        self._filter_text = filter_text  # as typed
        self._duplicates: set[str] = set()  # titles written more than once (a run ended twice in a minute)
        self._transcripts: dict[str, bool] = {}  # run id -> its transcript exists
        self._gone: dict[int, str] = {}  # entry position -> why its transcript no longer holds it
        self._filling = 0  # counts the tree's fills: a batch of an older fill is dropped
        self._plays = Plays(self.results_dir, [])  # which play of its run an entry is of (read on reload)
        self._memory = MemoryShelf(self.results_dir)  # the memory beside each answer, read once (on reload)

    def compose(self) -> ComposeResult:
        yield Static("", id="report-header")
        yield Input(placeholder=FILTER_HELP, id="report-filter", compact=True)
        yield ReportTree("report.md", id="report-tree")
        with VerticalScroll(id="report-detail"):
            yield Static("", id="report-detail-text")
        yield Footer(compact=True)

    @property
    def filter_text(self) -> str:
        """The filter in force, as typed."""
        return self._filter_text

    def on_mount(self) -> None:
        field = self.query_one("#report-filter", Input)
        field.value = self._filter_text
        field.display = self.filter.active
        self.action_reload()
        tree = self.query_one(Tree)
        self.set_focus(tree)
        tree.cursor_line = 0

    # ---- entries ---------------------------------------------------------------------------------

    def action_reload(self) -> None:
        everything = index_report(self.report_path)
        self._plays = Plays(self.results_dir, everything)
        self._memory = MemoryShelf(self.results_dir)
        self.entries = newest_first(latest_per_run(everything))
        titles = Counter(entry.title for entry in self.entries)
        self._duplicates = {title for title, count in titles.items() if count > 1}
        self._transcripts.clear()
        self._gone.clear()
        self._show()

    def _show(self) -> None:
        """Fill the tree with the entries the filter lets through: one node each, children on expand; the
        first ``FIRST_ROWS`` at once, the others after the first repaint (the first rows show at once)."""
        wanted = self.filter
        self.shown = [e for e in self.entries if wanted.matches(e.entry)] if wanted.active else self.entries
        tree = self.query_one(ReportTree)
        tree.clear()
        tree.show_root = False
        self._filling += 1
        self._add_entries(0, FIRST_ROWS, self._filling)
        self._update_header()
        self._show_detail(ReportItem(self.shown[0].entry) if self.shown else None)  # never the last fill's

    def _add_entries(self, start: int, stop: int, filling: int) -> None:
        trees = self.query(ReportTree)
        if filling != self._filling or not trees:  # the filter changed (or the screen closed) since
            return
        tree = trees.first()
        for lazy in self.shown[start:stop]:
            entry = lazy.entry
            node = tree.root.add(self._entry_label(entry), data=ReportItem(entry), allow_expand=True)
            if lazy is self.shown[0]:
                tree.build(node, self.filter)
                node.expand()
        if stop < len(self.shown):
            self.call_after_refresh(self._add_entries, stop, len(self.shown), filling)

    def _update_header(self) -> None:
        count = len(self.entries)
        header = f"{self.report_path.name}: {count:,} entr{'y' if count == 1 else 'ies'}"
        if self.filter.active:
            header += f", {len(self.shown):,} shown ({self.filter.describe()})"
        header += ", newest first by finish time"
        if not count:
            header += " — no report yet (an entry is added when a run ends)"
        self.query_one("#report-header", Static).update(Text(header))  # a Text: never read as markup

    def transcript_gone(self, entry: ReportEntry) -> str:
        """Why ``entry``'s transcript cannot be opened any more ("" while it can)."""
        if entry.position in self._gone:
            return self._gone[entry.position]
        exists = self._transcripts.get(entry.run_id)
        if exists is None:
            exists = self._transcripts[entry.run_id] = self._transcript_path(entry.run_id).is_file()
        if not exists:
            return f"the transcript of {entry.run_id} is gone (results/{entry.run_id}/ was deleted)"
        return ""

    def play_gone(self, entry: ReportEntry) -> str:
        """Why ``entry``'s transcript is another play's ("" while it is its own, or when that cannot be told):
        the run was restarted since it was written, and its state (the play on disk) does not list it; the
        entry is marked as one whose transcript is gone."""
        if entry.position not in self._gone and self._plays.of_another_play(entry):
            self._gone[entry.position] = (
                f"{entry.run_id} was restarted since this entry: results/{entry.run_id}/ holds a later play"
            )
            self._relabel(entry)
        return self._gone.get(entry.position, "")

    def _transcript_path(self, run_id: str) -> Path:
        return self.results_dir / run_id / "transcript.jsonl"

    def _entry_label(self, entry: ReportEntry) -> Text:
        return entry_label(
            entry,
            gone=bool(self.transcript_gone(entry)),
            check_type=self.filter.check_type,
            duplicate=entry.title in self._duplicates,
        )

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[ReportItem | None]) -> None:
        if event.node.parent is event.node.tree.root:
            self.query_one(ReportTree).build(event.node, self.filter)

    # ---- the detail pane ---------------------------------------------------------------------------

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[ReportItem | None]) -> None:
        self._show_detail(event.node.data)

    def _show_detail(self, item: ReportItem | None) -> None:
        """The lower pane: what ``item`` stands for, or (none) what the filter left."""
        detail = self.query_one("#report-detail-text", Static)
        self.query_one("#report-detail").remove_class("-memory")
        if item is None:
            none = f"No entry matches {self.filter.describe()}: / changes the filter (empty: every entry)."
            detail.update(Text(none if self.entries and not self.shown else HINT, "dim"))
            return
        gone = self.transcript_gone(item.entry) or self.play_gone(item.entry)
        if isinstance(item.answer, PersonaFault):
            detail.update(fault_detail(item.entry, item.answer, gone))
        elif isinstance(item.answer, ImperfectAnswer):
            known, memory = (
                (True, None) if gone else self._memory.known(item.entry, item.answer)
            )  # never another play's
            if not known:  # read off the app's loop, shown when read if the cursor is still there
                memory = READING
                self._read_memory(item)
            self.query_one("#report-detail").set_class(memory is not None, "-memory")  # room for the file
            detail.update(answer_detail(item.entry, item.answer, gone, memory))
        else:
            detail.update(entry_detail(item.entry, gone))

    @work(thread=True, exclusive=True, group="memory-beside")
    def _read_memory(self, item: ReportItem) -> None:
        if isinstance(item.answer, ImperfectAnswer):
            self._memory.beside(item.entry, item.answer)
            self.app.call_from_thread(self._memory_read, item)

    def _memory_read(self, item: ReportItem) -> None:
        node = self.query_one(ReportTree).cursor_node
        if node is not None and node.data is item:
            self._show_detail(item)

    # ---- actions -----------------------------------------------------------------------------------

    def action_open_transcript(self) -> None:
        node = self.query_one(ReportTree).cursor_node
        item = node.data if node is not None else None
        if item is None or node is None:
            self.notify("Put the cursor on an imperfect answer or a persona fault first.", severity="warning")
            return
        gone = self.transcript_gone(item.entry)
        if gone:
            self.notify(f"Cannot open it: {gone}.", severity="error")
            return
        if item.answer is None:
            self.notify("Put the cursor on an imperfect answer or a persona fault first.", severity="warning")
            return
        entry, answer = item.entry, item.answer
        gone = self.play_gone(entry)
        if gone:
            self.notify(f"Cannot open it: {gone}.", severity="error")
            return
        if self.runs is not None and entry.run_id not in self.runs:
            self.notify(
                f"Cannot open it: {entry.run_id} is not a run of this app's config (its transcript is "
                f"results/{entry.run_id}/transcript.jsonl).",
                severity="error",
            )
            return
        number = answer.transcript_n
        if number is not None:
            found = [
                e for e in events_around(self._transcript_path(entry.run_id), number, 1)[0] if e.n == number
            ]
            if not found or not _is_the_answer(found[0], answer.check_id):
                what = (
                    f"its event #{number} is now of kind {found[0].kind}"
                    if found
                    else f"it has no event #{number}"
                )
                self._gone[entry.position] = (
                    f"the transcript of {entry.run_id} no longer holds this entry ({what}: "
                    "the run was restarted or cut back since)"
                )
                self._relabel(entry)
                self.notify(f"Cannot open it: {self._gone[entry.position]}.", severity="error")
                return
        self.dismiss(AnswerRef(entry.run_id, answer.check_id, number))

    # ---- export and copy ---------------------------------------------------------------------------

    def _chosen(self, whole: bool) -> tuple[ReportEntry, ImperfectAnswer | PersonaFault | None] | None:
        """The entry under the cursor, and its answer or fault there (None when ``whole`` or on the entry)."""
        node = self.query_one(ReportTree).cursor_node
        item = node.data if node is not None else None
        if item is None:
            self.notify("Put the cursor on an entry or an answer first.", severity="warning")
            return None
        return item.entry, None if whole else item.answer

    def action_export(self, whole: bool) -> None:
        """The answer under the cursor (or the whole entry) to ``results/exports/<run>-<entry>[-<check>].md``."""
        chosen = self._chosen(whole)
        if chosen is None:
            return
        path = export_path(self.results_dir, *chosen)
        try:
            write_private(path, markdown(*chosen))
        except OSError as exc:
            self.notify(f"{path}: {exc.strerror or exc}", title="Not exported", severity="error")
            return
        what = f"check {chosen[1].check_id}" if chosen[1] is not None else "the entry"
        base = self.results_dir.parent  # results/exports/… as the operator knows it
        self.notify(
            f"{what} → {path.relative_to(base) if path.is_relative_to(base) else path}", title="Exported"
        )

    def action_copy(self, whole: bool) -> None:
        """The same text to the clipboard, through the terminal (OSC 52: many terminals and tmux take it)."""
        chosen = self._chosen(whole)
        if chosen is not None:
            self.app.copy_to_clipboard(markdown(*chosen))
            what = f"check {chosen[1].check_id}" if chosen[1] is not None else "the entry"
            self.notify(f"{what} of {chosen[0].run_id}, where the terminal supports OSC 52", title="Copied")

    def _relabel(self, entry: ReportEntry) -> None:
        for node in self.query_one(ReportTree).root.children:
            if node.data is not None and node.data.entry is entry:
                node.set_label(self._entry_label(entry))

    def action_edit_filter(self) -> None:
        field = self.query_one("#report-filter", Input)
        field.display = True
        field.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            wanted = EntryFilter.parse(event.value)
        except ValueError as exc:
            self.notify(str(exc), severity="error")
            return
        self.filter, self._filter_text = wanted, event.value
        self._show()
        event.input.display = bool(event.value.strip())
        tree = self.query_one(Tree)
        tree.focus()
        tree.cursor_line = 0
        if wanted.active and not self.shown:
            self.notify(f"No entry matches {wanted.describe()}.", severity="warning")

    def action_close(self) -> None:
        field = self.query_one("#report-filter", Input)
        if field.has_focus:  # Esc leaves the filter as it was
            field.value = self._filter_text
            field.display = self.filter.active
            self.query_one(Tree).focus()
            return
        self.dismiss(None)
