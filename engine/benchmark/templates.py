"""Date templates in persona-visible text (SPEC §3.2): ``{{TODAY}}``, ``{{FUTURE:n:unit}}``, ``{{PAST:n:unit}}``.

Dates render as ``19 August 2026`` from the run's start date. Month and year offsets use calendar
arithmetic and clamp the day to the end of the target month (31 January + 1 month = 28/29 February).
"""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta

_TEMPLATE = re.compile(r"\{\{(.*?)\}\}")
_OFFSET = re.compile(r"(FUTURE|PAST):(\d+):([a-z]+)")
_UNITS = {"day": "days", "week": "weeks", "month": "months", "year": "years"}
_MONTHS = ("January February March April May June July August September October November December").split()


def format_date(day: date) -> str:
    """``19 August 2026``: no leading zero, English month name whatever the locale."""
    return f"{day.day} {_MONTHS[day.month - 1]} {day.year}"


def add_months(day: date, months: int) -> date:
    """``day`` moved by ``months`` calendar months (negative goes back), clamping the day of month."""
    month_index = day.year * 12 + day.month - 1 + months
    year, month = divmod(month_index, 12)
    last_day = calendar.monthrange(year, month + 1)[1]
    return date(year, month + 1, min(day.day, last_day))


def _resolve(inner: str, start: date) -> date | str:
    """The date a template body stands for, or a message saying what is wrong with it."""
    body = inner.strip()
    if body == "TODAY":
        return start
    match = _OFFSET.fullmatch(body)
    if match is None:
        return f"unknown template {{{{{inner}}}}} (use {{{{TODAY}}}}, {{{{FUTURE:n:unit}}}} or {{{{PAST:n:unit}}}})"
    direction, amount_text, unit_text = match.groups()
    unit = _UNITS.get(unit_text, unit_text)
    if unit not in _UNITS.values():
        return f"unknown unit {unit_text!r} in {{{{{inner}}}}} (days, weeks, months or years)"
    amount = int(amount_text) * (1 if direction == "FUTURE" else -1)
    try:
        if unit == "days":
            return start + timedelta(days=amount)
        if unit == "weeks":
            return start + timedelta(weeks=amount)
        return add_months(start, amount if unit == "months" else amount * 12)
    except (OverflowError, ValueError):
        return f"date out of range in {{{{{inner}}}}}"


def render_templates(text: str, start: date) -> str:
    """``text`` with every valid template replaced by its date; invalid ones are left as written."""

    def replace(match: re.Match[str]) -> str:
        resolved = _resolve(match.group(1), start)
        return format_date(resolved) if isinstance(resolved, date) else match.group(0)

    return _TEMPLATE.sub(replace, text)


def find_template_problems(text: str) -> list[tuple[int, str]]:
    """Unknown or malformed templates as ``(line offset, message)``; offset 0 is the text's first line."""
    problems: list[tuple[int, str]] = []
    reference = date(2000, 1, 1)
    for offset, line in enumerate(text.splitlines()):
        for match in _TEMPLATE.finditer(line):
            resolved = _resolve(match.group(1), reference)
            if isinstance(resolved, str):
                problems.append((offset, resolved))
        leftover = _TEMPLATE.sub("", line)
        if "{{" in leftover:
            problems.append((offset, "unclosed template: '{{' without '}}'"))
    return problems
