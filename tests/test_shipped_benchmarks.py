"""The shipped benchmarks (benchmarks/max, benchmarks/multiday, benchmarks/demo) keep the article's invariants:
chapters, topics, facts and checks, KEY.md (answers, sums, traps, ``uses:``), multiday's calendar.

The replay of max's ``Edit``/``Add`` directives and the aggregates recomputed from its sheets are in
``tests/test_shipped_benchmarks_replay.py``.
"""

from __future__ import annotations

import re
import shutil
from datetime import date, datetime, time
from decimal import Decimal
from pathlib import Path

import pytest

from engine.benchmark.answer_key import check_dependencies
from engine.benchmark.directives import expected_facts, phase_directives
from engine.benchmark.key_parse import parse_key
from engine.benchmark.model import CHECK_TYPES, TRAP_TYPES, Benchmark
from engine.benchmark.validate import validate_benchmark
from engine.models.persona_plan import plan_phase

ROOT = Path(__file__).resolve().parent.parent / "benchmarks"


def load(name: str) -> Benchmark:
    bench, problems = validate_benchmark(ROOT / name)
    assert problems == [], "\n".join(str(p) for p in problems)
    assert bench is not None
    return bench


@pytest.fixture(scope="module")
def max_bench() -> Benchmark:
    return load("max")


@pytest.fixture(scope="module")
def multiday() -> Benchmark:
    return load("multiday")


# ---------------------------------------------------------------- max: structure

# chapter → words its phase titles must contain (the article's chapter layout)
MAX_TOPICS = {
    1: ["introduction", "health"],
    2: ["family", "work"],
    3: ["hallway", "bathroom"],
    4: ["trip"],
    5: ["kitchen", "living room"],
    6: ["car"],
    7: ["bedroom", "general works", "balcony"],
    8: ["health", "renovation"],
    9: ["present"],
    10: ["car", "boss"],
    11: ["renovation"],
    12: ["trip"],
    13: ["family", "health"],
    14: ["hallway", "kitchen"],
    15: ["car", "trip"],
    16: ["living room"],
    17: ["present"],
    18: ["pc"],
    19: ["bike"],
    20: ["exam"],
}


def titles(bench: Benchmark, chapter: int) -> str:
    return " | ".join(p.title.lower() for p in bench.phases if p.chapter == f"chapter{chapter}.md")


def test_max_validates_and_has_twenty_chapters_in_the_articles_order(max_bench: Benchmark) -> None:
    assert max_bench.chapters == [f"chapter{n}.md" for n in range(1, 21)]
    assert not max_bench.time_gate and not max_bench.time_master
    for chapter, words in MAX_TOPICS.items():
        for word in words:
            assert word in titles(max_bench, chapter), (chapter, word)


def test_max_topics_are_told_in_several_passes(max_bench: Benchmark) -> None:
    renovation = [n for n in range(1, 21) if "renovation" in titles(max_bench, n)]
    assert {3, 5, 7, 11, 14, 16} <= set(renovation)
    for topic, chapters in {
        "car": [6, 10, 15],
        "trip": [4, 12, 15],
        "health": [1, 8, 13],
        "family": [2, 13],
        "present": [9, 17],
    }.items():
        assert [n for n in range(1, 21) if topic in titles(max_bench, n)] == chapters, topic


def test_max_fact_count_and_fillers(max_bench: Benchmark) -> None:
    total = sum(len(sheet.live_facts()) for sheet in max_bench.sheets.values())
    assert 135 <= total <= 150
    assert len(max_bench.sheets["pc"].live_facts()) == 17
    assert len(max_bench.sheets["bike"].live_facts()) == 15
    profile = " ".join(f.text for f in max_bench.sheets["profile"].live_facts())
    for words in ("Max Becker, 34", "Berlin to Batumi", "Lena", "Boss", "65 m²"):
        assert words in profile
    # the fillers are never checked
    filler_words = ("Ryzen", "Canyon", "Fractal", "Shimano")
    assert not any(w in c.question + c.answer for c in max_bench.checks() for w in filler_words)


def test_max_checks_twenty_eight_in_the_exam_eight_along_the_way(max_bench: Benchmark) -> None:
    checks = max_bench.checks()
    exam = [c for p in max_bench.phases if p.chapter == "chapter20.md" for c in p.checks]
    assert len(checks) == 36
    assert [c.id for c in exam] == [f"20.{n}" for n in range(1, 29)]
    assert len(checks) - len(exam) == 8
    assert {t for c in checks for t in c.types} == set(CHECK_TYPES)
    assert all(c.types for c in checks)


def test_max_exam_opens_with_a_new_session(max_bench: Benchmark) -> None:
    exam = [p for p in max_bench.phases if p.chapter == "chapter20.md"]
    assert exam[0].js is not None and exam[0].js.strip().startswith("await bench.newSession();")
    assert all("require_all_checks = true" in (p.js or "") for p in exam)
    others = [p for p in max_bench.phases if p.chapter != "chapter20.md"]
    assert not any("newSession" in (p.js or "") for p in others)


