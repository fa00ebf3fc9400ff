"""Fact files and benchmark loading (SPEC §3.1, §3.2)."""

from __future__ import annotations

from datetime import date, datetime, time
from pathlib import Path

import pytest

from engine.benchmark.facts import next_fact_id, parse_sheet, render_sheet
from engine.benchmark.loader import load_with_problems
from engine.benchmark.model import DELETED
from engine.benchmark.validate import load_benchmark

DEMO = Path(__file__).parent.parent / "benchmarks" / "demo"

FAMILY = """# Family

## 1. Lena
1.1 Lena is 31, a UX designer, works remotely
1.2 Lena's birthday — March 14
1.3 —

## 2. Anna
2.1 Anna is a doctor in Hamburg
2.2 —
2.4 —
2.3 Anna has two kids
"""


def test_parse_sheet() -> None:
    sheet, problems = parse_sheet(FAMILY, "family", "family.md")
    assert problems == []
    assert (sheet.name, sheet.title) == ("family", "Family")
    assert [(c.number, c.name) for c in sheet.categories] == [(1, "Lena"), (2, "Anna")]
    assert [(f.id, f.line) for f in sheet.categories[0].facts] == [("1.1", 4), ("1.2", 5), ("1.3", 6)]
    assert sheet.find("1.2") is not None and sheet.find("1.2").text == "Lena's birthday — March 14"  # type: ignore[union-attr]
    assert [f.id for f in sheet.live_facts()] == ["1.1", "1.2", "2.1", "2.3"]


def test_render_sheet_omits_deleted_facts() -> None:
    sheet, _ = parse_sheet(FAMILY, "family", "family.md")
    assert render_sheet(sheet) == (
        "# Family\n\n## 1. Lena\n1.1 Lena is 31, a UX designer, works remotely\n1.2 Lena's birthday — March 14\n\n"
        "## 2. Anna\n2.1 Anna is a doctor in Hamburg\n2.3 Anna has two kids\n"
    )
    assert f"2.2 {DELETED}" in render_sheet(sheet, only_live=False)
    reparsed, problems = parse_sheet(render_sheet(sheet, only_live=False), "family", "family.md")
    assert problems == []
    assert [(f.id, f.text) for f in reparsed.live_facts()] == [(f.id, f.text) for f in sheet.live_facts()]


def test_next_fact_id_reuses_the_lowest_deleted_id() -> None:
    sheet, _ = parse_sheet(FAMILY, "family", "family.md")
    assert next_fact_id(sheet, 1) == "1.3"
    assert next_fact_id(sheet, 2) == "2.2"
    fact = sheet.find("2.2")
    assert fact is not None
    fact.text = "Anna's husband is Jonas"
    assert next_fact_id(sheet, 2) == "2.4"
    sheet.find("2.4").text = "Anna lives in Altona"  # type: ignore[union-attr]
    assert next_fact_id(sheet, 2) == "2.5"


def test_next_fact_id_in_empty_category_and_unknown_category() -> None:
    sheet, _ = parse_sheet("# T\n\n## 3. Empty\n", "t", "t.md")
    assert next_fact_id(sheet, 3) == "3.1"
    with pytest.raises(ValueError, match="no category 4"):
        next_fact_id(sheet, 4)


def test_parse_sheet_problems_with_lines() -> None:
    text = "1.1 before\n# T\n## 1. A\n1.1 ok\n1.1 again\n2.1 wrong category\n1.x bad\n## B\n- a list item\n# Second\n"
    _, problems = parse_sheet(text, "t", "t.md")
    assert [(p.file, p.line) for p in problems] == [("t.md", n) for n in (1, 5, 6, 7, 8, 9, 10)]
    messages = [p.message for p in problems]
    assert "before any category" in messages[0]
    assert "duplicate fact id 1.1 (first on line 4)" in messages[1]
    assert "under category 1" in messages[2]
    assert "malformed fact id '1.x'" in messages[3]
    assert "malformed category heading" in messages[4]
    assert "not a title, category or fact" in messages[5]
    assert "second title" in messages[6]


