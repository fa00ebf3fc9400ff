"""Reading ``results/report.md`` (SPEC §9) back: for ``mmb-tui report`` and the report browser.

Tolerant of wrapped lines. What it returns is safe to print: control characters and escape sequences in a
report written before they were escaped (or edited by hand) are shown escaped (``engine/sanitize.py``).

An entry starts with ``## <date> — <run>: <bench> @ <agent>``; its figures are ``📊`` lines. A line that
starts with neither is a continuation of the previous ``📊`` line (an editor or a pager wrapped it).

Both formats are read: entries written before issue 9 (virtual dates, ``got:`` the persona's summary, no
score line) and today's (wall-clock UTC dates, ``Score:`` headline, ``got:`` the agent's verbatim reply with
``persona:`` the persona's summary, persona faults, provenance lines, ``Incomplete:`` for unfinished runs,
the check types after the check id, an ``Entry:`` id that tells identical entries apart).

Fast for thousands of entries (issue 12): the report is cut into entries on its bytes, and an entry exactly
as ``engine/report.py`` writes it is taken as it is (``reprint`` copies it; the rest is parsed line by line);
``index_report`` reads entries up to their headers and parses each on first use (``LazyEntry``); figures take
one prefix lookup per line, imperfect answers and persona faults are parsed when asked for. ``newest_first`` is
the report browser's order (real finish time), ``EntryFilter`` its filter (run, score range, check type).
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Protocol, TypeVar

from engine.sanitize import printable

MARK = "📊"

_HEADER = re.compile(
    r"^##\s+(?P<date>.+?)\s+[—–-]\s+(?P<run>[^:]+):\s*(?P<bench>.+?)\s+@\s+(?P<agent>.+?)\s*$"
)
_IMPERFECT = re.compile(
    r"^\[(?P<score>[\d.]+)/10(?:,\s*(?P<note>[^\]]*))?\]\s*\((?P<id>[^)]+)\)\s*(?P<rest>.*)$"
)
_FAULT = re.compile(r"^⚠\s*\((?P<id>[^)]+)\)\s*(?P<rest>.*)$")
_TYPES = re.compile(r"^((?:\[[A-Z][A-Z-]*\]\s*)+)")  # "[AGG] [NEG] " after the check id
_SCORE = re.compile(r"^Score:\s*(?P<score>[\d.]+)/10(?:.*average over graded\s*(?P<avg>[\d.]+)/10)?")
_INCOMPLETE = re.compile(
    r"^Incomplete:\s*(?P<ended>[\w ]+?)\s+[—–-]\s+(?P<reason>.*?)(?:\s+·\s+phases started\s.*)?$"
)
_BENCHMARK = re.compile(
    r"^Benchmark:\s*.*?·\s*content\s+(?P<hash>\S+)(?:\s*·\s*MarathonMemBench\s+(?P<version>\S+))?"
)
_PERSONA = re.compile(
    r"^Persona:\s*(?P<model>.+?)\s*·\s*prompt\s+(?P<prompt>\S+)(?:\s*·\s*config\s+(?P<config>\S+))?\s*$"
)
_AGENT = re.compile(r"^Agent:\s*.*?·\s*model\s+(?P<model>.+?)\s*$")
_CONFIG = re.compile(r"^Config:\s*(?P<hash>\S+)")
_EVALUATIONS = re.compile(r"^Evaluations:\s*(?P<count>\d+)(?:,\s*average\s*(?P<avg>[\d.]+))?")
_COVERAGE = re.compile(r"^Check coverage:\s*(?P<value>\S+)")
_RUN_TIME = re.compile(r"^Run time:\s*(?P<value>.+)$")
_ENTRY_ID = re.compile(r"^Entry:\s*(?P<id>\S+)")
_PER_TYPE = re.compile(r"(?P<type>[A-Z][A-Z-]*)\s+(?P<avg>[\d.]+)\s*\((?P<count>\d+)\)")
_LINK = "[transcript #"
_HEADER_MAX = 2000  # bytes of a line read to see whether it starts an entry
_REAL_DATE = "%Y-%m-%d %H:%M"


@dataclass
class ImperfectAnswer:
    score: float
    check_id: str
    question: str
    expected: str
    got: str
    comment: str
    attempt: int = 1
    note: str = ""  # "2nd attempt", as written
    transcript_n: int | None = None  # the evaluation's event number in the run's transcript
    persona: str = ""  # the persona's summary of the answer (entries before issue 9 had it in ``got``)
    types: list[str] = field(default_factory=list)  # the check's types (entries before issue 12 have none)


@dataclass
class PersonaFault:
    """A grade whose premise the persona broke: kept, listed, not counted in the agent's score."""

    check_id: str
    question: str
    graded: str  # "5/10", as written
    fault: str
    transcript_n: int | None = None
    types: list[str] = field(default_factory=list)


