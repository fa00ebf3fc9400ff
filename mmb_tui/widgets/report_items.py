"""What a node of the report browser stands for (``ReportItem``) and how it reads: an entry's one-line label,
an answer's or a persona fault's head and fields, and the detail pane's text for each.

Every text is a ``Text`` built from the escaped strings of ``engine/report/entries.py``, never markup: a reply's
``[bold]`` is shown as is. Whether an entry's transcript is gone is the screen's to know; it is passed in.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from engine.report.entries import ImperfectAnswer, PersonaFault, ReportEntry
from mmb_tui.transcript.event_render import score_style

HINT = "Enter expands · o opens an answer at its event · / filters · x exports · y copies · Esc back"


@dataclass(frozen=True, eq=False)
class ReportItem:
    """What a tree node stands for: an entry, or one of its answers or persona faults."""

    entry: ReportEntry
    answer: ImperfectAnswer | PersonaFault | None = None


# ---- the tree's labels ---------------------------------------------------------------------------


def entry_label(entry: ReportEntry, *, gone: bool, check_type: str, duplicate: bool) -> Text:
    """An entry's row: title, marks (transcript gone, incomplete), the filtered type's average, its scores;
    ``duplicate``: another entry has its title (the same run ended twice in a minute), so its id tells them
    apart."""
    label = Text(no_wrap=True, overflow="ellipsis")
    label.append(entry.title, style="bold")
    if gone:
        label.append("  transcript gone", style="bold red")
    if entry.incomplete:
        label.append(f"  incomplete: {entry.incomplete}", style="bold yellow")
    if check_type and check_type in entry.type_averages:
        average = entry.type_averages[check_type]
        label.append(f"  {check_type} {average:.2f}", style=score_style(average))
    if entry.score is not None:
        label.append(f"  score {entry.score:.2f}", style=score_style(entry.score))
        label.append(" ·" if entry.evaluations is not None else "")
    if entry.evaluations is not None:
        label.append(f"{' ' if entry.score is not None else '  '}{entry.evaluations} evals")
    if entry.average is not None:
        label.append(f" · avg {entry.average:.2f}", style=score_style(entry.average))
    if duplicate:
        label.append(f"  entry {entry.entry_id or f'#{entry.position + 1} in the file'}", style="dim")
    return label


def answer_head(answer: ImperfectAnswer) -> Text:
    head = Text()
    head.append(
        f"[{answer.score:g}/10{', ' + answer.note if answer.note else ''}]", score_style(answer.score)
    )
    head.append(f" ({answer.check_id}){_types(answer.types)} {answer.question}")
    if answer.memory:  # the memory autopsy's class, the rest of its line is in the detail pane
        head.append(f"  ↳ {memory_class(answer)}", "dim")
    return head


def memory_class(answer: ImperfectAnswer) -> str:
    """The class of an answer's memory autopsy line ("lost", "never written", …; "" without one)."""
    return answer.memory.split(" — ", 1)[0]


def fault_head(fault: PersonaFault) -> Text:
    head = Text()
    head.append(f"⚠ [{fault.graded}, not counted]", "yellow")
    head.append(f" ({fault.check_id}){_types(fault.types)} {fault.question}")
    return head


def open_hint(item: ReportItem) -> str:
    number = item.answer.transcript_n if item.answer is not None else None
    return f"o: open in the transcript (event #{number})" if number else "o: open in the transcript"


def answer_fields(answer: ImperfectAnswer) -> list[tuple[str, str, str]]:
    """(label, style, text) of what an imperfect answer's entry says, the judge's grade where it has one."""
    fields = [("question", "bold", answer.question), ("expected", "bold green", answer.expected)]
    fields += [("got", "bold red", answer.got)] + (
        [("persona", "bold", answer.persona)] if answer.persona else []
    )
    if answer.memory:  # the memory autopsy: what the agent's memory shows of it, with file:line
        fields.append(("memory", "bold magenta", answer.memory))
    fields.append(("comment", "bold", answer.comment))
    if answer.judge_score is not None or answer.judge:
        score = f"[{answer.judge_score:g}/10] " if answer.judge_score is not None else "[no grade] "
        fields.append(("judge", "bold", score + answer.judge))
    return fields


def _types(types: list[str]) -> str:
    return "".join(f" [{t}]" for t in types)


# ---- the detail pane -----------------------------------------------------------------------------


def entry_detail(entry: ReportEntry, gone: str) -> Text:
    """An entry in the detail pane; ``gone`` says why its transcript cannot be opened ("" while it can)."""
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
    if gone:
        text.append(f"\n{gone}", style="bold red")
    text.append(f"\n{HINT}", style="dim")
    return text


def answer_detail(entry: ReportEntry, answer: ImperfectAnswer, gone: str, memory: Text | None = None) -> Text:
    """An answer in the detail pane; ``memory``: the memory file beside it (``memory_beside.py``), under its
    memory autopsy line."""
    text = Text()
    text.append(f"{entry.run_id} · check {answer.check_id}{_types(answer.types)} · ", style="bold")
    text.append(f"{answer.score:g}/10 {answer.note}", style=score_style(answer.score))
    for label, style, value in answer_fields(answer):
        text.append(f"\n{label}: ", style=style)
        text.append(value)
        if label == "memory" and memory is not None:
            text.append("\n")
            text.append_text(memory)
    _append_where(text, entry, answer, gone)
    return text


def fault_detail(entry: ReportEntry, fault: PersonaFault, gone: str) -> Text:
    text = Text()
    text.append(f"{entry.run_id} · check {fault.check_id}{_types(fault.types)} · ", style="bold")
    text.append(f"persona fault, graded {fault.graded}, not counted", style="yellow")
    text.append("\nquestion: ", style="bold")
    text.append(fault.question)
    text.append("\nfault: ", style="bold yellow")
    text.append(fault.fault)
    _append_where(text, entry, fault, gone)
    return text


def _append_where(text: Text, entry: ReportEntry, answer: ImperfectAnswer | PersonaFault, gone: str) -> None:
    if gone:
        text.append(f"\n{gone}", style="bold red")
    elif answer.transcript_n is not None:
        text.append(f"\no opens {entry.run_id}'s transcript at event #{answer.transcript_n}", style="dim")
    else:
        text.append(
            f"\no opens {entry.run_id}'s latest evaluation of {answer.check_id} (no event number)",
            style="dim",
        )