QUOTED = {  # the article's checks: (words in the question, words in the answer)
    "20.3": ("What dose of vitamin D am I taking?", "4000 IU"),
    "20.8": ("Which car did we choose in the end and what deposit did we put down?", "RAV4, $500 deposit"),
    "20.10": ("How much food a day are we giving Boss in the end?", "50 g"),
    "20.16": (
        "How much per m² is the kitchen backsplash in the estimate?",
        "$55 per m² — the same tile as in the bathroom",
    ),
    "20.17": ("customs in the very first estimate, before the correction", "about $850"),
    "20.18": ("How much was the Göreme room before the rebooking?", "$90 a night"),
    "20.19": ("How much was the bathroom wall tile before the price rise?", "$42 per m²"),
    "20.20": ("Did we record the electricity tariff?", "you never told me the tariff"),
}


def test_max_quoted_checks_and_answers(max_bench: Benchmark) -> None:
    for check_id, (question, answer) in QUOTED.items():
        check = max_bench.check(check_id)
        assert check is not None, check_id
        assert question in check.question, check_id
        assert answer in check.answer, check_id
    types = {c.id: c.types for c in max_bench.checks()}
    assert types["20.17"] == types["20.18"] == types["20.19"] == ["HIST"]
    assert types["20.20"] == ["VOID"] and types["20.1"] == ["SERIES"]
    assert "NEG" in types["20.7"] and "AGG" in types["20.7"]


def test_the_electricity_tariff_is_never_mentioned(max_bench: Benchmark) -> None:
    texts = [p.body for p in max_bench.phases] + [
        f.text for s in max_bench.sheets.values() for f in s.live_facts()
    ]
    texts.append(max_bench.instructions)
    assert not any("tariff" in t.lower() for t in texts if "20.20" not in t)
    assert not any(re.search(r"\bcolou?r\b", t.lower()) for t in texts if "20.26" not in t)


# ---------------------------------------------------------------- KEY.md


@pytest.mark.parametrize("name", ["max", "multiday", "demo"])
def test_key_covers_every_check_and_agrees_with_the_answers(name: str) -> None:
    bench = load(name)  # check_answer_key runs inside validate: no problems means the sums add up
    key = parse_key((ROOT / name / "KEY.md").read_text(encoding="utf-8"))
    assert set(key.entries) == {c.id for c in bench.checks()}
    for check in bench.checks():
        entry = key.entries[check.id]
        assert entry.answer is not None and " ".join(entry.answer.split()) == " ".join(check.answer.split())
    for line in key.sums:
        check = bench.check(line.check_id)
        assert check is not None
        assert "AGG" in check.types or line.check_id in ("16.1", "20.11")


@pytest.mark.parametrize("name", ["max", "multiday", "demo"])
def test_every_check_declares_the_facts_it_depends_on(name: str) -> None:
    bench = load(name)
    deps = check_dependencies(bench)
    assert set(deps) == {c.id for c in bench.checks()}
    for check in bench.checks():
        if "VOID" in check.types:
            assert deps[check.id] == [], check.id  # never said: no fact to depend on
        for sheet, fact_id in deps[check.id]:  # each names a fact that exists when the check is asked
            phase = next(p for p in bench.phases if check in p.checks)
            assert (sheet, fact_id) in expected_facts(bench, phase.index, check.line), (
                check.id,
                sheet,
                fact_id,
            )


def test_max_dependencies_name_the_facts_each_answer_reads(max_bench: Benchmark) -> None:
    deps = check_dependencies(max_bench)
    assert deps["8.1"] == deps["20.3"] == [("health", "3.1")]
    kitchen = [("kitchen", f"1.{n}") for n in range(2, 9)]
    assert deps["14.1"] == kitchen + [("hallway", "1.2"), ("bathroom", "1.2")]  # the XREFs included
    assert deps["20.7"] == kitchen + [("kitchen", "1.9"), ("hallway", "1.2"), ("bathroom", "1.2")]
    assert ("works", "1.5") in deps["20.12"] and ("works", "1.5") in deps[
        "20.13"
    ]  # the scope: no air conditioner
    assert deps["20.19"] == [("bathroom", "1.2")]  # HIST: the edit history of the fact
    assert deps["20.20"] == deps["20.26"] == []
    assert len(deps["20.28"]) == 6 + 7 + 8 + 5 + 5 + 7 + 4


def test_validate_reports_a_wrong_total_in_a_copied_key(tmp_path: Path) -> None:
    copy = tmp_path / "max"
    shutil.copytree(ROOT / "max", copy)
    key = copy / "KEY.md"
    text = key.read_text(encoding="utf-8")
    key.write_text(text.replace("+ 240 + 320 + 120 = 7,700", "+ 240 + 320 + 120 = 7,800"), encoding="utf-8")
    _, problems = validate_benchmark(copy)
    assert [p.file for p in problems] == [str(key), str(key)]
    assert "add up to 7700, not the declared 7,800" in problems[0].message