@dataclass
class ReportEntry:
    date: str
    run_id: str
    benchmark: str
    agent: str
    lines: list[str] = field(default_factory=list)  # every 📊 line, marker stripped, unwrapped
    position: int = 0  # its place in report.md, 0 for the first written
    entry_id: str = ""  # the ``Entry:`` id: tells identical entries apart ("" in entries written before it)
    evaluations: int | None = None
    average: float | None = None  # over the graded checks
    score: float | None = None  # over every planned check (ungraded = 0); None in entries before issue 9
    type_averages: dict[str, float] = field(default_factory=dict)  # "Average per type", by check type
    coverage: str = ""
    run_time: str = ""
    incomplete: str = ""  # how an unfinished run ended ("waiting", "stopped", "crashed"); "" if it finished
    incomplete_reason: str = ""
    benchmark_hash: str = ""
    version: str = ""
    persona_model: str = ""
    prompt_hash: str = ""
    agent_model: str = ""
    config_hash: str = ""

    @property
    def title(self) -> str:
        return f"{self.date} — {self.run_id}: {self.benchmark} @ {self.agent}"

    @property
    def finished_at(self) -> datetime | None:
        """The real (wall-clock, UTC) time the entry was written; None for entries dated in virtual time."""
        if not self.date.endswith("UTC"):
            return None
        try:
            return datetime.strptime(self.date.removesuffix("UTC").strip(), _REAL_DATE).replace(tzinfo=UTC)
        except ValueError:
            return None

    @property
    def headline(self) -> float | None:
        """The score to compare entries by: the score over every planned check, else the average."""
        return self.score if self.score is not None else self.average

    @cached_property
    def imperfect(self) -> list[ImperfectAnswer]:
        """The imperfect answers, parsed on first use (most entries of a long report are never opened)."""
        return [a for line in self.lines if line.startswith("[") and (a := parse_imperfect(line)) is not None]

    @cached_property
    def persona_faults(self) -> list[PersonaFault]:
        return [f for line in self.lines if line.startswith("⚠") and (f := parse_fault(line)) is not None]

    @property
    def check_types(self) -> set[str]:
        """The check types the entry has figures for: its per-type averages and its answers' types."""
        types = set(self.type_averages)
        for answer in self.imperfect:
            types.update(answer.types)
        for fault in self.persona_faults:
            types.update(fault.types)
        return types

    def text(self) -> str:
        """The entry as written in report.md (wrapped lines joined)."""
        return "\n".join([f"## {self.title}", *(f"{MARK} {line}" for line in self.lines)]) + "\n"

    def summary_lines(self) -> list[str]:
        """The 📊 lines other than the imperfect answers and persona faults themselves."""
        return [line for line in self.lines if not _IMPERFECT.match(line) and not _FAULT.match(line)]


def _link(text: str) -> tuple[str, int | None]:
    """``text`` without its trailing ``[transcript #N]``, and N."""
    stripped = text.rstrip()
    if not stripped.endswith("]"):
        return text, None
    head, sep, number = stripped[:-1].rpartition(_LINK)
    if not sep or not number.isdigit():
        return text, None
    return head.rstrip(), int(number)


def _types(rest: str) -> tuple[list[str], str]:
    """The ``[AGG] [NEG]`` check types at the start of ``rest``, and what follows them."""
    match = _TYPES.match(rest)
    if match is None:
        return [], rest
    return re.findall(r"\[([A-Z][A-Z-]*)\]", match.group(1)), rest[match.end() :]