def test_load_demo() -> None:
    bench = load_benchmark(DEMO)
    assert bench.chapters == ["chapter1.md", "chapter2.md", "chapter3.md"]
    assert sorted(bench.sheets) == ["bike", "garden", "profile"]
    assert bench.title.startswith("Demo")
    assert "You are Sam" in bench.instructions
    assert (bench.time_master, bench.time_gate, bench.start_time) == (False, False, None)
    assert [(p.index, p.chapter, p.title) for p in bench.phases] == [
        (0, "chapter1.md", "Getting acquainted"),
        (1, "chapter1.md", "The bike"),
        (2, "chapter2.md", "Garden news"),
        (3, "chapter2.md", "Bike shop"),
        (4, "chapter3.md", "Memory check"),
    ]
    first = bench.phases[0]
    assert (first.line, first.js, first.js_line) == (4, 'vars.require_all_facts = "garden";', 6)
    assert first.body.startswith("Say: Hi! I'm Sam")
    assert "author" not in first.body
    assert bench.phases[2].js is None
    assert "Edit garden 2.3: —" in bench.phases[2].body
    exam = bench.phases[4]
    assert exam.js == "await bench.newSession();\nvars.require_all_checks = true;"
    assert [(c.id, c.types) for c in exam.checks] == [
        ("3.1", ["RECALL"]),
        ("3.2", ["HIST"]),
        ("3.3", ["AGG"]),
        ("3.4", ["NEG"]),
        ("3.5", ["VOID"]),
        ("3.6", ["SERIES"]),
    ]
    check = bench.check("3.2")
    assert check is not None
    assert (check.question, check.answer, check.line) == (
        "How much did the yearly bike service cost before the price rise?",
        "$80.",
        15,
    )


def _write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


MULTIDAY = {
    "benchmark.json": """{
    // virtual time, as in the article
    "time_master": true,
    "time_gate": true,
    "start_time": "2026-03-01 20:00",
    "chapters": ["week1.md"],
}""",
    "profile.md": "# Nora\n\n## 1. About me\n1.1 Nora, a marketer from Bristol\n",
    "KEY.md": "not a sheet\n",
    "README.md": "not a sheet either\n",
    "week1.md": """# Week 1
Author notes: checks in brackets both ways.

## Day 10
2026-03-10, Tue
08:00 — same route as yesterday, 7 km in 40:50.
18:30 — office day.

## Day 12
2026-03-12, Thursday
09:05 — rest day. Bring up Wednesday's run:

❓ 12.1 How far did I run on Wednesday? Correct answer: 8 km.
❓ 12.2 [HIST] [AGG] How far before the sync? Correct answer: 8 km, then 8.4.
❓ 12.3 [HIST, SERIES] How many kilometres did I run in total?
     Correct answer: 53.4 km.
""",
}


def test_load_multiday_with_anchors_and_check_forms(tmp_path: Path) -> None:
    bench, problems = load_with_problems(_write(tmp_path, MULTIDAY))
    assert problems == []
    assert bench is not None
    assert (bench.time_master, bench.time_gate, bench.start_time) == (True, True, datetime(2026, 3, 1, 20, 0))
    assert sorted(bench.sheets) == ["profile"]
    day10, day12 = bench.phases
    assert day10.date == date(2026, 3, 10)
    assert day10.anchors == [time(8, 0), time(18, 30)]
    assert day10.last_anchor() == datetime(2026, 3, 10, 18, 30)
    assert day10.body.splitlines()[0] == "2026-03-10, Tue"
    assert day12.anchors == [time(9, 5)]
    assert [(c.id, c.types, c.line) for c in day12.checks] == [
        ("12.1", [], 13),
        ("12.2", ["HIST", "AGG"], 14),
        ("12.3", ["HIST", "SERIES"], 15),
    ]
    assert bench.check("12.3").answer == "53.4 km."  # type: ignore[union-attr]
    assert bench.check("12.1").question == "How far did I run on Wednesday?"  # type: ignore[union-attr]


def test_unlisted_chapter_and_missing_chapter(tmp_path: Path) -> None:
    files = dict(MULTIDAY, **{"chapter7.md": "## Extra\nSay: hi\n"})
    files["benchmark.json"] = '{"chapters": ["week1.md", "week2.md"]}'
    _, problems = load_with_problems(_write(tmp_path, files))
    assert [(Path(p.file).name, p.line, p.message) for p in problems] == [
        ("benchmark.json", 1, "chapter file 'week2.md' does not exist"),
        ("chapter7.md", 0, "chapter file is not listed in benchmark.json chapters"),
    ]


def test_load_with_problems_keeps_going_after_bad_chapters(tmp_path: Path) -> None:
    files = dict(MULTIDAY)
    files["week1.md"] = (
        "## A\nSay: hi\n❓ 1.1 No answer here\n\n## B\n❓ 1.2 [RECALL] Q? Correct answer: A.\n"
    )
    bench, problems = load_with_problems(_write(tmp_path, files))
    assert bench is not None
    assert [p.title for p in bench.phases] == ["A", "B"]
    assert [c.id for c in bench.checks()] == ["1.2"]
    assert [(p.line, p.message) for p in problems] == [(3, "check 1.1 has no 'Correct answer:'")]
