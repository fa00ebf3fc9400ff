"""One entry of ``results/report.md`` (SPEC §9) read line by line: ``ReportEntry``, its figures, imperfect
answers and persona faults (their lines: ``engine/report/answers.py``); ``parse_report_entries`` over a whole
text.

Tolerant of wrapped lines. What it returns is safe to print: control characters and escape sequences in a
report written before they were escaped (or edited by hand) are shown escaped (``engine/sanitize.py``).

An entry starts with ``## <date> — <run>: <bench> @ <agent>``; its figures are ``📊`` lines. A line that
starts with neither is a continuation of the previous ``📊`` line (an editor or a pager wrapped it).

Both formats are read: entries written before issue 9 (virtual dates, ``got:`` the persona's summary, no
score line) and today's (wall-clock UTC dates, ``Score:`` headline, ``got:`` the agent's verbatim reply with
``persona:`` the persona's summary, persona faults, provenance lines, ``Incomplete:`` for unfinished runs,
the check types after the check id, an ``Entry:`` id that tells identical entries apart), and those of a run
with a judge (issue 14: the headline says whose grades it counts, a ``Judge:`` line with the agreement, both
grades on each imperfect answer, ``≠`` lines for the disagreements) and of a regrade (its header ends with
`` · regrade by <judge> of the entry of <date>``), and what can be trusted (issue 21: the ``Memory:`` score beside
the headline with an amnesiac's, the ``Context:`` line, the ``Persona reliability:`` counts, a persona fault's
judge grade), since issue 24 the ``Agent context:`` sizes and the ``Supersedes:`` id of the run's entry before,
and since issue 25 the counts of the ``Operator:`` interventions and of the ``Waits over a minute:``.

Figures take one prefix lookup per line; imperfect answers and persona faults are parsed when asked for.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property

from engine.report.answers import (
    ImperfectAnswer,
    PersonaFault,
    is_answer_line,
    parse_disagreement,
    parse_fault,
    parse_imperfect,
)
from engine.report.autopsy_lines import ATTRIBUTION_MARK, parse_attribution, summary_counts
from engine.sanitize import printable

MARK = "📊"

HEADER = re.compile(  # "## <date> — <run>: <bench> @ <agent>"
    r"^##\s+(?P<date>.+?)\s+[—–-]\s+(?P<run>[^:]+):\s*(?P<bench>.+?)\s+@\s+(?P<agent>.+?)\s*$"
)
_JUDGE = re.compile(r"^Judge:\s*(?P<name>.+?)\s*·\s*agreement\s+(?P<agreed>\d+)\s+of\s+(?P<of>\d+)")
_LEAD_SCORE = re.compile(r"\b(?P<lead>persona|judge|both)\s+(?P<score>[\d.]+)/10")
REGRADE = " · regrade by "  # a regrade's header: "… @ <agent> · regrade by <judge> of the entry of <date>"
_LEADS = {"the persona's grades": "persona", "the judge's grades": "judge", "the lower of": "both"}
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
_SUPERSEDES = re.compile(r"^Supersedes:\s*(?P<id>\S+)")
_AGENT_CONTEXT = re.compile(
    r"^Agent context:\s*(?:(?P<before>[\d,]+) tokens before the exam)?[^·]*(?:·\s*peak\s+(?P<peak>[\d,]+))?"
)
_MEMORY = re.compile(
    r"^Memory:\s*(?:(?P<score>[\d.]+)/10)?(?:.*?over\s+(?:\d+\s+of\s+)?(?P<checks>\d+)\s+checks?)?"
    r"(?:.*remembers nothing:\s*(?P<amnesiac>[\d.]+)/10)?"
)
_CONTEXT = re.compile(r"^Context:\s*(?P<text>.+)$")
_OPERATOR = re.compile(r"^Operator:\s*(?:(?P<n>\d+)\s+interventions?\b|none\b)")
_WAITS = re.compile(r"^Waits over a minute:\s*(?:(?P<n>\d+)\b|none\b)")
_AUTOPSY = re.compile(r"^Memory autopsy:")
_PERSONA_RELIABILITY = re.compile(r"^Persona reliability:\s*(?P<text>.+)$")
_COUNT = re.compile(r"^(?P<what>[a-z][a-z -]*?)\s+(?P<n>\d+)(?:\s+\((?P<parts>[^)]*)\))?$")
_PER_TYPE = re.compile(r"(?P<type>[A-Z][A-Z-]*)~?\s+(?P<avg>[\d.]+)\s*\((?P<count>\d+)\)")  # AGG~: inferred
_REAL_DATE = "%Y-%m-%d %H:%M"


@dataclass
class ReportEntry:
    date: str
    run_id: str
    benchmark: str
    agent: str
    lines: list[str] = field(default_factory=list)  # every 📊 line, marker stripped, unwrapped
    position: int = 0  # its place in report.md, 0 for the first written
    entry_id: str = ""  # the ``Entry:`` id: tells identical entries apart ("" in entries written before it)
    supersedes: str = ""  # the ``Supersedes:`` id: the run's entry before this one ("" for none)
    regrade: str = ""  # a regrade's entry: "<judge> of the entry of <date>" (its header's end); "" otherwise
    judge: str = ""  # with a judge: its name (the ``Judge:`` line)
    agreement: tuple[int, int] | None = (
        None  # with a judge: checks with the same pass/fail, of those it graded
    )
    lead: str = ""  # with a judge: whose grades the figures count (persona, judge, both)
    lead_scores: dict[str, float] = field(default_factory=dict)  # with a judge: the score under each lead
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
    memory: float | None = None  # the score over the checks asked after the context was last cleared
    amnesiac: float | None = None  # beside it: the score of an agent that remembers nothing, same checks
    memory_checks: int | None = None  # the checks asked after the context was last cleared (0: never cleared)
    context: str = ""  # the ``Context:`` line: when the agent's context was cleared, or never
    context_before_exam: int | None = None  # the ``Agent context:`` line: tokens before the exam, the peak
    context_peak: int | None = None
    persona_counts: dict[str, int] = field(default_factory=dict)  # "model calls", "refused calls", …
    refused_calls: dict[str, int] = field(default_factory=dict)  # refused persona tool calls by tool
    interventions: int | None = None  # the operator's (the ``Operator:`` line; None: an entry without it)
    long_waits: int | None = None  # waits over a minute and waits for the operator (``Waits over a minute:``)
    memory_autopsy: dict[str, int] | None = None  # imperfect answers per memory-autopsy class (issue 33)

    @property
    def context_cleared(self) -> bool | None:
        """Whether the context was cleared before a graded check (None: an entry without the line)."""
        return None if not self.context else self.context.startswith("cleared")

    def __post_init__(self) -> None:
        agent, regrade, what = self.agent.partition(REGRADE)
        if regrade and not self.regrade:
            self.agent, self.regrade = agent, what

    @property
    def title(self) -> str:
        regrade = f"{REGRADE}{self.regrade}" if self.regrade else ""
        return f"{self.date} — {self.run_id}: {self.benchmark} @ {self.agent}{regrade}"

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
        """The imperfect answers, parsed on first use (most entries of a long report are never opened), each
        with the memory autopsy's line under it."""
        found: list[ImperfectAnswer] = []
        for line in self.lines:
            if line.startswith("[") and (answer := parse_imperfect(line)) is not None:
                found.append(answer)
            elif found and (memory := parse_attribution(line)) is not None:
                found[-1].memory = f"{memory.cls} — {memory.evidence}"
        return found

    @cached_property
    def disagreements(self) -> list[ImperfectAnswer]:
        """With a judge: the answers its verdict and the persona's differ on (``score``: the persona's grade)."""
        return [
            a for line in self.lines if line.startswith("≠") and (a := parse_disagreement(line)) is not None
        ]

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
        """The 📊 lines other than the imperfect answers and persona faults themselves (and the memory autopsy's
        line under an answer)."""
        beside = ATTRIBUTION_MARK  # the memory autopsy's line belongs to the answer above it
        return [line for line in self.lines if not is_answer_line(line) and not line.startswith(beside)]


