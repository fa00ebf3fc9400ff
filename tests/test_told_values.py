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
    assert [v.key for v in values] == ["d:08-19", "u:35:km"]


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


def told(fact: str, message: str) -> bool:
    """Whether ``message`` carries every value of ``fact`` that is not a name (as a premise matches them)."""
    keys = message_keys(message)
    values = [v for v in strong_values(fact, frozenset()) if v.kind != "name"]
    assert values, f"no value in {fact!r}"
    return all(keys.intersection(v.keys) for v in values)


EUROS = "The oven costs 5,100 EUR"


@pytest.mark.parametrize(
    "message",
    [
        "It's €5,100 now",
        "5.100 EUR",
        "the oven is 5100 euros",
        "5.1k euros",
        "EUR 5,100",
        "5 100 €",
        "5.100,00 €",
        "five thousand one hundred euros",
        "it went up to 5,100.",
        "EUR5,100",
    ],
)
def test_an_amount_in_euros_is_told_in_any_notation(message: str) -> None:
    assert told(EUROS, message)


@pytest.mark.parametrize(
    "message", ["5,000 EUR", "51 EUR", "510 euros", "5,100 dollars", "$5,100", "the price went up again"]
)
def test_another_amount_or_currency_does_not_tell_euros(message: str) -> None:
    assert not told(EUROS, message)


@pytest.mark.parametrize(
    "message",
    ["55 dollars", "55 bucks", "USD 55", "US$55", "55 USD", "it's 55 per m² now", "fifty-five dollars"],
)
def test_dollars_are_told_as_words_codes_or_bare(message: str) -> None:
    assert told("Wall tile at $55 per m²", message)


@pytest.mark.parametrize("message", ["55 euros", "$65", "5.5 dollars", "€55", "550 bucks"])
def test_dollars_are_not_told_by_another_amount_or_currency(message: str) -> None:
    assert not told("Wall tile at $55 per m²", message)


@pytest.mark.parametrize(
    "fact",
    ["The service costs EUR 380 at Autohaus Keller", "Flights for two cost USD 560", "The rent is CHF 1,900"],
)
def test_a_currency_code_is_never_a_name(fact: str) -> None:
    names = known_names([fact])
    labels = [v.label for v in strong_values(fact, names) if v.kind == "name"]
    assert not {"EUR", "USD", "CHF"} & set(labels) and not {"eur", "usd", "chf"} & names


MON_THU = "Marta cleans on Monday, Tuesday, Wednesday and Thursday mornings"


@pytest.mark.parametrize(
    "message",
    [
        "Marta comes Mon–Thu now",
        "Mon-Thu",
        "Monday through Thursday",
        "from Monday to Thursday",
        "Mondays to Thursdays",
        "Mon, Tue, Wed and Thu",
        "between Monday and Thursday",
        "Monday till Thursday",
        "Tues, Weds, Thurs and Mon",
    ],
)
def test_weekdays_are_told_abbreviated_or_as_a_range(message: str) -> None:
    assert told(MON_THU, message)


@pytest.mark.parametrize(
    "message",
    ["Mon–Wed", "Monday and Thursday", "Tue–Fri", "on weekends", "she moved from Monday to Thursday"],
)
def test_weekdays_missing_a_day_are_not_told(message: str) -> None:
    assert not told(MON_THU, message)


@pytest.mark.parametrize(
    ("fact", "message"),
    [
        ("Lise works on weekday mornings", "Lise works Monday to Friday mornings"),
        ("Lise works on weekday mornings", "Lise works mornings during the week"),
        ("Lise works Monday to Friday", "Lise works on weekdays"),
        ("We open every day except Sunday", "open Mon–Sat"),
        ("We open every day except Sunday", "open daily, closed on Sundays"),
        ("We open Monday to Saturday", "open every day except Sunday"),
        ("Market on Saturdays", "the market is on Sat"),
        ("Market on Saturday and Sunday", "the market runs all weekend"),
    ],
)
def test_weekday_groups_tell_their_days(fact: str, message: str) -> None:
    assert told(fact, message)


