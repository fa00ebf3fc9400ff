"""The shipped benchmarks (benchmarks/max, benchmarks/multiday, benchmarks/demo) keep the article's invariants.

Besides counting chapters, facts and checks, the max tests replay every ``Edit``/``Add`` directive the
way the persona would apply them to her live sheets (``engine/benchmark/directives.py``), and recompute
each aggregate check from the sheets as they stand when the check is asked — so the chapters, the sheets,
the answers and KEY.md (its ``uses:`` included) all agree.
"""

from __future__ import annotations

import re
import shutil
from datetime import date, datetime, time
from decimal import Decimal
from pathlib import Path

import pytest

from engine.benchmark.answer_key import check_dependencies, numbers_in, parse_key
from engine.benchmark.directives import expected_facts, phase_directives
from engine.benchmark.model import CHECK_TYPES, DELETED, TRAP_TYPES, Benchmark
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


# ---------------------------------------------------------------- max: replaying the persona's edits

Facts = dict[tuple[str, str], str]  # (sheet, fact id) -> text, as engine/benchmark/directives.py replays them


def at_check(bench: Benchmark, check_id: str) -> Facts:
    """Every fact as the directives leave it when ``check_id`` is asked."""
    phase = next(p for p in bench.phases if any(c.id == check_id for c in p.checks))
    check = bench.check(check_id)
    assert check is not None
    return expected_facts(bench, phase.index, before_line=check.line)


def final(bench: Benchmark) -> Facts:
    return expected_facts(bench, len(bench.phases) - 1)


def amount(text: str) -> Decimal:
    """The cost a fact puts into an estimate: '→ $N' (a computed line) or else the first '— $N'."""
    arrow = re.search(r"→ \$([\d,]+)", text)
    match = arrow or re.search(r"— \$([\d,]+)", text)
    return Decimal(match.group(1).replace(",", "")) if match else Decimal(0)


def per_m2(text: str | None) -> Decimal:
    assert text is not None
    match = re.search(r"\$(\d+) per m²", text)
    assert match, text
    return Decimal(match.group(1))


def live(facts: Facts, name: str, category: int | None = None) -> dict[str, str]:
    """The live facts of one sheet (or one category of it) by id."""
    return {
        i: t
        for (s, i), t in facts.items()
        if s == name and t != DELETED and category in (None, int(i.split(".")[0]))
    }


def total(facts: Facts, name: str, category: int | None = None) -> Decimal:
    result = sum((amount(t) for t in live(facts, name, category).values()), Decimal(0))
    if (
        name == "kitchen"
    ):  # XREF lines carry no price: the hallway porcelain (laid) and the bathroom wall tile
        result += 9 * per_m2(facts.get(("hallway", "1.2"))) + 4 * per_m2(facts.get(("bathroom", "1.2")))
    return result


ROOMS = ("hallway", "bathroom", "kitchen", "living", "bedroom", "works", "balcony")
AGGREGATES = {  # check id -> its value computed from the facts as they are when it is asked
    "12.1": lambda s: total(s, "trip", 2),
    "14.1": lambda s: total(s, "kitchen"),
    "15.1": lambda s: total(s, "trip", 2),
    "20.5": lambda s: total(s, "hallway"),
    "20.6": lambda s: total(s, "bathroom"),
    "20.7": lambda s: total(s, "kitchen"),
    "20.9": lambda s: total(s, "car", 1),
    "20.12": lambda s: total(s, "living"),
    "20.13": lambda s: total(s, "bedroom"),
    "20.14": lambda s: total(s, "trip", 2),
    "20.23": lambda s: total(s, "balcony"),
    "20.27": lambda s: total(s, "works"),
    "20.28": lambda s: sum((total(s, room) for room in ROOMS), Decimal(0)),
}
XREFS = {("hallway", "1.2"), ("bathroom", "1.2")}  # what the kitchen's floor and backsplash refer to
SUMMED: dict[
    str, tuple[list[tuple[str, int | None]], set[tuple[str, str]]]
] = {  # (sheet, category) parts, references
    "12.1": ([("trip", 2)], set()),
    "14.1": ([("kitchen", None)], XREFS),
    "15.1": ([("trip", 2)], set()),
    "20.5": ([("hallway", None)], set()),
    "20.6": ([("bathroom", None)], set()),
    "20.7": ([("kitchen", None)], XREFS),
    "20.9": ([("car", 1)], set()),
    "20.12": ([("living", None)], set()),
    "20.13": ([("bedroom", None)], set()),
    "20.14": ([("trip", 2)], set()),
    "20.23": ([("balcony", None)], set()),
    "20.27": ([("works", None)], set()),
    "20.28": ([(room, None) for room in ROOMS], XREFS),
}