def _score(entry: ReportEntry, match: re.Match[str]) -> None:
    entry.score = float(match["score"])
    if match["avg"]:
        entry.average = float(match["avg"])
    by = match.string[match.end("score") :].removeprefix("/10 by ")
    entry.lead = next((lead for words, lead in _LEADS.items() if by.startswith(words)), "")


def _judge(entry: ReportEntry, match: re.Match[str]) -> None:
    entry.judge, entry.agreement = match["name"], (int(match["agreed"]), int(match["of"]))
    scores = match.string.partition("scores:")[2].partition(" · ")[0]
    entry.lead_scores = {m["lead"]: float(m["score"]) for m in _LEAD_SCORE.finditer(scores)}


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


def _memory(entry: ReportEntry, match: re.Match[str]) -> None:
    entry.memory = float(match["score"]) if match["score"] else None
    entry.memory_checks = int(match["checks"]) if match["checks"] else 0
    entry.amnesiac = float(match["amnesiac"]) if match["amnesiac"] else None


def _context(entry: ReportEntry, match: re.Match[str]) -> None:
    entry.context = match["text"].strip()


def _persona_reliability(entry: ReportEntry, match: re.Match[str]) -> None:
    """``model calls 412 · refused calls 3 (log_evaluation 2, facts_mark_told 1) · …``"""
    for part in match["text"].split(" · "):
        count = _COUNT.match(part.strip())
        if count is None:
            continue
        entry.persona_counts[count["what"]] = int(count["n"])
        if count["what"] == "refused calls" and count["parts"]:
            for item in count["parts"].split(", "):
                name, _, n = item.rpartition(" ")
                if name and n.isdigit():
                    entry.refused_calls[name] = int(n)


