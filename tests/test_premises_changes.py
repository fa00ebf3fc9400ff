"""What a change brings in, what a total rests on, and refusals the persona can act on (issue 31, items 1, 2, 8).

Unit tests of ``engine/grading/changes.py`` (the values a fact's change introduced, old values kept for history
left out) and ``engine/grading/totals.py`` (the live facts a total adds up from, bounded), then the persona's
tools on ``tests/benchmarks/everyday_values`` as a language model would call them: a one-figure change told by
its figure alone is marked told; a refusal names exactly what to send; two edits with no message between them
are told as one change.
"""

from __future__ import annotations

import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import FORGETFUL, fast, make_config

from engine.benchmark.model import Category, Fact, Sheet
from engine.grading.changes import history_spans, introduced
from engine.grading.told_values import Value
from engine.grading.totals import decompositions
from engine.persona.notebook import ToolError
from engine.persona.tools import dispatch
from engine.run.build import build_run
from engine.run.loop import Run

NONE: frozenset[str] = frozenset()


def brought(before: str, after: str) -> list[str]:
    return list(dict.fromkeys(v.label for v in introduced(before, after, NONE)))  # a range: one label


@pytest.mark.parametrize(
    ("before", "after", "new"),
    [
        (
            "Wall tile: 25 m² at $42 per m² → $1,050",
            "Wall tile: 25 m² at $55 per m² → $1,375 (was $42)",
            ["$55", "$1,375"],
        ),
        (
            "Insurance — $400 a year",
            "Insurance — $430 a year (the insurer's new quote; we had budgeted $400)",
            ["$430"],
        ),
        ("Insurance — $400 a year", "Insurance — $430 a year (we had budgeted 400)", ["$430"]),
        (
            "The plumber Ben Carter charges $900",
            "The plumber Ben Carter charges $950 (quoted $900 first)",
            ["$950"],
        ),
        (
            "Service at Autohaus Keller: EUR 380",
            "Service at Autohaus Keller: EUR 420 (they said EUR 380 first)",
            ["EUR 420"],
        ),
        ("Flights — $520", "Flights — 480 EUR (the $520 fare expired before I paid)", ["480 EUR", "EUR"]),
        (
            "The accountant is Henrik Moll",
            "The accountant is Birgit Sand (Henrik Moll has retired, he was the old one)",
            ["Birgit", "Sand"],
        ),
        (
            "Marta comes Monday, Wednesday and Friday",
            "Marta comes Mon–Thu (instead of Monday, Wednesday and Friday)",
            ["Mon–Thu"],
        ),
        ("Yoga on Tuesday at 18:30", "Yoga on Tuesday at 19:15 (it was at 18:30 before)", ["19:15"]),
        ("Yoga on Tuesday", "Yoga moved from Tuesday to Thursday", ["Thursday"]),
        ("Check-up on 10 June", "Check-up on 2 June (moved from 10 June: the GP is on leave)", ["2 June"]),
        ("Boss gets 70 g a day", "Boss gets 55 g a day — cut from 70 g so he loses weight", ["55 g"]),
        (
            "Vitamin D — 2000 IU a day",
            "Vitamin D — 4000 IU a day (I first said 2000 by mistake)",
            ["4000 IU"],
        ),
        ("Lunch is 12 euros", "Lunch was raised to 14 euros", ["14 euros"]),
    ],
)
def test_a_change_brings_in_only_its_new_values(before: str, after: str, new: list[str]) -> None:
    assert brought(before, after) == new


@pytest.mark.parametrize(
    ("text", "old"),
    [
        ("$55 per m² (new price list; was $42)", ["was $42"]),
        ("$430 a year (the insurer's new quote; we had budgeted $400)", ["we had budgeted $400"]),
        ("microcement at $40 per m² (instead of decorative stone)", ["instead of decorative stone"]),
        ("on 2 June (moved from 10 June: the GP is on leave)", ["moved from 10 June: the GP is on leave"]),
        ("Yoga moved from Tuesday to Thursday", ["moved from Tuesday"]),
        (
            "a wardrobe for $1,050 (was $900 before we made it full height)",
            ["was $900 before we made it full height"],
        ),
        ("The accountant was Henrik Moll; now it is Birgit Sand", ["was Henrik Moll"]),
    ],
)
def test_old_values_kept_for_history_are_found(text: str, old: list[str]) -> None:
    assert [text[s:e].strip() for s, e in history_spans(text)] == old


