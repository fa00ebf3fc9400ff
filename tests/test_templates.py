"""Date templates (SPEC §3.2): rendering with calendar arithmetic, and validation problems."""

from __future__ import annotations

from datetime import date

import pytest

from engine.benchmark.templates import add_months, find_template_problems, format_date, render_templates

START = date(2026, 7, 29)


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{TODAY}}", "29 July 2026"),
        ("{{FUTURE:3:weeks}}", "19 August 2026"),
        ("{{FUTURE:3:days}}", "1 August 2026"),
        ("{{PAST:7:days}}", "22 July 2026"),
        ("{{PAST:2:weeks}}", "15 July 2026"),
        ("{{FUTURE:0:days}}", "29 July 2026"),
        ("{{FUTURE:2:months}}", "29 September 2026"),
        ("{{PAST:1:years}}", "29 July 2025"),
        ("{{FUTURE:1:week}}", "5 August 2026"),
    ],
)
def test_render_each_form(template: str, expected: str) -> None:
    assert render_templates(template, START) == expected


def test_render_in_running_text_without_leading_zero() -> None:
    text = "Anna flies in {{FUTURE:3:weeks}}, for a week.\nToday is {{TODAY}}."
    assert (
        render_templates(text, date(2026, 8, 1))
        == "Anna flies in 22 August 2026, for a week.\nToday is 1 August 2026."
    )


@pytest.mark.parametrize(
    ("start", "template", "expected"),
    [
        (date(2026, 1, 31), "{{FUTURE:1:months}}", "28 February 2026"),
        (date(2028, 1, 31), "{{FUTURE:1:months}}", "29 February 2028"),
        (date(2026, 3, 31), "{{PAST:1:months}}", "28 February 2026"),
        (date(2026, 5, 31), "{{FUTURE:1:months}}", "30 June 2026"),
        (date(2026, 12, 31), "{{FUTURE:2:months}}", "28 February 2027"),
        (date(2026, 1, 15), "{{PAST:13:months}}", "15 December 2024"),
        (date(2028, 2, 29), "{{FUTURE:1:years}}", "28 February 2029"),
        (date(2028, 2, 29), "{{PAST:4:years}}", "29 February 2024"),
    ],
)
def test_month_and_year_arithmetic_clamps_the_day(start: date, template: str, expected: str) -> None:
    assert render_templates(template, start) == expected


def test_add_months_and_format() -> None:
    assert add_months(date(2026, 10, 31), 4) == date(2027, 2, 28)
    assert add_months(date(2026, 1, 1), -1) == date(2025, 12, 1)
    assert format_date(date(2026, 3, 5)) == "5 March 2026"


def test_invalid_templates_stay_as_written() -> None:
    assert render_templates("see {{TOMORROW}} and {{FUTURE:2:fortnights}}", START) == (
        "see {{TOMORROW}} and {{FUTURE:2:fortnights}}"
    )


def test_find_template_problems_reports_line_offsets() -> None:
    text = "fine {{TODAY}}\n{{NOW}} and {{FUTURE:x:days}}\n\n{{PAST:2:decades}}\nopen {{FUTURE:1:days"
    problems = find_template_problems(text)
    assert [offset for offset, _ in problems] == [1, 1, 3, 4]
    assert "unknown template {{NOW}}" in problems[0][1]
    assert "unknown template {{FUTURE:x:days}}" in problems[1][1]
    assert "unknown unit 'decades'" in problems[2][1]
    assert "unclosed template" in problems[3][1]


def test_valid_text_has_no_problems() -> None:
    assert find_template_problems("{{TODAY}} {{FUTURE:3:weeks}} {{PAST:1:years}} {{ TODAY }}\nplain") == []
    assert find_template_problems("{{FUTURE:99999:years}}")[0][1].startswith("date out of range")