def parse_imperfect(line: str) -> ImperfectAnswer | None:
    match = _IMPERFECT.match(line)
    if match is None:
        return None
    types, rest = _types(match["rest"])
    question, _, after = rest.partition(" | expected: ")
    expected, _, got_part = after.partition(" | got: ")
    got_part, transcript_n = _link(got_part)
    got, has_persona, persona_part = got_part.rpartition(" | persona: ")
    if has_persona:  # the agent's verbatim reply, then the persona's summary and comment
        persona, sep, comment = persona_part.rpartition(" — ")
        if not sep:
            persona, comment = persona_part, ""
    else:  # before issue 9: the persona's summary was the "got"
        persona = ""
        got, sep, comment = got_part.rpartition(" — ")
        if not sep:
            got, comment = got_part, ""
    note = (match["note"] or "").strip()
    return ImperfectAnswer(
        score=float(match["score"]),
        check_id=match["id"].strip(),
        question=question.strip(),
        expected=expected.strip(),
        got=got.strip(),
        comment=comment.strip(),
        attempt=2 if note.startswith("2") else 1,
        note=note,
        transcript_n=transcript_n,
        persona=persona.strip(),
        types=types,
    )


def parse_fault(line: str) -> PersonaFault | None:
    match = _FAULT.match(line)
    if match is None:
        return None
    types, rest = _types(match["rest"])
    rest, transcript_n = _link(rest)
    question, _, after = rest.partition(" | graded: ")
    graded, _, fault = after.partition(" | fault: ")
    return PersonaFault(
        check_id=match["id"].strip(),
        question=question.strip(),
        graded=graded.split(",")[0].strip(),
        fault=fault.strip(),
        transcript_n=transcript_n,
        types=types,
    )


def _score(entry: ReportEntry, match: re.Match[str]) -> None:
    entry.score = float(match["score"])
    if match["avg"]:
        entry.average = float(match["avg"])


def _evaluations(entry: ReportEntry, match: re.Match[str]) -> None:
    entry.evaluations = int(match["count"])
    if match["avg"]:
        entry.average = float(match["avg"])


def _incomplete(entry: ReportEntry, match: re.Match[str]) -> None:
    entry.incomplete, entry.incomplete_reason = match["ended"].strip(), match["reason"].strip()


def _benchmark(entry: ReportEntry, match: re.Match[str]) -> None:
    entry.benchmark_hash, entry.version = match["hash"], match["version"] or ""


def _persona(entry: ReportEntry, match: re.Match[str]) -> None:
    entry.persona_model, entry.prompt_hash = match["model"], match["prompt"]
    if match["config"]:  # before issue 9 the config hash was on the persona line
        entry.config_hash = match["config"]


def _agent(entry: ReportEntry, match: re.Match[str]) -> None:
    entry.agent_model = match["model"]


def _config(entry: ReportEntry, match: re.Match[str]) -> None:
    entry.config_hash = match["hash"]


def _coverage(entry: ReportEntry, match: re.Match[str]) -> None:
    entry.coverage = match["value"]


def _run_time(entry: ReportEntry, match: re.Match[str]) -> None:
    entry.run_time = match["value"].strip()


def _entry_id(entry: ReportEntry, match: re.Match[str]) -> None:
    entry.entry_id = match["id"]


# the figures by the word before a line's first colon: one lookup per line, then that line's pattern
_FIGURES = {
    "Score": (_SCORE, _score),
    "Evaluations": (_EVALUATIONS, _evaluations),
    "Incomplete": (_INCOMPLETE, _incomplete),
    "Benchmark": (_BENCHMARK, _benchmark),
    "Persona": (_PERSONA, _persona),
    "Agent": (_AGENT, _agent),
    "Config": (_CONFIG, _config),
    "Check coverage": (_COVERAGE, _coverage),
    "Run time": (_RUN_TIME, _run_time),
    "Entry": (_ENTRY_ID, _entry_id),
}


def _finish(entry: ReportEntry) -> None:
    for line in entry.lines:
        if line.startswith(("[", "⚠")):  # an answer or a fault: parsed when asked for
            continue
        key = line.partition(":")[0]
        figure = _FIGURES.get(key)
        if figure is not None:
            if match := figure[0].match(line):
                figure[1](entry, match)
        elif key == "Average per type":
            entry.type_averages = {m["type"]: float(m["avg"]) for m in _PER_TYPE.finditer(line)}
        elif key == "Ended" and not entry.incomplete:  # before issue 9: "Ended: crashed — <reason>"
            ended, _, reason = line.removeprefix("Ended:").partition(" — ")
            entry.incomplete, entry.incomplete_reason = ended.strip(), reason.strip()


