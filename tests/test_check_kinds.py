"""A check's kind inferred from its question and correct answer where its line has no ``[TYPE]`` tag
(engine/benchmark/check_kinds.py, issue 31 item 5): many wordings of each kind, and the declared tags kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.benchmark.check_kinds import Kinds, infer_kinds, kinds_of, never_told
from engine.benchmark.model import Check
from engine.benchmark.validate import load_benchmark

ROOT = Path(__file__).resolve().parent.parent

VOID = [
    ("What's my passport number?", "You never told me your passport number."),
    ("Which insurer covers the boat?", "you didn't tell me which insurer it is"),
    ("What colour is the new sofa?", "Not told."),
    ("How tall is the hedge?", "You haven't mentioned the hedge's height."),
    ("What is the wifi password at the cabin?", "There's no record of it — you never shared it."),
    ("Did I give you my locker code?", "No. You never gave me a locker code."),
    ("When does the lease end?", "Unknown: you did not say when the lease ends."),
    ("Did we agree on a budget for the party?", "No — a budget was never discussed."),
    ("What does the plumber charge per hour?", "Nothing was said about his hourly rate."),
    ("What is the cat's vet called?", "You have not told me the vet's name, so I can't say."),
    ("Did I mention my allergy?", "No, you never did."),
    ("Which gate does the ferry leave from?", "You didn't — only the time, 8:15."),
]
HIST = [
    ("What was the rent before the landlord's increase?", "€850 a month."),
    ("How much did the flights cost originally?", "$430 for both of us."),
    ("What dose did I take at first?", "5 mg a day."),
    ("How much did the gym use to cost?", "£30 a month."),
    ("What was the old price of the tiles?", "$42 per m²."),
    ("Which date did we initially book the venue for?", "14 May."),
    ("What did I first say the deposit was?", "about 500 EUR"),
    ("How long was the commute before we moved?", "50 minutes each way."),
    ("How big was the garden plot before the council changed the borders?", "120 m²."),
    ("How much was the quote before the discount?", "2,300 EUR."),
    ("What was the price before?", "$80."),
    ("Who was the previous accountant?", "Henrik Moll."),
]
AGG = [
    ("What does the whole trip cost in total?", "$2,450."),
    ("How much do the three bikes come to altogether?", "1,940 EUR."),
    ("What do the rent and the electricity cost together each month?", "£1,120."),
    ("How many kilometres did I cycle this week?", "86 km."),
    ("How much have we spent on the wedding so far?", "$7,300."),
    ("What's the full cost of the car with the insurance?", "21,400 EUR."),
    ("How much did I spend over these three days?", "€240."),
    ("How many books did I read in all?", "12."),
    ("What does it add up to?", "$310."),
    ("What do I pay for the phone and the internet?", "45 EUR (20 EUR + 25 EUR)."),
    ("What is the sum of the two deposits?", "$900."),
    ("How many hours did I work in the last fortnight?", "74 hours."),
]
SERIES = [
    ("List my weigh-ins with their dates.", "3 May — 81.0 kg; 10 May — 80.2 kg; 17 May — 79.9 kg."),
    ("What were my readings, oldest first?", "{{PAST:3:weeks}} — 140/90; {{PAST:1:weeks}} — 132/85."),
    ("What did the meter say each month?", "January: 4,210 kWh, February: 4,630 kWh, March: 4,980 kWh"),
    ("When did I swim and how far?", "Monday — 1.2 km; Wednesday — 1.5 km; Saturday — 2 km."),
    ("Give me the log of the boiler's pressure.", "2026-01-04 1.2 bar, 2026-01-11 1.0 bar"),
    ("How did my 5 km times go?", "31:20 on 2 March, 30:05 on 9 March and 29:40 on 16 March."),
]
NEG_AGG = [
    ("What's the kitchen total now?", "$6,900 (the wine fridge was struck out)."),
    ("What do the wedding extras cost in total?", "€1,200 — the fireworks were cancelled."),
    ("How much is the trip in total, now that the Cappadocia tour is off the list?", "$1,980 (tour dropped)"),
]
NEG = [
    ("Which courses am I taking this term?", "Spanish and pottery; the chess club was cancelled."),
    ("Which plants are on the balcony now?", "Basil and mint — the tomatoes are no longer there."),
]
RECALL = [
    ("What is my dog's name?", "Rex."),
    ("How much did the flights cost?", "$560 for two, return."),
    ("When is the dentist appointment?", "Tuesday, 12 May at 9:30."),
    ("On which days am I in the office?", "Tuesdays and Thursdays."),
    ("Which days do I run?", "Monday, Wednesday and Friday."),
    ("What do I need to buy before the move?", "Boxes and tape."),
    ("How many children does my sister have?", "Two."),
    (
        "What did we decide for the hallway wall?",
        "Microcement, 5 m² at $40 per m² — $200 (instead of stone).",
    ),
    ("Where did I run yesterday?", "Around the lake."),
    ("What did the mechanic tell you to check?", "The tyre pressure, every two weeks."),
    ("How many km did I run on Sunday?", "10 km."),
    ("What did you tell me not to mention to Lena?", "The surprise party."),
    ("What is the price of the tile now?", "$55 per m², the same as in the bathroom."),
    ("When is Anna visiting, and for how long?", "{{FUTURE:3:weeks}}, for a week."),
]


def _cases(kind: list[str], cases: list[tuple[str, str]]) -> list[tuple[str, str, list[str]]]:
    return [(q, a, kind) for q, a in cases]


@pytest.mark.parametrize(
    ("question", "answer", "kinds"),
    _cases(["VOID"], VOID)
    + _cases(["HIST"], HIST)
    + _cases(["AGG"], AGG)
    + _cases(["SERIES"], SERIES)
    + _cases(["AGG", "NEG"], NEG_AGG)
    + _cases(["NEG"], NEG)
    + _cases(["RECALL"], RECALL),
)
def test_a_kind_is_inferred_from_the_question_and_the_answer(
    question: str, answer: str, kinds: list[str]
) -> None:
    assert infer_kinds(question, answer) == kinds


def test_kinds_that_come_together_are_both_inferred() -> None:
    assert infer_kinds("What was the bathroom total before the price rise?", "$3,440.") == ["AGG", "HIST"]
    weights = "1 March — 68.2 kg; 8 March — 67.6 kg; 15 March — 67.0 kg; in all 1.2 kg lost"
    assert infer_kinds("List my weigh-ins with dates, and the total lost", weights) == ["AGG", "SERIES"]


def test_a_never_told_answer_is_only_void_whatever_else_it_says() -> None:
    answer = "You never told me the total — only that the first harvest was 18 kg on 14 June."
    assert infer_kinds("How much honey did I harvest in total, before the rain?", answer) == ["VOID"]
    assert never_told("No record: the tariff was never given.")
    assert not never_told("No, we kept the old car.")
    assert not never_told("She said she did not want a party; we told the others.")


def test_declared_tags_stay_authoritative() -> None:
    tagged = Check(id="1.1", types=["RECALL"], question="What's the total?", answer="You never told me.")
    assert kinds_of(tagged) == Kinds(("RECALL",), inferred=False)
    assert kinds_of(tagged).shown() == ["RECALL"]
    untagged = tagged.model_copy(update={"types": []})
    assert kinds_of(untagged) == Kinds(("VOID",), inferred=True)
    assert kinds_of(untagged).shown() == ["VOID~"]


@pytest.mark.parametrize(
    "folder", ["benchmarks/demo", "benchmarks/max", "benchmarks/multiday", "tests/benchmarks/prose_seed"]
)
def test_the_inference_mostly_agrees_with_the_shipped_tags(folder: str) -> None:
    """The tagged benchmarks as a labelled set: a NEG whose cancellation neither text names is the miss."""
    checks = load_benchmark(ROOT / folder).checks()
    missed = [c.id for c in checks if infer_kinds(c.question, c.answer) != c.types]
    assert len(missed) <= max(1, len(checks) // 15), missed