@pytest.mark.parametrize(
    "text",
    [
        "The oven costs 5,100 EUR from the supplier Bakeline",
        "The price was raised to $55 per m²",
        "Open from Monday to Thursday",
        "Rex eats 250 g of dry food a day (the vet's advice)",
    ],
)
def test_current_values_are_not_history(text: str) -> None:
    assert history_spans(text) == []


def sheet(name: str, *facts: str, title: str = "") -> Sheet:
    category = Category(
        number=1, name=name, facts=[Fact(id=f"1.{i}", text=t) for i, t in enumerate(facts, 1)]
    )
    return Sheet(name=name, title=title or name.title(), categories=[category])


def total(label: str, amount: str, unit: str = "") -> Value:
    return Value(label, "n:" + amount, kind="amount", amount=Decimal(amount), unit=unit)


SHEETS = {
    "bathroom": sheet(
        "bathroom",
        "Wall tile: 25 m² at $55 per m² → $1,375 (new price list; was $42 per m²)",
        "Floor tile: 6 m² at $35 per m² → $210",
        "The vanity unit costs $640",
        "The plumber charges $950 flat (we had budgeted $900)",
        "The old mirror was sold — ",
    ),
    "car": sheet(
        "car", "The service costs EUR 420", "Four winter tyres cost EUR 560, fitted", "Parking: $45"
    ),
}


def parts(ways: list[Any]) -> list[list[str]]:
    return [sorted(f"{p.sheet} {p.fact.id}" for p, _ in way) for way in ways]


def test_a_total_is_found_in_the_facts_it_adds_up_from_products_included() -> None:
    ways = decompositions(SHEETS, total("$3,175", "3175", "USD"), "What does the bathroom come to?", NONE)
    assert parts(ways) == [["bathroom 1.1", "bathroom 1.2", "bathroom 1.3", "bathroom 1.4"]]
    cents = {p.fact.id: c for p, c in ways[0]}
    assert cents["1.1"] == 137_500  # 25 m² × $55 or the $1,375 written: one term of the fact
    assert decompositions(
        SHEETS, total("$3,175", "3175", "USD"), "What's the grand total?", NONE
    )  # any sheet


def test_a_total_keeps_to_its_currency_and_to_current_values() -> None:
    assert parts(decompositions(SHEETS, total("EUR 980", "980", "EUR"), "car and tyres?", NONE)) == [
        ["car 1.1", "car 1.2"]
    ]
    assert decompositions(SHEETS, total("EUR 1,025", "1025", "EUR"), "the car?", NONE) == []  # 420+560+45$
    assert (
        decompositions(SHEETS, total("$3,125", "3125", "USD"), "the bathroom?", NONE) == []
    )  # with $900: old


def test_a_total_too_many_sets_of_facts_make_is_left_unjudged_and_the_search_is_bounded() -> None:
    many = {"things": sheet("things", *(f"Item {i} costs ${10 * (i % 7 + 1)}" for i in range(60)))}
    assert decompositions(many, total("$120", "120", "USD"), "all the things?", NONE) == []  # too many ways
    huge = {"ledger": sheet("ledger", *(f"Line {i}: ${1000 + 37 * i}.{i % 100:02d}" for i in range(200)))}
    started = time.perf_counter()
    decompositions(huge, total("$98,765.43", "98765.43", "USD"), "the ledger total?", NONE)
    assert time.perf_counter() - started < 2.0


# ---- the persona's tools on everyday_values ---------------------------------------------------------


async def started(tmp_path: Path) -> Run:
    config = make_config(tmp_path, {"r": {"benchmark": "everyday_values", "agent": FORGETFUL}})
    run = build_run(config, "r", tune=fast)
    await run._initialise()  # noqa: SLF001 - driving the tools by hand
    return run


async def call(run: Run, name: str, **args: Any) -> str:
    return await dispatch(run, name, args)


async def refused(run: Run, name: str, **args: Any) -> str:
    with pytest.raises(ToolError) as info:
        await dispatch(run, name, args)
    return str(info.value)


