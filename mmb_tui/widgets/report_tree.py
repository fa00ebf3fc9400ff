"""The report browser's tree (``ReportTree``): one node per entry, its children made on first expand.

Tree copies every label when it is added and renders it to measure it on each rebuild of its lines (most of a
second for 1,000 entries): this one takes a one-line ``Text`` as it is and measures it by its text. An
entry's children are its summary lines, then its persona faults and imperfect answers (those of the
filter's check type when it has one), each with its fields and how to open it.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from engine.report.entries import EntryFilter
from mmb_tui.widgets.report_items import ReportItem, answer_fields, answer_head, fault_head, open_hint


class ReportTree(Tree[ReportItem | None]):
    """A tree of report entries that takes a one-line label as it is and measures it by its text."""

    def process_label(self, label: str | Text) -> Text:
        if isinstance(label, Text) and "\n" not in label.plain:  # one line already: no copy of its first line
            return label
        return super().process_label(label)

    def get_label_width(self, node: TreeNode[ReportItem | None]) -> int:
        label = node.label
        width = label.cell_len if isinstance(label, Text) else cell_len(label)
        return width + (2 if node.allow_expand else 0)  # "▶ " before an expandable node

    def on_resize(self) -> None:
        # the detail pane grew (an answer with its memory file): the node under the cursor stays in sight
        if self.cursor_node is not None:
            self.call_after_refresh(self.scroll_to_line, self.cursor_line, False)

    def build(self, node: TreeNode[ReportItem | None], wanted: EntryFilter) -> None:
        """An entry's children, made when it is first expanded (nothing when it has them already)."""
        if node.children or node.data is None:
            return
        entry = node.data.entry
        answers, faults = wanted.answers_of(entry)
        answers_parent = faults_parent = node
        kind = wanted.check_type
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
            item = ReportItem(entry, fault)
            child = faults_parent.add(fault_head(fault), data=item, expand=False)
            child.add_leaf(Text.assemble(("fault:    ", "bold yellow"), fault.fault), data=item)
            child.add_leaf(Text(open_hint(item), style="dim italic"), data=item)
        for answer in answers:
            item = ReportItem(entry, answer)
            child = answers_parent.add(answer_head(answer), data=item, expand=False)
            for label, style, value in answer_fields(answer):
                child.add_leaf(Text.assemble((f"{label}: ".ljust(10), style), value), data=item)
            child.add_leaf(Text(open_hint(item), style="dim italic"), data=item)
