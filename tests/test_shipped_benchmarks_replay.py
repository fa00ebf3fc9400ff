"""max's sheets replayed (benchmarks/max): every ``Edit``/``Add`` directive applied the way the persona would
apply it to her live sheets (``engine/benchmark/directives.py``), and each aggregate check recomputed from
the sheets as they stand when the check is asked — so the chapters, the sheets, the answers and KEY.md (its
``uses:`` included) all agree. The rest of the shipped benchmarks' invariants: ``test_shipped_benchmarks.py``.
"""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest

from engine.benchmark.answer_key import check_dependencies, numbers_in
from engine.benchmark.directives import expected_facts, phase_directives
from engine.benchmark.model import DELETED, Benchmark
from engine.benchmark.validate import validate_benchmark
from engine.models.persona_plan import plan_phase

ROOT = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(scope="module")
def max_bench() -> Benchmark:
    bench, problems = validate_benchmark(ROOT / "max")
    assert problems == [], "\n".join(str(p) for p in problems)
    assert bench is not None
    return bench


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