def test_every_edit_targets_a_live_fact_and_aggregates_follow_from_the_sheets(max_bench: Benchmark) -> None:
    for index, directives in phase_directives(max_bench).items():
        for directive in directives:
            before = expected_facts(max_bench, index, before_line=directive.line)
            if directive.kind == "edit":
                assert before.get((directive.sheet, directive.fact_id), DELETED) != DELETED, directive
            else:
                assert before.get((directive.sheet, directive.fact_id), DELETED) == DELETED, directive
    expected = {
        "12.1": 2070,
        "14.1": 7590,
        "15.1": 2120,
        "20.5": 1740,
        "20.6": 4090,
        "20.7": 7700,
        "20.9": 21180,
        "20.12": 2282,
        "20.13": 2288,
        "20.14": 2190,
        "20.23": 370,
        "20.27": 8570,
        "20.28": 27040,
    }
    for check_id, compute in AGGREGATES.items():
        value = compute(at_check(max_bench, check_id))
        assert value == expected[check_id], check_id
        check = max_bench.check(check_id)
        assert check is not None and value in numbers_in(check.answer), check_id


def test_every_priced_line_of_an_aggregate_is_among_its_declared_dependencies(max_bench: Benchmark) -> None:
    deps = check_dependencies(max_bench)
    for check_id, (parts, references) in SUMMED.items():
        facts = at_check(max_bench, check_id)
        summed = {
            (name, i): t
            for (name, i), t in facts.items()
            if any(name == n and c in (None, int(i.split(".")[0])) for n, c in parts)
        }
        # every line with a price or a reference, and every struck-out line (it is left out of the total)
        needed = {key for key, text in summed.items() if amount(text) or "same" in text or text == DELETED}
        missing = (needed | references) - set(deps[check_id])
        assert not missing, (check_id, sorted(missing))


def test_the_articles_edit_chains_end_where_the_answers_say(max_bench: Benchmark) -> None:
    end = final(max_bench)
    original = expected_facts(max_bench, 0, before_line=0)

    def text(facts: Facts, name: str, fact_id: str) -> str:
        return facts.get((name, fact_id), "")

    # Boss: 70 → 55 (RECONSIDER, ch2) → 50 (SELF-FIX, ch10)
    assert "70 g" in text(original, "family", "2.3")
    assert "50 g of dry food" in text(end, "family", "2.3")
    # tile $42 → $55; the backsplash refers to it and never carries a price
    assert "$42 per m²" in text(original, "bathroom", "1.2") and "$55 per m²" in text(end, "bathroom", "1.2")
    assert "same tile as on the bathroom walls" in text(end, "kitchen", "1.3")
    assert "$" not in text(original, "kitchen", "1.2") + text(original, "kitchen", "1.3")
    # customs about $850 → $1,100; insurance $400 → $430; the RAV4 with a $500 deposit
    assert "about $850" in text(original, "car", "1.2") and "$1,100" in text(end, "car", "1.2")
    assert "$430" in text(end, "car", "1.4")
    assert "RAV4" in text(end, "car", "4.3") and "$500 deposit" in text(end, "car", "4.3")
    # Göreme $90 → $110, flights $520 → $560
    assert "$90 a night" in text(original, "trip", "2.2") and "$110 a night" in text(end, "trip", "2.2")
    assert "$520" in text(original, "trip", "2.1") and "$560" in text(end, "trip", "2.1")
    # the wine fridge: added in ch11 ($330) as kitchen 1.8, gone by the exam, its id taken by the pantry unit
    assert "wine fridge" in text(at_check(max_bench, "14.1"), "kitchen", "1.8")
    assert "$330" in text(at_check(max_bench, "14.1"), "kitchen", "1.8")
    assert not any("Built-in wine fridge" in t for t in live(end, "kitchen").values())
    assert text(end, "kitchen", "1.8").startswith("Pull-out pantry unit")
    # the partition: living room 5.2 × 4.0 m
    assert "5.2 × 4.0 m" in text(end, "living", "1.1")
    # Anna's visit in three weeks, for a week
    assert "{{FUTURE:3:weeks}}, for a week" in text(end, "family", "3.3")
    # the blood-pressure series: 142/95 first, 126/82 today last
    log = live(end, "health", 2)
    readings = [log[i] for i in sorted(log, key=lambda i: int(i.split(".")[1]))]
    assert len(readings) == 6 and "142/95" in readings[0] and readings[-1].startswith("{{TODAY}} — 126/82")