async def finish(run: Run) -> None:
    await run.recorder.writer.flush()
    run.recorder.transcript.close()


async def test_a_refusal_names_exactly_what_to_send_and_a_code_is_no_name(tmp_path: Path) -> None:
    run = await started(tmp_path)
    await call(run, "facts_read", sheet="car")
    error = await refused(run, "facts_mark_told", sheet="car", ids=["1.1", "1.3"])
    assert (  # half the names of a fact: one of Autohaus Keller
        "no message to the assistant carried car 1.1's amount EUR 380 and name Autohaus; car 1.3's date 14 October:"
        in error
    )
    assert "facts_mark_told(car, [1.1, 1.3])" in error and "name EUR" not in error
    await call(
        run, "send_message", text="The service at Keller's is 380 euros, and the car goes in Oct 14th."
    )
    await call(run, "facts_mark_told", sheet="car", ids=["1.1", "1.3"])
    await finish(run)


async def test_a_one_figure_change_is_told_by_its_figure_alone(tmp_path: Path) -> None:
    run = await started(tmp_path)
    await call(run, "facts_read", sheet="bathroom")
    await call(run, "send_message", text="The plumber Ben Carter charges $900 flat for the labour.")
    await call(run, "facts_mark_told", sheet="bathroom", ids=["1.4"])
    text = "The plumber Ben Carter charges $950 flat for the labour (we had budgeted $900)"
    await call(run, "facts_edit", sheet="bathroom", id="1.4", text=text)
    error = await refused(run, "facts_mark_told", sheet="bathroom", ids=["1.4"])
    assert "since the last change carried bathroom 1.4's new amount $950: send it" in error
    assert "Ben" not in error and "900" not in error  # neither the unchanged name nor the old value
    await call(run, "send_message", text="Labour's going to be 950 bucks now.")
    await call(run, "facts_mark_told", sheet="bathroom", ids=["1.4"])
    await finish(run)


async def test_two_edits_with_no_message_between_are_one_change(tmp_path: Path) -> None:
    run = await started(tmp_path)
    await call(run, "facts_read", sheet="week")
    await call(run, "send_message", text="Yoga is on Tuesday and Thursday at 18:30.")
    await call(run, "facts_mark_told", sheet="week", ids=["1.2"])
    await call(run, "facts_edit", sheet="week", id="1.2", text="My yoga class is on Tuesday at 19:00")
    await call(run, "facts_edit", sheet="week", id="1.2", text="My yoga class is on Wednesday at 19:15")
    assert run.state.changed_from["week 1.2"] == "My yoga class is on Tuesday and Thursday at 18:30"
    error = await refused(run, "facts_mark_told", sheet="week", ids=["1.2"])
    assert "week 1.2's new day Wednesday and time 19:15" in error
    await call(run, "send_message", text="Yoga moved to Weds, 7:15 pm.")
    await call(run, "facts_mark_told", sheet="week", ids=["1.2"])
    await call(run, "facts_edit", sheet="week", id="1.2", text="My yoga class is on Wednesday at 19:30")
    assert run.state.changed_from["week 1.2"] == "My yoga class is on Wednesday at 19:15"  # told between
    await finish(run)


async def test_a_state_written_before_the_text_was_kept_reads_the_benchmarks_own_text(tmp_path: Path) -> None:
    run = await started(tmp_path)
    await call(run, "facts_read", sheet="car")
    await call(
        run, "send_message", text="Service at Autohaus Keller: EUR 380. The car goes in on 14 October."
    )
    await call(run, "facts_mark_told", sheet="car", ids=["1.1", "1.3"])
    text = "The yearly service at Autohaus Keller costs EUR 420 (they quoted EUR 380 first)"
    await call(run, "facts_edit", sheet="car", id="1.1", text=text)
    run.state.changed_from.clear()  # as a state of version 3 or older holds it
    error = await refused(run, "facts_mark_told", sheet="car", ids=["1.1"])
    assert "car 1.1's new amount EUR 420: send it" in error
    await call(run, "send_message", text="They want 420 euros for the service now.")
    await call(run, "facts_mark_told", sheet="car", ids=["1.1"])
    await finish(run)
