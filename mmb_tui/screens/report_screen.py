"""Browse ``results/report.md``: entries newest first, their figures, each imperfect answer and persona fault expandable.

Dismisses with ``(run_id, check_id)`` when the operator asks to open an answer in its transcript. The entries come
escaped from ``report_entries`` and every label is a ``Text`` (never markup): a reply's ``[bold]`` is shown as is.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static, Tree
from textual.widgets.tree import TreeNode

from engine.report_entries import ImperfectAnswer, PersonaFault, ReportEntry, load_report
from mmb_tui.event_render import score_style

AnswerRef = tuple[str, str]  # run id, check id


class ReportScreen(Screen[AnswerRef | None]):
    BINDINGS = [
        Binding("escape,r", "close", "Back"),
        Binding("o,t", "open_transcript", "Open in transcript"),
        Binding("ctrl+r", "reload", "Reload"),
    ]

    def __init__(self, report_path: Path) -> None:
        super().__init__()
        self.report_path = report_path
        self.entries: list[ReportEntry] = []
        self._answers: dict[AnswerRef, ImperfectAnswer] = {}
        self._faults: dict[AnswerRef, PersonaFault] = {}

    def compose(self) -> ComposeResult:
        yield Static("", id="report-header")
        yield Tree[AnswerRef | None]("report.md", id="report-tree")
        with VerticalScroll(id="report-detail"):
            yield Static("", id="report-detail-text")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.action_reload()
        tree = self.query_one(Tree)
        tree.focus()
        tree.cursor_line = 0

    def action_reload(self) -> None:
        self.entries = load_report(self.report_path)
        tree: Tree[AnswerRef | None] = self.query_one(Tree)
        tree.clear()
        tree.show_root = False
        self._answers.clear()
        self._faults.clear()
        for position, entry in enumerate(self.entries):
            self._add_entry(tree.root, entry, expand=position == 0)
        count = len(self.entries)
        header = f"{self.report_path.name}: {count} entr{'y' if count == 1 else 'ies'}, newest first"
        if not count:
            header += " — no report yet (an entry is added when a run ends)"
        self.query_one("#report-header", Static).update(Text(header))  # a Text: never read as markup

    def _add_entry(self, root: TreeNode[AnswerRef | None], entry: ReportEntry, *, expand: bool) -> None:
        label = Text(no_wrap=True, overflow="ellipsis")
        label.append(entry.title, style="bold")
        if entry.incomplete:
            label.append(f"  incomplete: {entry.incomplete}", style="bold yellow")
        if entry.score is not None:
            label.append(f"  score {entry.score:.2f}", style=score_style(entry.score))
            label.append(" ·" if entry.evaluations is not None else "")
        if entry.evaluations is not None:
            label.append(f"{' ' if entry.score is not None else '  '}{entry.evaluations} evals")
        if entry.average is not None:
            label.append(f" · avg {entry.average:.2f}", style=score_style(entry.average))
        node = root.add(label, data=None, expand=expand)
        answers_parent = faults_parent = node
        for line in entry.summary_lines():  # labels as Text: a str label would be read as markup
            if line.startswith("Imperfect answers"):
                answers_parent = node.add(Text(f"📊 {line}"), data=None, expand=True)
            elif line.startswith("Persona faults"):
                faults_parent = node.add(Text(f"📊 {line}"), data=None, expand=True)
            else:
                node.add_leaf(Text(f"📊 {line}"), data=None)
        for fault in entry.persona_faults:
            ref = (entry.run_id, fault.check_id)
            self._faults[ref] = fault
            head = Text()
            head.append(f"⚠ [{fault.graded}, not counted]", "yellow")
            head.append(f" ({fault.check_id}) {fault.question}")
            item = faults_parent.add(head, data=ref, expand=False)
            item.add_leaf(Text.assemble(("fault:    ", "bold yellow"), fault.fault), data=ref)
            item.add_leaf(Text("o: open in the transcript", style="dim italic"), data=ref)
        for answer in entry.imperfect:
            ref = (entry.run_id, answer.check_id)
            self._answers[ref] = answer
            head = Text()
            head.append(
                f"[{answer.score:g}/10{', ' + answer.note if answer.note else ''}]", score_style(answer.score)
            )
            head.append(f" ({answer.check_id}) {answer.question}")
            item = answers_parent.add(head, data=ref, expand=False)
            item.add_leaf(Text.assemble(("question: ", "bold"), answer.question), data=ref)
            item.add_leaf(Text.assemble(("expected: ", "bold green"), answer.expected), data=ref)
            item.add_leaf(Text.assemble(("got:      ", "bold red"), answer.got), data=ref)
            if answer.persona:
                item.add_leaf(Text.assemble(("persona:  ", "bold"), answer.persona), data=ref)
            item.add_leaf(Text.assemble(("comment:  ", "bold"), answer.comment), data=ref)
            item.add_leaf(Text("o: open in the transcript", style="dim italic"), data=ref)

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[AnswerRef | None]) -> None:
        ref = event.node.data
        detail = self.query_one("#report-detail-text", Static)
        answer = self._answers.get(ref) if ref else None
        fault = self._faults.get(ref) if ref else None
        if ref is not None and fault is not None:
            detail.update(self._fault_detail(ref, fault))
            return
        if ref is None or answer is None:
            detail.update(
                Text("Enter expands an entry or an answer; o opens an answer in its transcript.", "dim")
            )
            return
        text = Text()
        text.append(f"{ref[0]} · check {answer.check_id} · ", style="bold")
        text.append(f"{answer.score:g}/10 {answer.note}", style=score_style(answer.score))
        text.append("\nquestion: ", style="bold")
        text.append(answer.question)
        text.append("\nexpected: ", style="bold green")
        text.append(answer.expected)
        text.append("\ngot: ", style="bold red")
        text.append(answer.got)
        if answer.persona:
            text.append("\npersona: ", style="bold")
            text.append(answer.persona)
        text.append("\ncomment: ", style="bold")
        text.append(answer.comment)
        detail.update(text)

    @staticmethod
    def _fault_detail(ref: AnswerRef, fault: PersonaFault) -> Text:
        text = Text()
        text.append(f"{ref[0]} · check {fault.check_id} · ", style="bold")
        text.append(f"persona fault, graded {fault.graded}, not counted", style="yellow")
        text.append("\nquestion: ", style="bold")
        text.append(fault.question)
        text.append("\nfault: ", style="bold yellow")
        text.append(fault.fault)
        return text

    def action_open_transcript(self) -> None:
        node = self.query_one(Tree).cursor_node
        if node is None or node.data is None:
            self.notify("Put the cursor on an imperfect answer or a persona fault first.", severity="warning")
            return
        self.dismiss(node.data)

    def action_close(self) -> None:
        self.dismiss(None)
