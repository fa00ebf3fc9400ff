"""Browse ``results/report.md``: entries newest first by real finish time, filterable, each expandable.

Opening is lazy (issue 12): entries are read up to their headers and ordered, an entry is parsed when its row
is made (the first ``FIRST_ROWS`` at once, the others after the first repaint), and its figures, answers and
faults become tree nodes only when it is expanded: a report of a thousand entries opens at once. ``/`` filters by run, score range and check type
(``EntryFilter``). An entry whose run's transcript is gone is marked, and ``o`` says so instead of opening
something else. Dismisses with an ``AnswerRef`` (run, check, event number) when the operator opens an answer in
its transcript; ``MainScreen.open_evaluation`` lands on exactly that event. The entries come escaped from
``report_entries`` and every label is a ``Text`` (never markup): a reply's ``[bold]`` is shown as is.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Input, Static, Tree
from textual.widgets.tree import TreeNode

from engine.events import EvaluationLogged, Event
from engine.report_entries import (
    FILTER_HELP,
    EntryFilter,
    ImperfectAnswer,
    LazyEntry,
    PersonaFault,
    ReportEntry,
    index_report,
    newest_first,
)
from mmb_tui.event_render import score_style
from mmb_tui.transcript_seek import events_around

FIRST_ROWS = 100  # entries in the tree before the first repaint; the others come right after it
HINT = "Enter expands · o opens an answer at its event in the transcript · / filters · Esc back"


@dataclass(frozen=True)
class AnswerRef:
    """An answer of the report as ``o`` opens it: its run, its check and its event in the run's transcript."""

    run_id: str
    check_id: str
    event_n: int | None = None  # the ``[transcript #N]`` of the entry; None in entries written before it


@dataclass(frozen=True, eq=False)
class _Item:
    """What a tree node stands for: an entry, or one of its answers or persona faults."""

    entry: ReportEntry
    answer: ImperfectAnswer | PersonaFault | None = None


class _ReportTree(Tree[_Item | None]):
    """A tree that takes a one-line label as it is and measures it by its text (Tree copies every label when it
    is added, and renders it to measure it on each rebuild of its lines: most of a second for 1,000 entries)."""

    def process_label(self, label: str | Text) -> Text:
        if isinstance(label, Text) and "\n" not in label.plain:  # one line already: no copy of its first line
            return label
        return super().process_label(label)

    def get_label_width(self, node: TreeNode[_Item | None]) -> int:
        label = node.label
        width = label.cell_len if isinstance(label, Text) else cell_len(label)
        return width + (2 if node.allow_expand else 0)  # "▶ " before an expandable node


def _is_the_answer(event: Event, check_id: str) -> bool:
    return isinstance(event, EvaluationLogged) and event.check_id == check_id