def _clean(raw: str) -> str:
    """A line as read: spaces and tabs around it off (only those: a line after a control character, ``\x1c##
    …``, never starts an entry), escaped if an old or hand-edited report left something to escape."""
    line = raw.strip(" \t\r\ufeff")
    return line if line.isprintable() else printable(line, newlines=False)  # printable() escapes no printable


def _parse(lines: Iterable[str], *, figures: bool = True) -> list[ReportEntry]:
    entries: list[ReportEntry] = []
    current: ReportEntry | None = None
    for raw in lines:  # only a real line break ends a line (not \x1c, \x85 or \u2028)
        line = _clean(raw)
        if not line:
            continue
        if line.startswith(MARK):
            if current is not None:
                current.lines.append(line[len(MARK) :].strip())
            continue
        header = _HEADER.match(line) if line.startswith("#") else None
        if header is not None:
            if current is not None and figures:
                _finish(current)
            current = ReportEntry(
                header["date"], header["run"].strip(), header["bench"], header["agent"], position=len(entries)
            )
            entries.append(current)
        elif current is None or line.startswith("#"):
            continue
        elif current.lines:
            current.lines[-1] += " " + line
    if current is not None and figures:
        _finish(current)
    return entries


def parse_report_entries(text: str) -> list[ReportEntry]:
    """Entries in file order (oldest first)."""
    return _parse(text.split("\n"))


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Reading makes many small objects and no reference cycles: the cyclic collector would only walk the
    whole heap (an app's worth of objects) over and over; a third of the time for a thousand entries."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class LazyEntry:
    """An entry of report.md known by its header, the rest parsed on first use (``entry``): the browser orders
    a thousand entries by their headers and parses only those it shows."""

    def __init__(self, head: ReportEntry, chunk: bytes = b"", header: re.Match[str] | None = None) -> None:
        self.head = head  # its header's fields and its position (its lines and figures too without a chunk)
        self._chunk, self._header = chunk, header
        if not chunk:
            self.__dict__["entry"] = head

    @property
    def position(self) -> int:
        return self.head.position

    @property
    def run_id(self) -> str:
        return self.head.run_id

    @property
    def title(self) -> str:
        return self.head.title

    @property
    def finished_at(self) -> datetime | None:
        return self.head.finished_at

    @cached_property
    def entry(self) -> ReportEntry:
        text = _as_written(self._chunk, self._header)
        if text is None:  # something to escape, trim or join: line by line (its first line is its header)
            lines = self._chunk.decode("utf-8", errors="replace").split("\n")
            self.head.lines = _parse(lines, figures=False)[0].lines
        else:  # each line but the header is "📊 " and what to keep
            self.head.lines = [line[2:] for line in text.split("\n")[1:]]
        _finish(self.head)
        self._chunk, self._header = b"", None
        return self.head


def index_report(path: Path) -> list[LazyEntry]:
    """The entries of the report at ``path`` in file order, each read up to its header ([] if unreadable)."""
    try:
        data = path.read_bytes()
    except OSError:
        return []
    entries: list[LazyEntry] = []
    with _collector_paused():
        for chunk, header in _chunks(data):
            if header is not None and chunk.startswith(b"## ") and b"##" not in chunk[2:]:  # one entry alone
                head = ReportEntry(header["date"], header["run"].strip(), header["bench"], header["agent"])
                head.position = len(entries)
                entries.append(LazyEntry(head, chunk, header))
                continue
            for entry in _parse(chunk.decode("utf-8", errors="replace").split("\n")):
                entry.position = len(entries)
                entries.append(LazyEntry(entry))
    return entries


def _read(path: Path) -> list[ReportEntry]:
    """The entries of the report at ``path`` in file order ([] if it cannot be read)."""
    with _collector_paused():
        return [lazy.entry for lazy in index_report(path)]


def reprint(path: Path, run_id: str | None = None) -> bytes:
    """What ``mmb-tui report`` prints (UTF-8): the entries of the report at ``path`` in file order, optionally
    of one run, each as ``ReportEntry.text()`` gives it, a blank line between them."""
    try:
        data = path.read_bytes()
    except OSError:
        return b""
    texts: list[bytes] = []
    for chunk, header in _chunks(data):
        if _as_written(chunk, header) is None:
            lines = chunk.decode("utf-8", errors="replace").split("\n")
            texts += [e.text().encode() for e in _parse(lines, figures=False) if run_id in (None, e.run_id)]
        elif header is not None and run_id in (None, header["run"].strip()):
            texts.append(chunk + b"\n")
    return b"\n".join(texts)


# Thousands of entries are read fast (issue 12): the report is cut into entries on the bytes, and an entry
# exactly as engine/report.py writes it (a header, then one 📊 line each, clean UTF-8 with nothing to escape
# or trim) is taken as it is; any other is parsed line by line, which gives the same for the first kind.
# Such an entry holds none of: C0 controls but the line break, DEL, the lead bytes of rare spaces and the BOM
# (U+1680, U+3000, U+FEFF: any U+1xxx, U+3xxx or U+Fxxx character sends an entry to the parser, to be safe);
# C1 controls and the no-break space; Unicode spaces, bidi marks and line separators; a line that is not one
# 📊 line (wrapped, blank, or with space after the mark), a space at the end of a line.
_SUSPECT_BYTES = bytes([*range(0x0A), *range(0x0B, 0x20), 0x7F, 0xE1, 0xE3, 0xEF])
_C1_OR_NBSP = re.compile(rb"\xc2[\x80-\xa0]")
_UNICODE_SPECIAL = re.compile(rb"\xe2(?:\x80[\x80-\x8a\xa8-\xaf]|\x81[\x9f\xa6-\xa9])")
_BAD_LINE_BREAK = re.compile(
    b"\n(?:(?<= \n)|(?!" + MARK.encode() + b" [^ \n]))"
)  # after a space, or not to a 📊 line


def _chunks(data: bytes) -> Iterator[tuple[bytes, re.Match[str] | None]]:
    """``data`` cut before each entry header that starts a line, each piece without its trailing line breaks
    and with its header (the first piece, what comes before the first header, may have none)."""
    first, header = 0, _header_of(data)
    at = data.find(b"\n## ")
    while at >= 0:
        following = _header_of(data[at + 1 : at + 1 + _HEADER_MAX])
        if following is not None:  # "## Notes" starts no entry
            yield data[first:at].rstrip(b"\n"), header
            first, header = at + 1, following
        at = data.find(b"\n## ", at + 1)
    yield data[first:].rstrip(b"\n"), header


def _header_of(data: bytes) -> re.Match[str] | None:
    """The entry header on the first line of ``data``, if it is one."""
    end = data.find(b"\n")
    return _HEADER.match(_clean(data[: end if end >= 0 else len(data)].decode("utf-8", errors="replace")))


def _as_written(chunk: bytes, header: re.Match[str] | None) -> str | None:
    """The text of ``chunk`` (with this ``header``) if it is one entry exactly as ``ReportEntry.text()`` gives
    it, else None."""
    if header is None:
        return None
    head, _, body = chunk.partition(b"\n")
    title = f"## {header['date']} — {header['run'].strip()}: {header['bench']} @ {header['agent']}"
    if (
        title.encode() != head
        or _BAD_LINE_BREAK.search(b"\n" + body) is not None
        or body.endswith(b" ")
        or len(chunk.translate(None, _SUSPECT_BYTES)) != len(chunk)
        or _C1_OR_NBSP.search(chunk) is not None
        or _UNICODE_SPECIAL.search(chunk) is not None
    ):
        return None
    try:
        return chunk.decode()
    except UnicodeDecodeError:
        return None


class _Dated(Protocol):
    @property
    def position(self) -> int: ...

    @property
    def finished_at(self) -> datetime | None: ...


_E = TypeVar("_E", bound=_Dated)


def newest_first(entries: Iterable[_E]) -> list[_E]:
    """By real finish time, the latest first; an entry dated in virtual time (before issue 9) has none and
    keeps its place after the entry written before it; entries of the same minute keep their file order."""
    keyed = []
    latest = datetime.min.replace(tzinfo=UTC)
    for entry in sorted(entries, key=lambda e: e.position):
        at = entry.finished_at
        if at is not None:
            latest = at
        keyed.append(((at or latest), entry.position, entry))
    keyed.sort(key=lambda k: (k[0], k[1]), reverse=True)
    return [entry for _, _, entry in keyed]


def load_report(path: Path) -> list[ReportEntry]:
    """The entries of ``report.md``, newest first by real finish time (an absent file has none)."""
    return newest_first(_read(path))


FILTER_HELP = "run:NAME  score:<7 | >=8 | 5-8  type:AGG  (a bare word is a run; an empty filter shows all)"
_RANGE = re.compile(r"^(?P<op><=|>=|<|>|=)?(?P<a>\d+(?:\.\d+)?)(?:-(?P<b>\d+(?:\.\d+)?))?$")


@dataclass(frozen=True)
class EntryFilter:
    """Which entries the report browser shows: a run (part of its id), a score range, a check type.

    With a check type the score range applies to that type's average, and only the answers of that type are
    listed (``answers_of``)."""

    run: str = ""
    low: float | None = None
    high: float | None = None
    strict_low: bool = False
    strict_high: bool = False
    check_type: str = ""

    @classmethod
    def parse(cls, text: str) -> EntryFilter:
        """``run:openclaw score:<7 type:AGG``; a bare word is a run. ``ValueError`` says what is wrong."""
        run, check_type = "", ""
        low: float | None = None
        high: float | None = None
        strict_low = strict_high = False
        for word in text.split():
            key, sep, value = word.partition(":")
            if not sep:
                key, value = "run", word
            key = key.lower()
            if not value:
                raise ValueError(f"{key}: needs a value ({FILTER_HELP})")
            if key == "run":
                run = value
            elif key == "type":
                check_type = value.upper()
            elif key == "score":
                match = _RANGE.match(value)
                if match is None:
                    raise ValueError(
                        f"score:{value}: not a score or a range (score:<7, score:>=8, score:5-8)"
                    )
                a, b, op = float(match["a"]), match["b"], match["op"] or ""
                if b is not None:
                    low, high, strict_low, strict_high = a, float(b), False, False
                elif op.startswith(">"):
                    low, strict_low = a, op == ">"
                elif op.startswith("<"):
                    high, strict_high = a, op == "<"
                else:
                    low = high = a
                    strict_low = strict_high = False
            else:
                raise ValueError(f"{key}: no such filter ({FILTER_HELP})")
        return cls(run, low, high, strict_low, strict_high, check_type)

    @property
    def active(self) -> bool:
        return self != EntryFilter()

    def describe(self) -> str:
        """The filter as the browser's header shows it ("" when it shows everything)."""
        parts = []
        if self.run:
            parts.append(f"run {self.run}")
        if self.check_type:
            parts.append(f"type {self.check_type}")
        if self.low is not None and self.low == self.high:
            parts.append(f"score {self.low:g}")
        else:
            if self.low is not None:
                parts.append(f"score {'>' if self.strict_low else '≥'}{self.low:g}")
            if self.high is not None:
                parts.append(f"score {'<' if self.strict_high else '≤'}{self.high:g}")
        return ", ".join(parts)

    def score_of(self, entry: ReportEntry) -> float | None:
        """The score the range applies to: the check type's average with a type, else the headline."""
        return entry.type_averages.get(self.check_type) if self.check_type else entry.headline

    def matches(self, entry: ReportEntry) -> bool:
        if self.run and self.run.lower() not in entry.run_id.lower():
            return False
        if self.check_type and self.check_type not in entry.check_types:
            return False
        if self.low is None and self.high is None:
            return True
        score = self.score_of(entry)
        if score is None:
            return False
        if self.low is not None and (score <= self.low if self.strict_low else score < self.low):
            return False
        return self.high is None or (score < self.high if self.strict_high else score <= self.high)

    def answers_of(self, entry: ReportEntry) -> tuple[list[ImperfectAnswer], list[PersonaFault]]:
        """The entry's imperfect answers and persona faults this filter lists."""
        if not self.check_type:
            return entry.imperfect, entry.persona_faults
        return (
            [a for a in entry.imperfect if self.check_type in a.types],
            [f for f in entry.persona_faults if self.check_type in f.types],
        )
