"""The rules judge rule by rule, and the persona's prompt grading by the same rule (issue 21): non-answers and
questions back, shown working with units, competing final figures, lists of options, weekdays. Each both
ways, on the issues' own examples and on made-up checks (the labeled sets hold the benchmarks' checks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.models.judge_figures import find_figures
from engine.models.judge_nonanswers import question_spans
from engine.models.judge_working import find_workings
from engine.models.rules_judge import judge

ROOT = Path(__file__).resolve().parent.parent
WAGE = ("What is Kalin's hourly wage?", "you never told me Kalin's wage.")
TRIP = "What does the trip to the depot cost?"


# --- the rules judge, rule by rule (from issue 14) -----------------------------------------------


@pytest.mark.parametrize(
    ("question", "expected", "reply", "score"),
    [
        ("What's the total?", "$5,400.", "$5,100 plus $300 delivery.", 10),  # a sum shown as its parts
        ("What's the total?", "$5,400.", "5.400 $", 10),
        ("What's the total?", "$5,400.", "five thousand four hundred dollars", 10),
        ("What's the total?", "$5,400.", "$5,400 — $5,100 of goods and $300 of delivery.", 10),
        ("What's the total?", "$5,400.", "$5,400 or $5,100, I'm not sure.", 0),  # a hedge
        ("What's the total?", "$5,400.", "It was $5,100; now it's $5,400.", 10),  # history said as such
        ("What's the total?", "$5,400.", "It was $5,400; now it's $5,100.", 0),  # the stale value as current
        ("What was it before the rise?", "$42 per m².", "$42, later raised to $55.", 10),
        ("What was it before the rise?", "$42 per m².", "$55 now; it was $42 before.", 10),
        ("How big was it?", "5.0 × 4.0 m, 20 m².", "5 by 4 metres.", 10),  # factors state the product
        ("What's the size now?", "5.2 × 4.0 m (20.8 m²).", "20.8 m².", 0),  # the parenthesis is context
        ("Which car and what deposit?", "RAV4, $500 deposit.", "The RAV4.", 5),  # two parts
        ("Which days?", "Tuesdays and Thursdays.", "Tue and Fri.", 5),
        ("When is it?", "28 May 2026.", "May 28th", 10),
        ("When is it?", "28 May 2026.", "On 1 June.", 0),
        ("What's my time?", "27:40.", "27 minutes 40 seconds", 10),
        ("What's the tariff?", "you never told me the tariff.", "You never told me the tariff.", 10),
        ("What's the tariff?", "you never told me the tariff.", "It's $0.28 per kWh.", 0),
        ("What's the tariff?", "you never told me the tariff.", "Not on record; probably about 0.28.", 0),
        ("What colour is it?", "you never told me the colour.", "Silver.", 0),
    ],
)
def test_rules(question: str, expected: str, reply: str, score: float) -> None:
    assert judge(question, expected, reply).score == score


def test_a_dont_know_for_a_told_fact_scores_0_and_is_flagged_for_attempt_2() -> None:
    verdict = judge("How much food?", "50 g.", "I'm not sure you ever told me that.")
    assert verdict.score == 0 and verdict.dont_know


def test_the_rules_judge_is_fast_on_a_long_hostile_reply() -> None:
    reply = " ".join(f"${i:,} plus {i % 9} × ${i % 997} or maybe" for i in range(1, 3000))
    assert judge("What's the total?", "$5,400.", reply).score == 0


# --- non-answers -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        # an honest "not told", then a question about something else: still not knowing, the right answer
        ("I don't think you told me Kalin's wage. Is it the same as Dani's old rate, 9 EUR?", 10),
        ("You didn't tell me Kalin's wage — Dani's old rate was 9 EUR, though.", 10),
        ("You never mentioned it. Is it lower than the 12 EUR you pay at the depot?", 10),
        # a figure for the thing asked, stated, guessed or offered as a question: invented
        ("I don't think you told me Kalin's wage. Is it 9 EUR?", 0),
        ("I don't think you told me Kalin's wage. Is it something like 9 EUR?", 0),
        ("I don't think you told me Kalin's wage — probably 9 EUR, like Dani's.", 0),
        ("You never told me Kalin's wage. It's 9 EUR, the same as Dani's.", 0),
        ("You never told me — Kalin's is 9 EUR.", 0),
        ("9 EUR, like Dani's.", 0),  # never says it was not told
    ],
)
def test_a_question_back_after_an_honest_not_told(reply: str, score: float) -> None:
    assert judge(*WAGE, reply).score == score


def test_the_prompt_states_the_rule_the_judge_applies() -> None:
    """The example of `system.md` is graded as `system.md` says, and the old contradiction is gone."""
    prompt = " ".join((ROOT / "engine" / "persona" / "system.md").read_text().split())
    example = "I don't think you told me Kalin's wage. Is it the same as Dani's old rate, 9 EUR?"
    assert example in prompt and judge(*WAGE, example).score == 10
    assert '"Is it 9 EUR?"' in prompt and judge(*WAGE, "I don't think you told me. Is it 9 EUR?").score == 0
    assert "even a figure that belongs to something else" not in prompt


@pytest.mark.parametrize(
    ("reply", "score", "dont_know"),
    [
        ("I don't think you told me how much Boss gets now. Is it 50 g?", 0, True),
        ("Is it 50 g now?", 0, True),  # a question back states nothing
        ("It's 50 g, right? That's what the vet said.", 10, False),  # a tag question is a statement
        ("50 g a day. Do you want a reminder for his feeding times?", 10, False),
    ],
)
def test_the_right_figure_only_asked_back_is_not_knowing(reply: str, score: float, dont_know: bool) -> None:
    verdict = judge("How much food a day are we giving Boss?", "50 g.", reply)
    assert (verdict.score, verdict.dont_know) == (score, dont_know)


def test_question_spans_leave_tag_questions_out() -> None:
    text = "It's 50 g, right? Is it 55 g? I'm sure — was it 50?"
    assert [text[a:b].strip() for a, b in question_spans(text)] == ["Is it 55 g?", "was it 50?"]


# --- shown working ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expected", "reply", "score"),
    [
        ("216 EUR.", "72 km × 3 EUR = 216 EUR", 10),
        ("240 EUR.", "80 km at 3 EUR per km, so 240 EUR", 10),
        ("216 EUR.", "216 EUR (72 km × 3 EUR)", 10),
        ("216 EUR.", "72 km × 3 EUR = 216 EUR, plus the 24 EUR toll makes 240 EUR — 216 EUR without it.", 0),
        ("266 EUR.", "72 km × 3 EUR = 216 EUR, plus the 50 EUR toll: 216 + 50 = 266 EUR.", 10),
        ("216 EUR.", "216 EUR. It used to be 80 km × 3 EUR = 240 EUR.", 10),  # history said as such
        # a stale or competing final figure is still refused
        ("216 EUR.", "80 km at 3 EUR per km, so 240 EUR", 0),
        ("216 EUR.", "72 km × 3 EUR = 216 EUR, or 240 EUR if you take the old route.", 0),
        ("216 EUR.", "216 EUR. 80 km × 3 EUR = 240 EUR.", 0),
        ("216 EUR.", "80 km × 3 EUR = 216 EUR", 0),  # the working does not hold: its operands compete
    ],
)
def test_working_with_units(expected: str, reply: str, score: float) -> None:
    assert judge(TRIP, expected, reply).score == score, judge(TRIP, expected, reply).comment


def test_workings_are_found_only_where_the_arithmetic_holds() -> None:
    def shown(text: str) -> list[tuple[list[str], str]]:
        return [
            ([text[f.start : f.end] for f in w.operands], text[w.result.start : w.result.end])
            for w in find_workings(text, find_figures(text))
        ]

    assert shown("80 km at 3 EUR per km, so 240 EUR") == [(["80 km", "3 EUR per km"], "240 EUR")]
    assert shown("$280 each × 2 = $560") == [(["$280 each", "2"], "$560")]
    assert shown("$560 (2 × $280)") == [(["2", "$280"], "$560")]
    assert shown("4.8 m² × $25 = $120, plus $1,350 + $250, so $1,720") == [
        (["4.8 m²", "$25"], "$120"),
        (["$120", "$1,350", "$250"], "$1,720"),
    ]
    assert shown("53.4 / 9 = 5.93 km a run") == [(["53.4", "9"], "5.93 km")]
    assert shown("2 + 3 × 4 = 14") == [(["2", "3", "4"], "14")]  # × before +
    assert shown("80 km × 3 EUR = 216 EUR") == []
    assert shown("between 55 and 50 g") == []


# --- one answer per question -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ("We settled on the pottery wheel, $380.", 10),
        ("In the end we went with the pottery wheel, $380 — the earrings were the other option.", 10),
        ("You were weighing the earrings ($260) and the pottery wheel ($380).", 0),
        ("You hadn't decided yet — the earrings or the pottery wheel.", 0),
        ("The options were the earrings, the pottery wheel and the spa weekend.", 0),
        ("The pottery wheel or the earrings — $380.", 5),  # the item said as one of two
    ],
)
def test_a_list_of_options_is_not_a_decision(reply: str, score: float) -> None:
    question = "What present did we settle on for Lena, and what does it cost?"
    assert judge(question, "the electric pottery wheel, $380.", reply).score == score


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ("53.4 km.", 10),
        ("About 53.4, or 45.4 if you leave out the parkruns.", 0),
        ("53.4 km — 45.4 km without the parkruns.", 0),
        ("53.4 km; it was 48.4 km before the Sunday run.", 10),
    ],
)
def test_a_competing_figure_is_not_a_clean_answer(reply: str, score: float) -> None:
    assert judge("How many kilometres did I run in total?", "53.4 km.", reply).score == score


@pytest.mark.parametrize(
    ("question", "reply", "score"),
    [
        ("When did the campaign go live?", "On the Tuesday.", 10),
        ("Which day did the campaign go live?", "Tuesday — it moved from Monday.", 10),
        ("When did the campaign go live?", "On Monday.", 0),
        ("When did the campaign go live?", "Monday or Tuesday.", 0),
        ("When did the campaign go live?", "On Tuesday, 9 March.", 0),  # the wrong date
        ("How much did the campaign cost on launch day?", "On the Tuesday.", 0),  # not a question of when
    ],
)
def test_a_weekday_names_the_day(question: str, reply: str, score: float) -> None:
    assert judge(question, "Tuesday, 10 March.", reply).score == score
