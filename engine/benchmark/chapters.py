"""Chapter files (SPEC §3): their phases, the story's clock across them, and their checks.

Chapter format: text before the first ``## `` is an author comment; each ``## Title`` starts a phase whose
body may open with a ```` ```js ```` block, then an optional date line ``2026-03-10, Tue``; lines starting
``HH:MM`` are time anchors; ``❓ <id> [<TYPE>…] <question> Correct answer: <answer>`` lines are checks
(the answer may continue on indented lines below the ``❓`` line).

``ChapterReader`` parses the chapters in order, carrying the phase index and the clock (dates and anchors
must not go back in time, nor before ``start_time``); ``parse_check`` reads one ``❓`` line. Every problem
is reported with its file and 1-based line; reading the folder and ``benchmark.json`` is ``loader.py``.

Scripted-persona directive forms: the offline scripted persona acts on these exact phase lines, so demo
and test benchmarks phrase fact changes this way:

* ``Say …`` / ``Tell …`` / ``Ask …`` — instructions to the persona (``Tell the `garden` sheet.``);
* ``Edit <sheet> <id>: <new text>`` — change a fact (``—`` as the text deletes it);
* ``Add to <sheet> category <n>: <text>`` — add a fact.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, time

from engine.benchmark.model import CHECK_TYPES, TRAP_TYPES, Check, Phase, Problem
from engine.benchmark.templates import find_template_problems

_DATE_LINE = re.compile(r"(\d{4}-\d{2}-\d{2}),\s*([A-Za-z]+)\.?")
_DATE_START = re.compile(r"\d{4}-\d{2}-\d{2}\b")
_ANCHOR = re.compile(r"(\d{1,2}):(\d{2})(?!\d)")
_CHECK = re.compile(r"❓\s*(\S*)\s*(.*)")
_CHECK_ID = re.compile(r"[1-9]\d*\.[1-9]\d*")
_TYPES = re.compile(r"\[([^\]]*)\]\s*")
_ANSWER = re.compile(r"correct answer:", re.IGNORECASE)
_Reporter = Callable[[int, str], None]  # (line, message)
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


@dataclass
class ChapterReader:
    """Parses chapters in order, carrying the phase index and the clock across them."""

    start_time: datetime | None = None
    phases: list[Phase] = field(default_factory=list)
    last_moment: datetime | None = None  # latest date/anchor seen so far
    last_where: str = ""

    def read(self, text: str, chapter: str, file: str) -> list[Problem]:
        problems: list[Problem] = []
        lines = text.splitlines()
        headings = [i for i, line in enumerate(lines) if line.startswith("## ") or line.rstrip() == "##"]
        if not headings:
            problems.append(Problem(file=file, message="chapter has no phases (no '## ' heading)"))
        for n, start in enumerate(headings):
            end = headings[n + 1] if n + 1 < len(headings) else len(lines)
            problems += self._phase(lines, start, end, chapter, file)
        return problems

    def _phase(self, lines: list[str], start: int, end: int, chapter: str, file: str) -> list[Problem]:
        problems: list[Problem] = []

        def problem(line: int, message: str) -> None:
            problems.append(Problem(file=file, line=line, message=message))

        title = lines[start][2:].strip()
        phase = Phase(index=len(self.phases), chapter=chapter, title=title, body="", line=start + 1)
        if not title:
            problem(start + 1, "phase without a title after '## '")
        body = [(i + 1, lines[i]) for i in range(start + 1, end)]
        report_empty = True
        while body and not body[0][1].strip():
            body.pop(0)
        if body and body[0][1].strip().lower() in ("```js", "```javascript"):
            close = next((k for k, (_, t) in enumerate(body) if k > 0 and t.strip() == "```"), None)
            if close is None:
                problem(body[0][0], "unclosed ```js block: add a closing ``` line")
                body, report_empty = [], False  # the block swallowed the phase: nothing more to say
            else:
                phase.js = "\n".join(t for _, t in body[1:close])
                phase.js_line = body[0][0] + 1
                body = body[close + 1 :]
        while body and not body[0][1].strip():
            body.pop(0)
        while body and not body[-1][1].strip():
            body.pop()
        if not body and report_empty:
            problem(start + 1, "phase has no text for the persona")
        phase.body = "\n".join(t for _, t in body)
        problems += [
            Problem(file=file, line=start + 1 + o, message=m) for o, m in find_template_problems(lines[start])
        ]
        problems += [
            Problem(file=file, line=body[o][0], message=m) for o, m in find_template_problems(phase.body)
        ]
        self._scan_body(phase, body, problem)
        self.phases.append(phase)
        return problems

    def _scan_body(self, phase: Phase, body: list[tuple[int, str]], problem: _Reporter) -> None:
        for k, (number, raw) in enumerate(body):
            line = raw.strip()
            if k == 0 and _DATE_START.match(line):
                self._date_line(phase, number, line, problem)
            elif _DATE_LINE.fullmatch(line):
                problem(number, "a date line must be the first line of the phase")
            elif line.startswith("```js") or line.startswith("```javascript"):
                problem(
                    number, "a js block runs only at the start of a phase: move it right under the heading"
                )
            elif line.startswith("❓"):
                continuation = []
                for _, next_raw in body[k + 1 :]:
                    if not next_raw.strip() or next_raw.strip().startswith("❓"):
                        break
                    if not (next_raw[:1].isspace() or _ANSWER.match(next_raw.strip())):
                        break
                    continuation.append(next_raw.strip())
                check = parse_check(" ".join([line, *continuation]), number, problem)
                if check is not None:
                    phase.checks.append(check)
            elif match := _ANCHOR.match(line):
                self._anchor(phase, number, int(match.group(1)), int(match.group(2)), problem)

    def _date_line(self, phase: Phase, number: int, line: str, problem: _Reporter) -> None:
        match = _DATE_LINE.fullmatch(line)
        if match is None:
            problem(number, f"malformed date line {line!r}: write e.g. '2026-03-10, Tue'")
            return
        try:
            day = date.fromisoformat(match.group(1))
        except ValueError:
            problem(number, f"invalid date {match.group(1)!r}")
            return
        written = match.group(2).lower()
        actual = _WEEKDAYS[day.weekday()]
        if not (len(written) >= 3 and actual.startswith(written)):
            problem(number, f"{match.group(1)} is a {actual.capitalize()}, not {match.group(2)!r}")
        phase.date = day
        self._advance(datetime.combine(day, time()), number, phase, problem, "date")

    def _anchor(self, phase: Phase, number: int, hour: int, minute: int, problem: _Reporter) -> None:
        if hour > 23 or minute > 59:
            problem(number, f"invalid time {hour:02d}:{minute:02d}")
            return
        anchor = time(hour, minute)
        in_order = not phase.anchors or anchor >= phase.anchors[-1]
        if not in_order:
            problem(number, f"time anchor {anchor:%H:%M} is earlier than {phase.anchors[-1]:%H:%M} above it")
        phase.anchors.append(anchor)
        if phase.date is not None:
            self._advance(
                datetime.combine(phase.date, anchor), number, phase, problem, "time anchor", in_order
            )

    def _advance(
        self, moment: datetime, number: int, phase: Phase, problem: _Reporter, what: str, report: bool = True
    ) -> None:
        """Move the story's clock to ``moment``, reporting it (once) when it goes back in time."""
        start = self.start_time
        shown = f"{moment:%Y-%m-%d}" if what == "date" else f"{moment:%Y-%m-%d %H:%M}"
        if not report:
            pass
        elif start is not None and what == "date" and moment.date() < start.date():
            problem(number, f"date {shown} is before start_time {start:%Y-%m-%d %H:%M}")
        elif start is not None and what != "date" and moment.date() == start.date() and moment < start:
            problem(number, f"{what} {shown} is before start_time {start:%Y-%m-%d %H:%M}")
        elif self.last_moment is not None and moment < self.last_moment:
            problem(
                number,
                f"{what} {shown} is earlier than {self.last_moment:%Y-%m-%d %H:%M} at {self.last_where}",
            )
        self.last_moment, self.last_where = moment, f"{phase.chapter}:{number}"


