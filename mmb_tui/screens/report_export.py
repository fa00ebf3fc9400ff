"""What the report browser exports and copies (``x``/``X``, ``y``/``Y``): an answer or a persona fault as a
short Markdown note, or a whole entry as ``report.md`` has it; written to ``results/exports/`` (private, as
everything under ``results/``) or put on the clipboard (OSC 52, where the terminal supports it)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from engine.report.entries import ImperfectAnswer, PersonaFault, ReportEntry
from mmb_tui.widgets.report_items import answer_fields

EXPORTS = "exports"  # under the results folder


def entry_name(entry: ReportEntry) -> str:
    """How files name an entry: its ``Entry:`` id, or its place in report.md for one written before ids."""
    return entry.entry_id or f"entry{entry.position + 1}"


def export_path(results_dir: Path, entry: ReportEntry, answer: ImperfectAnswer | PersonaFault | None) -> Path:
    """``results/exports/<run>-<entry>.md``, or ``…-<entry>-<check>.md`` for one answer."""
    parts = [entry.run_id, entry_name(entry), *([answer.check_id] if answer is not None else [])]
    name = "-".join(re.sub(r"[^\w.-]+", "_", part) for part in parts)  # a run id or check id: as it is
    return results_dir / EXPORTS / f"{name}.md"


def markdown(entry: ReportEntry, answer: ImperfectAnswer | PersonaFault | None) -> str:
    """The text exported or copied: ``answer`` as a note that names its entry, or the whole entry."""
    if answer is None:
        return entry.text()
    types = "".join(f" [{t}]" for t in answer.types)
    if isinstance(answer, PersonaFault):
        head = f"persona fault, graded {answer.graded}, not counted"
        fields = [("question", answer.question), ("fault", answer.fault)]
        if answer.judge_score is not None or answer.judge:
            score = f"[{answer.judge_score:g}/10] " if answer.judge_score is not None else "[no grade] "
            fields.append(("judge", score + answer.judge))
    else:
        head = f"{answer.score:g}/10" + (f" ({answer.note})" if answer.note else "")
        fields = [(label, text) for label, _style, text in answer_fields(answer)]
    where = f"event #{answer.transcript_n}" if answer.transcript_n is not None else "its latest evaluation"
    lines = [
        f"# {entry.run_id} · check {answer.check_id}{types} · {head}",
        "",
        f"From the report entry `{entry.title}` (entry {entry_name(entry)}).",
        "",
        *(f"- **{label}:** {text}" for label, text in fields),
        f"- **transcript:** results/{entry.run_id}/transcript.jsonl, {where}",
    ]
    return "\n".join(lines) + "\n"


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path``, readable by its owner only (the folder too), as everything under results/."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
