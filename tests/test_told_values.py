"""What a text says, as premise keys: numbers in any usual format, dates as templates expand, names."""

from __future__ import annotations

from datetime import date

import pytest

from engine.grading.told_values import known_names, message_keys, plain_values, stem, strong_values


@pytest.mark.parametrize(
    "text",
    ["5,100 EUR", "5100 euros", "€5,100", "it's 5.1k now", "5.100 EUR", "the price went up to 5,100."],
)
def test_a_number_is_the_same_key_in_any_usual_format(text: str) -> None:
    assert "n:5100" in message_keys(text)


def test_number_words_and_decimals() -> None:
    keys = message_keys("six tomato plants, 4.50 a kilo, a dozen eggs")
    assert {"n:6", "n:4.5", "n:12"} <= keys


@pytest.mark.parametrize(
    "text", ["19 August 2026", "on August 19th", "Aug 19", "2026-08-19", "the 19th of August"]
)
def test_a_date_is_the_same_key_in_any_usual_format(text: str) -> None:
    assert "d:08-19" in message_keys(text)


def test_the_parts_of_a_date_are_not_numbers_of_their_own() -> None:
    values = strong_values("19 August 2026: 35 km", frozenset())
    assert [v.key for v in values] == ["d:08-19", "n:35"]


def test_relative_days_name_the_day_a_message_was_sent() -> None:
    sent = date(2026, 3, 1)
    assert "d:03-01" in message_keys("I weighed in this morning: 68.2 kg", sent)
    assert "d:02-28" in message_keys("Yesterday I ran 5 km", sent)
    assert "d:03-01" not in message_keys("I weighed in this morning")  # no day known: no date


def test_names_are_capitalised_mid_sentence_or_known() -> None:
    names = known_names(["The bakery's accountant is Henrik Moll", "Six Sungold tomato plants"])
    assert {"henrik", "moll", "sungold"} <= names and "the" not in names
    found = [v.label for v in strong_values("Sungold tomato plants, carrots and runner beans.", names)]
    assert found == ["Sungold"]
    assert [v.label for v in strong_values("Birgit Sand.", frozenset())] == ["Sand"]  # first word: unknown
    assert [v.label for v in strong_values("Birgit Sand.", frozenset({"birgit"}))] == ["Birgit", "Sand"]


def test_plain_words_are_matched_on_their_stems() -> None:
    assert stem("wears") == stem("wear") and stem("helmets") == stem("helmet")
    keys = message_keys("I wear a yellow helmet")
    assert all(v.key in keys for v in plain_values("Wears yellow helmets"))
