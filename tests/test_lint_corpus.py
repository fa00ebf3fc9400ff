"""The prose-change lint measured on benchmarks written the way people write them (tests/lint_corpus/): every
sheet change a phase tells only in prose is labeled below with the fact it changes; the lint must find most
of them, name the right fact, and warn of little else (restatements, checks, directed changes, old values).

Each label is (chapter, a piece of the line where the change is told, sheet, fact id); a warning counts for
it when it names that fact inside the paragraph of that line (an anchor line or a list item is a paragraph of
its own). The figures are printed: ``pytest tests/test_lint_corpus.py -s``.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.benchmark.model import Problem
from engine.benchmark.validate import validate

CORPUS = Path(__file__).parent / "lint_corpus"

LABELS: dict[str, list[tuple[str, str, str, str]]] = {
    "terse_notes": [
        ("chapter2.md", "Rent now £1,500", "move", "1.2"),
        ("chapter2.md", "Move-in 21 June instead", "move", "1.4"),
        ("chapter2.md", "QuickVan cancelled on me", "move", "2.1"),
        ("chapter2.md", "Helpers: 4 hours, not 5", "move", "2.2"),
        ("chapter2.md", "Sertraline up to 100 mg", "health", "1.1"),
        ("chapter3.md", "Dropped the contents insurance", "move", "3.3"),
        ("chapter3.md", "switched to Community Fibre", "move", "3.1"),
        ("chapter3.md", "Dentist moved to Friday", "health", "2.1"),
        ("chapter3.md", "Physio: 8 sessions now", "health", "2.2"),
        ("chapter3.md", "night shifts are Tuesday to Thursday", "profile", "1.3"),
    ],
    "chatty_story": [
        ("chapter2.md", "the hire fee up to £950", "party", "1.2"),
        ("chapter2.md", "it's 65 people now", "party", "1.3"),
        ("chapter2.md", "so she can't bake after all", "party", "1.4"),
        ("chapter2.md", "so it'll be a DJ, Marco", "party", "1.5"),
        ("chapter3.md", "moved onto the 07:40", "trip", "1.1"),
        ("chapter3.md", "went for Casa Baixa", "trip", "2.1"),
        ("chapter3.md", "decided against Sintra", "trip", "3.1"),
        ("chapter3.md", "fado dinner is moved to 21:00", "trip", "3.2"),
    ],
    "scheduled_days": [
        ("chapter1.md", "long run goes up to 18 km", "training", "1.2"),
        ("chapter1.md", "moved to 14 May", "work", "1.2"),
        ("chapter1.md", "booked the conference hotel", "work", "1.3"),
        ("chapter1.md", "deadline is now Friday 24 April", "work", "1.1"),
        ("chapter2.md", "no swimming this morning", "training", "1.4"),
        ("chapter2.md", "Adidas Adizero", "training", "2.1"),
        ("chapter2.md", "aim for 1:45", "training", "1.1"),
    ],
    "bullet_lists": [
        ("chapter2.md", "going with quartz after all", "kitchen", "1.3"),
        ("chapter2.md", "Contractor start pushed to Mar 18th", "kitchen", "1.1"),
        ("chapter2.md", "went on sale, now $1,799", "kitchen", "2.1"),
        ("chapter2.md", "Scrap the wine cooler", "kitchen", "2.2"),
        ("chapter2.md", "IKEA delivery slipped by a week", "kitchen", "1.2"),
        ("chapter3.md", "$389/mo, not $359", "car", "1.2"),
        ("chapter3.md", "12,000 miles a year instead of 10k", "car", "1.3"),
        ("chapter3.md", "Pickup moved up to Friday", "car", "1.5"),
    ],
    "diary_entries": [
        (
            "chapter2.md",
            "from this month I take home £2,900",
            "money",
            "1.1",
        ),  # missed: "take home" ≠ "salary"
        ("chapter2.md", "£400 a month towards the desk", "money", "2.1"),
        ("chapter2.md", "review is now on 11 March", "health", "1.3"),
        ("chapter2.md", "drop the brown inhaler to one puff", "health", "1.2"),
        ("chapter2.md", "cancelled Spotify", "money", "1.4"),
        ("chapter3.md", "no more climbing at the Depot", "health", "2.2"),
        ("chapter3.md", "it's £5,600 now at Andertons", "money", "2.2"),
    ],
    "guided_prose": [
        ("chapter2.md", "moved from 12 May to 19 May", "dog", "1.3"),
        ("chapter2.md", "Lily's Kitchen grain-free instead", "dog", "1.2"),
        ("chapter2.md", "the premium rose to £31.40", "dog", "1.4"),
        ("chapter2.md", "raised his price to £14", "dog", "1.5"),
        ("chapter2.md", "18 m² rather than 15 m²", "garden", "1.1"),
        ("chapter2.md", "paving quote goes up to", "garden", "1.2"),
        ("chapter2.md", "not to plant the apple tree", "garden", "1.3"),
        ("chapter2.md", "it will be painted sage grey", "garden", "1.4"),
    ],
}


@dataclass
class Score:
    labeled: int = 0
    found: int = 0  # labels whose fact a warning names in their paragraph
    wrong: int = 0  # warnings in a labeled paragraph naming another fact
    warned: int = 0  # prose-change warnings in all
    right: int = 0  # warnings that name a labeled change's fact in its paragraph

    def recall(self) -> float:
        return self.found / self.labeled

    def precision(self) -> float:
        return self.right / self.warned if self.warned else 1.0


def paragraph(lines: list[str], number: int) -> set[int]:
    """The lines of the paragraph holding line ``number`` (1-based): a blank line, an anchor line or a list
    item starts another."""

    def starts(k: int) -> bool:
        text = lines[k - 1].strip()
        return not text or text[:1] in "-•*" or text[:2].isdigit() or text.startswith("#")

    first = number
    while first > 1 and not starts(first) and lines[first - 2].strip():
        first -= 1
    last = number
    while last < len(lines) and lines[last].strip() and not starts(last + 1):
        last += 1
    return set(range(first, last + 1))


def prose_warnings(name: str) -> list[Problem]:
    found = validate(CORPUS / name)
    assert found.problems == [], [str(p) for p in found.problems]
    return [w for w in found.warnings if w.message.startswith("the text changes")]


def score(name: str) -> Score:
    warnings = prose_warnings(name)
    labeled: dict[tuple[str, int], set[tuple[str, str]]] = {}  # (chapter, paragraph start) -> its facts
    spans: dict[tuple[str, int], set[int]] = {}
    for chapter, piece, sheet, fact_id in LABELS[name]:
        lines = (CORPUS / name / chapter).read_text(encoding="utf-8").splitlines()
        where = paragraph(lines, next(k for k, text in enumerate(lines, start=1) if piece in text))
        labeled.setdefault((chapter, min(where)), set()).add((sheet, fact_id))
        spans[(chapter, min(where))] = where
    result = Score(labeled=len(LABELS[name]), warned=len(warnings))
    for (chapter, start), facts in labeled.items():
        here = [w for w in warnings if Path(w.file).name == chapter and w.line in spans[(chapter, start)]]
        named = {_named_fact(w) for w in here}
        result.found += len(facts & named)
        result.right += sum(1 for w in here if _named_fact(w) in facts)
        result.wrong += sum(1 for w in here if _named_fact(w) is not None and _named_fact(w) not in facts)
    return result


def _named_fact(warning: Problem) -> tuple[str, str] | None:
    """The fact a warning names alone ("the text changes move 1.2 …"), None when it names a sheet or several
    facts ("the text changes a sheet fact …, but … fit it about as well")."""
    words = warning.message.split()
    return None if words[3] in ("a", "the") else (words[3], words[4])


@pytest.mark.parametrize("name", sorted(LABELS))
def test_each_corpus_benchmark_is_a_valid_benchmark_with_labels_on_real_lines(name: str) -> None:
    for chapter, piece, _, _ in LABELS[name]:
        text = (CORPUS / name / chapter).read_text(encoding="utf-8")
        assert text.count(piece) == 1, (name, chapter, piece)
    assert validate(CORPUS / name).problems == []


def test_the_lint_finds_the_prose_changes_of_people_written_benchmarks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    total = Score()
    rows = []
    for name in sorted(LABELS):
        got = score(name)
        rows.append(
            f"{name:15} changes {got.labeled:2}  found {got.found:2}  warnings {got.warned:2}  wrong fact "
            f"{got.wrong}  recall {got.recall():.2f}  precision {got.precision():.2f}"
        )
        for field in ("labeled", "found", "wrong", "warned", "right"):
            setattr(total, field, getattr(total, field) + getattr(got, field))
    with capsys.disabled():
        print("\nprose-change lint on tests/lint_corpus:\n  " + "\n  ".join(rows))
        print(
            f"  all: recall {total.recall():.2f}, precision {total.precision():.2f}, wrong fact {total.wrong}"
        )
    assert total.wrong == 0
    assert total.recall() >= 0.8
    assert total.precision() >= 0.8
    for name in LABELS:  # every author's style, not only on average
        assert score(name).recall() >= 0.75, name


@pytest.mark.parametrize("name", sorted(LABELS))
def test_with_an_edit_line_for_each_change_the_benchmark_is_quiet(tmp_path: Path, name: str) -> None:
    """The author adds the Edit line each warning suggests, right after its paragraph: no warning is left."""
    shutil.copytree(CORPUS / name, tmp_path / name)
    bench = tmp_path / name
    edits: dict[str, list[tuple[int, str]]] = {}
    for chapter, piece, sheet, fact_id in LABELS[name]:
        lines = (bench / chapter).read_text(encoding="utf-8").splitlines()
        where = paragraph(lines, next(k for k, text in enumerate(lines, start=1) if piece in text))
        edits.setdefault(chapter, []).append(
            (max(where), f"Edit {sheet} {fact_id}: the new text of {fact_id}")
        )
    for chapter, found in edits.items():
        lines = (bench / chapter).read_text(encoding="utf-8").splitlines()
        for after, edit in sorted(found, reverse=True):
            lines[after:after] = ["", edit, ""]
        (bench / chapter).write_text("\n".join(lines) + "\n", encoding="utf-8")
    checked = validate(bench)
    assert checked.problems == [], [str(p) for p in checked.problems]
    assert [str(w) for w in checked.warnings if w.message.startswith("the text changes")] == []