class ReportScreen(Screen[AnswerRef | None]):
    BINDINGS = [
        Binding("escape,r", "close", "Back"),
        Binding("o,t", "open_transcript", "Open in transcript"),
        Binding("slash", "edit_filter", "Filter"),
        Binding("ctrl+r", "reload", "Reload"),
    ]

    def __init__(self, report_path: Path) -> None:
        super().__init__()
        self.report_path = report_path
        self.results_dir = report_path.parent
        self.entries: list[LazyEntry] = []  # newest first, all of them (each parsed when first shown)
        self.shown: list[LazyEntry] = []  # those the filter lets through
        self.filter = EntryFilter()
        self._filter_text = ""  # as typed
        self._duplicates: set[str] = set()  # titles written more than once (a run ended twice in a minute)
        self._transcripts: dict[str, bool] = {}  # run id -> its transcript exists
        self._gone: dict[int, str] = {}  # entry position -> why its transcript no longer holds it
        self._filling = 0  # counts the tree's fills: a batch of an older fill is dropped

    def compose(self) -> ComposeResult:
        yield Static("", id="report-header")
        yield Input(placeholder=FILTER_HELP, id="report-filter", compact=True)
        yield _ReportTree("report.md", id="report-tree")
        with VerticalScroll(id="report-detail"):
            yield Static("", id="report-detail-text")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#report-filter", Input).display = False
        self.action_reload()
        tree = self.query_one(Tree)
        tree.focus()
        tree.cursor_line = 0

    # ---- entries ---------------------------------------------------------------------------------

    def action_reload(self) -> None:
        self.entries = newest_first(index_report(self.report_path))
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
        tree: Tree[_Item | None] = self.query_one(Tree)
        tree.clear()
        tree.show_root = False
        self._filling += 1
        self._add_entries(0, FIRST_ROWS, self._filling)
        self._update_header()

    def _add_entries(self, start: int, stop: int, filling: int) -> None:
        trees = self.query(Tree)
        if filling != self._filling or not trees:  # the filter changed (or the screen closed) since
            return
        root = trees.first().root
        for lazy in self.shown[start:stop]:
            entry = lazy.entry
            node = root.add(self._entry_label(entry), data=_Item(entry), allow_expand=True)
            if lazy is self.shown[0]:
                self._build(node)
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

    def _transcript_path(self, run_id: str) -> Path:
        return self.results_dir / run_id / "transcript.jsonl"

    def _entry_label(self, entry: ReportEntry) -> Text:
        label = Text(no_wrap=True, overflow="ellipsis")
        label.append(entry.title, style="bold")
        if self.transcript_gone(entry):
            label.append("  transcript gone", style="bold red")
        if entry.incomplete:
            label.append(f"  incomplete: {entry.incomplete}", style="bold yellow")
        if self.filter.check_type and self.filter.check_type in entry.type_averages:
            average = entry.type_averages[self.filter.check_type]
            label.append(f"  {self.filter.check_type} {average:.2f}", style=score_style(average))
        if entry.score is not None:
            label.append(f"  score {entry.score:.2f}", style=score_style(entry.score))
            label.append(" ·" if entry.evaluations is not None else "")
        if entry.evaluations is not None:
            label.append(f"{' ' if entry.score is not None else '  '}{entry.evaluations} evals")
        if entry.average is not None:
            label.append(f" · avg {entry.average:.2f}", style=score_style(entry.average))
        if entry.title in self._duplicates:  # the same run ended twice in a minute: tell them apart
            label.append(f"  entry {entry.entry_id or f'#{entry.position + 1} in the file'}", style="dim")
        return label

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[_Item | None]) -> None:
        if event.node.parent is event.node.tree.root:
            self._build(event.node)

    def _build(self, node: TreeNode[_Item | None]) -> None:
        """An entry's children, made when it is first expanded."""
        if node.children or node.data is None:
            return
        entry = node.data.entry
        answers, faults = self.filter.answers_of(entry)
        answers_parent = faults_parent = node
        kind = self.filter.check_type
        for line in entry.summary_lines():  # labels as Text: a str label would be read as markup
            if line.startswith("Imperfect answers"):
                label = f"{line.removesuffix(':')} — {len(answers)} of type {kind} shown:" if kind else line
                answers_parent = node.add(Text(f"📊 {label}"), data=node.data, expand=True)
            elif line.startswith("Persona faults"):
                label = f"{line.removesuffix(':')} — {len(faults)} of type {kind} shown:" if kind else line
                faults_parent = node.add(Text(f"📊 {label}"), data=node.data, expand=True)
            else:
                node.add_leaf(Text(f"📊 {line}"), data=node.data)
        for fault in faults:
            item = _Item(entry, fault)
            head = Text()
            head.append(f"⚠ [{fault.graded}, not counted]", "yellow")
            head.append(f" ({fault.check_id}){_types(fault.types)} {fault.question}")
            child = faults_parent.add(head, data=item, expand=False)
            child.add_leaf(Text.assemble(("fault:    ", "bold yellow"), fault.fault), data=item)
            child.add_leaf(Text(self._open_hint(item), style="dim italic"), data=item)
        for answer in answers:
            item = _Item(entry, answer)
            head = Text()
            head.append(
                f"[{answer.score:g}/10{', ' + answer.note if answer.note else ''}]", score_style(answer.score)
            )
            head.append(f" ({answer.check_id}){_types(answer.types)} {answer.question}")
            child = answers_parent.add(head, data=item, expand=False)
            for label, style, value in _answer_fields(answer):
                child.add_leaf(Text.assemble((f"{label}: ".ljust(10), style), value), data=item)
            child.add_leaf(Text(self._open_hint(item), style="dim italic"), data=item)

    def _open_hint(self, item: _Item) -> str:
        number = item.answer.transcript_n if item.answer is not None else None
        return f"o: open in the transcript (event #{number})" if number else "o: open in the transcript"

    # ---- the detail pane ---------------------------------------------------------------------------

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[_Item | None]) -> None:
        item = event.node.data
        detail = self.query_one("#report-detail-text", Static)
        if item is None:
            detail.update(Text(HINT, "dim"))
        elif isinstance(item.answer, PersonaFault):
            detail.update(self._fault_detail(item.entry, item.answer))
        elif isinstance(item.answer, ImperfectAnswer):
            detail.update(self._answer_detail(item.entry, item.answer))
        else:
            detail.update(self._entry_detail(item.entry))

    def _entry_detail(self, entry: ReportEntry) -> Text:
        text = Text()
        text.append(entry.title, style="bold")
        finished = entry.finished_at
        text.append(
            f"\nfinished {finished:%Y-%m-%d %H:%M} UTC (real time)"
            if finished
            else "\ndated in the run's virtual time (an entry written before real finish times)"
        )
        text.append(
            f" · entry {entry.entry_id}" if entry.entry_id else f" · entry #{entry.position + 1} in the file"
        )
        gone = self.transcript_gone(entry)
        if gone:
            text.append(f"\n{gone}", style="bold red")
        text.append(f"\n{HINT}", style="dim")
        return text

    def _answer_detail(self, entry: ReportEntry, answer: ImperfectAnswer) -> Text:
        text = Text()
        text.append(f"{entry.run_id} · check {answer.check_id}{_types(answer.types)} · ", style="bold")
        text.append(f"{answer.score:g}/10 {answer.note}", style=score_style(answer.score))
        for label, style, value in _answer_fields(answer):
            text.append(f"\n{label}: ", style=style)
            text.append(value)
        self._append_where(text, entry, answer)
        return text

    def _fault_detail(self, entry: ReportEntry, fault: PersonaFault) -> Text:
        text = Text()
        text.append(f"{entry.run_id} · check {fault.check_id}{_types(fault.types)} · ", style="bold")
        text.append(f"persona fault, graded {fault.graded}, not counted", style="yellow")
        text.append("\nquestion: ", style="bold")
        text.append(fault.question)
        text.append("\nfault: ", style="bold yellow")
        text.append(fault.fault)
        self._append_where(text, entry, fault)
        return text

    def _append_where(self, text: Text, entry: ReportEntry, answer: ImperfectAnswer | PersonaFault) -> None:
        gone = self.transcript_gone(entry)
        if gone:
            text.append(f"\n{gone}", style="bold red")
        elif answer.transcript_n is not None:
            text.append(f"\no opens {entry.run_id}'s transcript at event #{answer.transcript_n}", style="dim")
        else:
            text.append(
                f"\no opens {entry.run_id}'s latest evaluation of {answer.check_id} (no event number)",
                style="dim",
            )

    # ---- actions -----------------------------------------------------------------------------------

    def action_open_transcript(self) -> None:
        node = self.query_one(Tree).cursor_node
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

    def _relabel(self, entry: ReportEntry) -> None:
        for node in self.query_one(Tree).root.children:
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


def _answer_fields(answer: ImperfectAnswer) -> list[tuple[str, str, str]]:
    """(label, style, text) of what an imperfect answer's entry says, the judge's grade where it has one."""
    fields = [("question", "bold", answer.question), ("expected", "bold green", answer.expected)]
    fields += [("got", "bold red", answer.got)] + (
        [("persona", "bold", answer.persona)] if answer.persona else []
    )
    fields.append(("comment", "bold", answer.comment))
    if answer.judge_score is not None or answer.judge:
        score = f"[{answer.judge_score:g}/10] " if answer.judge_score is not None else "[no grade] "
        fields.append(("judge", "bold", score + answer.judge))
    return fields


def _types(types: list[str]) -> str:
    return "".join(f" [{t}]" for t in types)