def test_max_key_uses_every_trap_type_several_times(max_bench: Benchmark) -> None:
    key = parse_key((ROOT / "max" / "KEY.md").read_text(encoding="utf-8"))
    counts = {t: sum(1 for trap in key.traps if trap.type == t) for t in TRAP_TYPES}
    assert all(n >= 2 for n in counts.values()), counts
    checked = {c for trap in key.traps for c in trap.checks}
    assert checked <= {c.id for c in max_bench.checks()}
    # every trap is matched at a distance: some check is asked in a later phase than the trap's chapter
    phase_of = {c.id: p.index for p in max_bench.phases for c in p.checks}
    for trap in key.traps:
        assert trap.checks and max(phase_of[c] for c in trap.checks) > 0
    # every check of an aggregate type has a sum line
    summed = {s.check_id for s in key.sums}
    assert {c.id for c in max_bench.checks() if "AGG" in c.types} <= summed


# ---------------------------------------------------------------- multiday


def test_multiday_is_two_weeks_of_days_in_virtual_time(multiday: Benchmark) -> None:
    assert multiday.time_master and multiday.time_gate
    assert multiday.start_time == datetime(2026, 3, 1, 20, 0)
    assert date(2026, 3, 1).weekday() == 6  # a Sunday
    phases = multiday.phases
    assert 15 <= len(phases) <= 16
    dates = [p.date for p in phases]
    assert all(d is not None for d in dates)
    assert dates == sorted(set(dates))  # strictly increasing
    assert dates[0] == date(2026, 3, 1) and phases[0].anchors[0] == time(20, 0)
    for phase in phases:
        assert phase.anchors and phase.anchors == sorted(phase.anchors)
        assert phase.title == f"Day {phase.date.day}"  # type: ignore[union-attr]


def test_multiday_calendar_parkrun_office_and_the_silent_day(multiday: Benchmark) -> None:
    by_day = {p.date.day: p for p in multiday.phases if p.date}
    for day, phase in by_day.items():
        weekday = date(2026, 3, day).weekday()
        if "parkrun at Little Stoke:" in phase.body:
            assert weekday == 5, day  # Saturdays
        if re.search(r"^\d\d:\d\d — office day", phase.body, re.M):
            assert weekday in (1, 3), day  # Tuesdays and Thursdays
    assert [d for d, p in by_day.items() if "parkrun at Little Stoke:" in p.body] == [7, 14]
    assert [d for d, p in by_day.items() if re.search(r"^\d\d:\d\d — office day", p.body, re.M)] == [
        3,
        5,
        10,
        12,
    ]
    assert "send nothing" in by_day[8].body and "no signal all day" in by_day[9].body
    assert "same route as yesterday, 7 km in 40:50" in by_day[10].body
    assert [d for d, p in by_day.items() if "Ashton Court" in p.body and "❓" not in p.body] == [9]
    assert "8 km" in by_day[11].body and "8.4 km" in by_day[12].body


def test_the_silent_day_has_nothing_to_send(multiday: Benchmark) -> None:
    day8 = next(p for p in multiday.phases if p.date == date(2026, 3, 8))
    assert not day8.checks and phase_directives(multiday)[day8.index] == []
    plan = plan_phase(
        f"Phase {day8.index + 1}/{len(multiday.phases)} ({day8.chapter}: {day8.title})\n\n{day8.body}",
        set(multiday.sheets),
    )
    assert [(a.kind, a.args) for a in plan] == [
        ("wait", {"until": "21:00"})
    ]  # the scripted persona only waits
    # the campaign's new date is told by the Edit line alone, not by a directive inside the 18:30 line
    day5 = next(p for p in multiday.phases if p.date == date(2026, 3, 5))
    assert [(d.kind, d.sheet, d.fact_id) for d in phase_directives(multiday)[day5.index]] == [
        ("edit", "work", "1.2")
    ]
    assert "Tell the assistant" not in day5.body


def test_multiday_checks(multiday: Benchmark) -> None:
    checks = multiday.checks()
    assert 10 <= len(checks) <= 14
    answers = {c.id: c.answer for c in checks}
    assert answers["12.1"].startswith("8 km")
    assert "Ashton Court" in answers["15.1"]
    assert answers["15.8"].startswith("53.4 km")
    wednesday = next(p for p in multiday.phases if p.date == date(2026, 3, 12))
    assert [c.id for c in wednesday.checks] == ["12.1"]
    assert wednesday.body.index("❓ 12.1") < wednesday.body.index("8.4 km")
    # the runs add up: nine of them, Wednesday corrected, the silent Sunday included
    runs = [Decimal(x) for x in "5.5 6 5 5 7 7 8.4 4.5 5".split()]
    assert len(runs) == 9 and sum(runs) == Decimal("53.4")
