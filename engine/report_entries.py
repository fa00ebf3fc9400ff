"""Reading ``results/report.md`` (SPEC §9) back: for ``mmb-tui report`` and the report browser.

Tolerant of wrapped lines. What it returns is safe to print: control characters and escape sequences in a
report written before they were escaped (or edited by hand) are shown escaped (``engine/sanitize.py``).

An entry starts with ``## <date> — <run>: <bench> @ <agent>``; its figures are ``📊`` lines. A line that
starts with neither is a continuation of the previous ``📊`` line (an editor or a pager wrapped it).

Both formats are read: entries written before issue 9 (virtual dates, ``got:`` the persona's summary, no
score line) and today's (wall-clock UTC dates, ``Score:`` headline, ``got:`` the agent's verbatim reply with
``persona:`` the persona's summary, persona faults, provenance lines, ``Incomplete:`` for unfinished runs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from engine.sanitize import printable

MARK = "📊"

_HEADER = re.compile(
    r"^##\s+(?P<date>.+?)\s+[—–-]\s+(?P<run>[^:]+):\s*(?P<bench>.+?)\s+@\s+(?P<agent>.+?)\s*$"
)
_IMPERFECT = re.compile(
    r"^\[(?P<score>[\d.]+)/10(?:,\s*(?P<note>[^\]]*))?\]\s*\((?P<id>[^)]+)\)\s*(?P<rest>.*)$"
)
_FAULT = re.compile(r"^⚠\s*\((?P<id>[^)]+)\)\s*(?P<rest>.*)$")
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
_LINK = re.compile(r"\s*\[transcript #(\d+)\]\s*$")
_RUN_TIME = re.compile(r"^Run time:\s*(?P<value>.+)$")


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


@dataclass
class PersonaFault:
    """A grade whose premise the persona broke: kept, listed, not counted in the agent's score."""

    check_id: str
    question: str
    graded: str  # "5/10", as written
    fault: str
    transcript_n: int | None = None


@dataclass
class ReportEntry:
    date: str
    run_id: str
    benchmark: str
    agent: str
    lines: list[str] = field(default_factory=list)  # every 📊 line, marker stripped, unwrapped
    imperfect: list[ImperfectAnswer] = field(default_factory=list)
    persona_faults: list[PersonaFault] = field(default_factory=list)
    evaluations: int | None = None
    average: float | None = None  # over the graded checks
    score: float | None = None  # over every planned check (ungraded = 0); None in entries before issue 9
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

    def text(self) -> str:
        """The entry as written in report.md (wrapped lines joined)."""
        return "\n".join([f"## {self.title}", *(f"{MARK} {line}" for line in self.lines)]) + "\n"

    def summary_lines(self) -> list[str]:
        """The 📊 lines other than the imperfect answers and persona faults themselves."""
        return [line for line in self.lines if not _IMPERFECT.match(line) and not _FAULT.match(line)]


def parse_imperfect(line: str) -> ImperfectAnswer | None:
    match = _IMPERFECT.match(line)
    if match is None:
        return None
    rest = match["rest"]
    question, _, after = rest.partition(" | expected: ")
    expected, _, got_part = after.partition(" | got: ")
    link = _LINK.search(got_part)
    if link:
        got_part = got_part[: link.start()]
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
        transcript_n=int(link.group(1)) if link else None,
        persona=persona.strip(),
    )


def parse_fault(line: str) -> PersonaFault | None:
    match = _FAULT.match(line)
    if match is None:
        return None
    rest = match["rest"]
    link = _LINK.search(rest)
    if link:
        rest = rest[: link.start()]
    question, _, after = rest.partition(" | graded: ")
    graded, _, fault = after.partition(" | fault: ")
    return PersonaFault(
        check_id=match["id"].strip(),
        question=question.strip(),
        graded=graded.split(",")[0].strip(),
        fault=fault.strip(),
        transcript_n=int(link.group(1)) if link else None,
    )


def _finish(entry: ReportEntry) -> None:
    for line in entry.lines:
        if (imperfect := parse_imperfect(line)) is not None:
            entry.imperfect.append(imperfect)
        elif (fault := parse_fault(line)) is not None:
            entry.persona_faults.append(fault)
        elif match := _SCORE.match(line):
            entry.score = float(match["score"])
            if match["avg"]:
                entry.average = float(match["avg"])
        elif match := _EVALUATIONS.match(line):
            entry.evaluations = int(match["count"])
            if match["avg"]:
                entry.average = float(match["avg"])
        elif match := _INCOMPLETE.match(line):
            entry.incomplete, entry.incomplete_reason = match["ended"].strip(), match["reason"].strip()
        elif match := _BENCHMARK.match(line):
            entry.benchmark_hash, entry.version = match["hash"], match["version"] or ""
        elif match := _PERSONA.match(line):
            entry.persona_model, entry.prompt_hash = match["model"], match["prompt"]
            if match["config"]:  # before issue 9 the config hash was on the persona line
                entry.config_hash = match["config"]
        elif match := _AGENT.match(line):
            entry.agent_model = match["model"]
        elif match := _CONFIG.match(line):
            entry.config_hash = match["hash"]
        elif (
            line.startswith("Ended:") and not entry.incomplete
        ):  # before issue 9: "Ended: crashed — <reason>"
            ended, _, reason = line.removeprefix("Ended:").partition(" — ")
            entry.incomplete, entry.incomplete_reason = ended.strip(), reason.strip()
        elif match := _COVERAGE.match(line):
            entry.coverage = match["value"]
        elif match := _RUN_TIME.match(line):
            entry.run_time = match["value"].strip()


def parse_report_entries(text: str) -> list[ReportEntry]:
    """Entries in file order (oldest first)."""
    entries: list[ReportEntry] = []
    current: ReportEntry | None = None
    for raw in text.split("\n"):  # only a real line break ends a line (not \x1c, \x85 or \u2028)
        # spaces and tabs only: a line after a control character (\x1c## …) never starts an entry
        line = printable(raw.strip(" \t\r\ufeff"), newlines=False)  # escaped: an old or hand-edited report
        if not line:
            continue
        header = _HEADER.match(line)
        if header is not None:
            if current is not None:
                _finish(current)
            current = ReportEntry(header["date"], header["run"].strip(), header["bench"], header["agent"])
            entries.append(current)
        elif current is None or line.startswith("#"):
            continue
        elif line.startswith(MARK):
            current.lines.append(line[len(MARK) :].strip())
        elif current.lines:
            current.lines[-1] += " " + line
    if current is not None:
        _finish(current)
    return entries


def read_entries(results_dir: Path, run_id: str | None = None) -> list[ReportEntry]:
    """Entries of ``results_dir/report.md`` in file order, optionally of one run."""
    try:
        text = (results_dir / "report.md").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [e for e in parse_report_entries(text) if run_id is None or e.run_id == run_id]


def load_report(path: Path) -> list[ReportEntry]:
    """The entries of ``report.md``, newest first (an absent file has none)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    entries = parse_report_entries(text)
    order = {id(entry): i for i, entry in enumerate(entries)}
    return sorted(entries, key=lambda e: (e.date, order[id(e)]), reverse=True)