@pytest.mark.parametrize(
    ("fact", "message"),
    [
        ("We open every day except Sunday", "open Mon–Fri"),
        ("Market on Saturday", "we sat down at the market"),
        ("Market on Sunday", "a sunny market, the sun was out"),
        ("Yoga on Wednesday", "they wed in May"),
    ],
)
def test_weekday_groups_and_look_alike_words_do_not_tell_other_days(fact: str, message: str) -> None:
    assert not told(fact, message)


@pytest.mark.parametrize(
    ("fact", "message"),
    [
        ("Yoga starts at 18:30", "yoga is at 6:30 pm"),
        ("Yoga starts at 18:30", "6.30pm"),
        ("Yoga starts at 18:30", "18h30"),
        ("Yoga starts at 19:00", "7 pm"),
        ("Yoga starts at 19:00", "7pm sharp"),
        ("Yoga starts at 19:00", "it starts at 7"),
        ("Yoga starts at 19:00", "at 7 o'clock"),
        ("Lunch at 12:00", "at noon"),
        ("The bakery opens at 7:00", "opens at 7 am"),
        ("The bakery opens at 7:00", "07:00"),
    ],
)
def test_times_are_told_on_either_clock(fact: str, message: str) -> None:
    assert told(fact, message)


@pytest.mark.parametrize(
    ("fact", "message"),
    [
        ("Yoga starts at 18:30", "6:30 am"),
        ("Yoga starts at 18:30", "8:30 pm"),
        ("Yoga starts at 19:00", "7 am"),
        ("Yoga starts at 19:00", "it costs 7 euros"),
    ],
)
def test_another_time_is_not_told(fact: str, message: str) -> None:
    assert not told(fact, message)


@pytest.mark.parametrize(
    "message", ["Oct 21st", "October 21", "2026-10-21", "21/10/2026", "the 21st of October", "Wed, 21 Oct"]
)
def test_a_date_is_told_in_any_notation(message: str) -> None:
    assert told("The car goes in on 21 October", message)


@pytest.mark.parametrize("message", ["October 12", "21 November", "the 21st", "2026-10-12"])
def test_another_date_is_not_told(message: str) -> None:
    assert not told("The car goes in on 21 October", message)


@pytest.mark.parametrize(
    ("fact", "message"),
    [
        ("25 m² of wall tile", "25 square metres of tile"),
        ("25 m² of wall tile", "25 sqm"),
        ("25 m² of wall tile", "twenty-five of them"),
        ("Rex eats 250 g a day", "250 grams"),
        ("The trip is 1,200 km", "1200 kilometres"),
        ("The trip is 1,200 km", "1.2k km"),
        ("Six tomato plants", "6 tomato plants"),
        ("A dozen eggs", "12 eggs"),
    ],
)
def test_numbers_with_units_are_told_in_any_notation(fact: str, message: str) -> None:
    assert told(fact, message)


@pytest.mark.parametrize(
    ("fact", "message"),
    [
        ("Vitamin D — 4000 IU a day", "the bike has about 4,000 km on it"),
        ("25 m² of wall tile", "25 km away"),
        ("Rex eats 250 g a day", "250 kg"),
        ("The trip is 1,200 km", "120 km"),
    ],
)
def test_the_same_number_in_another_unit_is_not_told(fact: str, message: str) -> None:
    assert not told(fact, message)


@pytest.mark.parametrize(
    ("fact", "message"),
    [
        ("The ferry costs kr 300", "300 kroner"),
        ("The ferry costs DKK 300", "300 kr"),
        ("Lunch was £20", "20 quid"),
        ("The rent is CHF 1,900", "1900 Swiss francs"),
        ("The rail pass is ¥3,000", "3000 yen"),
    ],
)
def test_a_currency_is_told_by_its_sign_code_or_name(fact: str, message: str) -> None:
    assert told(fact, message)


def test_a_number_in_a_fact_is_its_likeliest_reading_a_message_any() -> None:
    assert not told("The oven costs 5,100 EUR", "5.1 EUR") and not told("Wall tile: $1,375", "13.75 dollars")
    assert told("It weighs 5.100 kg", "5,100 kg") and told("The run was 5,1 km", "5.1 km")