def test_the_kitchen_floor_and_the_air_conditioners_leave_no_doubt(max_bench: Benchmark) -> None:
    sheets = max_bench.sheets
    floor = sheets["kitchen"].find("1.2")
    backsplash = sheets["kitchen"].find("1.3")
    hallway_floor = sheets["hallway"].find("1.2")
    conditioners = sheets["works"].find("1.5")
    assert floor and backsplash and hallway_floor and conditioners
    # the kitchen floor costs the hallway's laid price per m², laying included; the backsplash is laid under the works
    assert "per m² laid" in hallway_floor.text
    assert "same laid price per m²" in floor.text and "laying included" in floor.text
    assert "same price per m²" in backsplash.text and "general works" in backsplash.text
    # the air conditioners belong to the general works, never to a room's total, and the questions say so
    assert "not part of either room's estimate" in conditioners.text
    for check_id in ("14.1", "20.5", "20.6", "20.7", "20.12", "20.13", "20.23"):
        check = max_bench.check(check_id)
        assert check is not None and "without the general works" in check.question, check_id
    profile = " ".join(f.text for f in sheets["profile"].live_facts())
    assert "general works (everything not tied to one room) as a separate part" in profile


def _scripted_says(bench: Benchmark, phase_index: int) -> list[str]:
    """What the scripted persona would send from a phase's own lines (Say lines, anchors, edits, adds)."""
    phase = bench.phases[phase_index]
    plan = plan_phase(
        f"Phase {phase_index + 1}/{len(bench.phases)} ({phase.chapter}: {phase.title})\n\n{phase.body}",
        set(bench.sheets),
    )
    return [a.args["text"] for a in plan if a.kind == "say"] + [
        a.args["text"] for a in plan if a.kind in ("edit", "add")
    ]


def test_the_wine_fridge_retirement_is_told_on_its_own_line(max_bench: Benchmark) -> None:
    phase = next(p for p in max_bench.phases if p.title == "Renovation — kitchen, the wine fridge")
    said = _scripted_says(max_bench, phase.index)
    assert any("wine fridge doesn't fit" in text and "strike" in text for text in said)
    directives = phase_directives(max_bench)[phase.index]
    assert [(d.kind, d.fact_id, d.text[:8]) for d in directives] == [
        ("edit", "1.8", "—"),
        ("add", "1.8", "Pull-out"),
    ]


def test_wine_fridge_is_a_late_add_six_chapters_after_the_kitchen(max_bench: Benchmark) -> None:
    def chapters_with(pattern: str) -> list[int]:
        return sorted({int(p.chapter[7:-3]) for p in max_bench.phases if re.search(pattern, p.body, re.M)})

    assert chapters_with(r"^Tell the `kitchen` sheet") == [5]
    assert chapters_with(r"^Add to kitchen category 1: Built-in wine fridge") == [11]
    assert chapters_with(r"^Edit kitchen 1\.8: —") == [14]
    assert chapters_with(r"fix it everywhere it's used") == [11]


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