def _coverage(entry: ReportEntry, match: re.Match[str]) -> None:
    entry.coverage = match["value"]


def _run_time(entry: ReportEntry, match: re.Match[str]) -> None:
    entry.run_time = match["value"].strip()


def _entry_id(entry: ReportEntry, match: re.Match[str]) -> None:
    entry.entry_id = match["id"]


def _supersedes(entry: ReportEntry, match: re.Match[str]) -> None:
    entry.supersedes = match["id"]


def _operator(entry: ReportEntry, match: re.Match[str]) -> None:
    entry.interventions = int(match["n"] or 0)


def _waits(entry: ReportEntry, match: re.Match[str]) -> None:
    entry.long_waits = int(match["n"] or 0)


def _agent_context(entry: ReportEntry, match: re.Match[str]) -> None:
    before, peak = match["before"], match["peak"]
    entry.context_before_exam = int(before.replace(",", "")) if before else None
    entry.context_peak = int(peak.replace(",", "")) if peak else None


def _autopsy(entry: ReportEntry, match: re.Match[str]) -> None:
    entry.memory_autopsy = summary_counts(match.string)


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
    "Supersedes": (_SUPERSEDES, _supersedes),
    "Agent context": (_AGENT_CONTEXT, _agent_context),
    "Judge": (_JUDGE, _judge),
    "Memory": (_MEMORY, _memory),
    "Context": (_CONTEXT, _context),
    "Persona reliability": (_PERSONA_RELIABILITY, _persona_reliability),
    "Operator": (_OPERATOR, _operator),
    "Waits over a minute": (_WAITS, _waits),
    "Memory autopsy": (_AUTOPSY, _autopsy),
}


def read_figures(entry: ReportEntry) -> None:
    """Set the entry's figures from its 📊 lines (answers and faults are left for first use)."""
    for line in entry.lines:
        if line.startswith(("[", "⚠", "≠")):  # an answer, a fault, a disagreement: parsed when asked for
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


def clean_line(raw: str) -> str:
    """A line as read: spaces and tabs around it off (only those: a line after a control character, ``\x1c##
    …``, never starts an entry), escaped if an old or hand-edited report left something to escape."""
    line = raw.strip(" \t\r\ufeff")
    return line if line.isprintable() else printable(line, newlines=False)  # printable() escapes no printable


def parse_lines(lines: Iterable[str], *, figures: bool = True) -> list[ReportEntry]:
    """The entries in ``lines`` in order, wrapped lines joined; their figures read unless ``figures`` is off."""
    entries: list[ReportEntry] = []
    current: ReportEntry | None = None
    for raw in lines:  # only a real line break ends a line (not \x1c, \x85 or \u2028)
        line = clean_line(raw)
        if not line:
            continue
        if line.startswith(MARK):
            if current is not None:
                current.lines.append(line[len(MARK) :].strip())
            continue
        header = HEADER.match(line) if line.startswith("#") else None
        if header is not None:
            if current is not None and figures:
                read_figures(current)
            current = ReportEntry(
                header["date"], header["run"].strip(), header["bench"], header["agent"], position=len(entries)
            )
            entries.append(current)
        elif current is None or line.startswith("#"):
            continue
        elif current.lines:
            current.lines[-1] += " " + line
    if current is not None and figures:
        read_figures(current)
    return entries


def parse_report_entries(text: str) -> list[ReportEntry]:
    """Entries in file order (oldest first)."""
    return parse_lines(text.split("\n"))