def parse_check(line: str, number: int, problem: _Reporter) -> Check | None:
    """A ``❓`` line (continuations joined) as a Check; None, with problems reported, when malformed."""
    match = _CHECK.fullmatch(line)
    check_id, rest = (match.group(1), match.group(2)) if match else ("", "")
    if not _CHECK_ID.fullmatch(check_id):
        problem(
            number,
            f"malformed check id {check_id!r}: write '❓ <chapter>.<n> [TYPE] <question> Correct answer: <answer>'",
        )
        return None
    types: list[str] = []
    while type_match := _TYPES.match(rest):
        for name in (t.strip() for t in type_match.group(1).split(",")):
            if name in CHECK_TYPES:
                types.append(name)
            elif name.upper() in TRAP_TYPES:
                problem(
                    number,
                    f"check {check_id}: {name} is a trap type; check types are {', '.join(CHECK_TYPES)}",
                )
            else:
                problem(
                    number, f"check {check_id}: unknown check type {name!r} (known: {', '.join(CHECK_TYPES)})"
                )
        rest = rest[type_match.end() :]
    parts = _ANSWER.split(rest, maxsplit=1)
    if len(parts) < 2:
        problem(number, f"check {check_id} has no 'Correct answer:'")
        return None
    question, answer = parts[0].strip(), parts[1].strip()
    if not question:
        problem(number, f"check {check_id} has no question")
    if not answer:
        problem(number, f"check {check_id} has an empty correct answer")
    if not question or not answer:
        return None
    return Check(id=check_id, types=types, question=question, answer=answer, line=number)
