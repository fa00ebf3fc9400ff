"""The parsed benchmark (SPEC §3). Pure data: loading lives in ``loader.py``, checks in ``validate.py``."""

from __future__ import annotations

from datetime import date, datetime, time
from pathlib import Path

from pydantic import BaseModel, Field

Day = date  # the Phase field named ``date`` shadows the type inside the class body

CHECK_TYPES = ("RECALL", "AGG", "NEG", "VOID", "HIST", "SERIES")
TRAP_TYPES = ("RECONSIDER", "STALE", "SELF-FIX", "XREF", "CASCADE", "LATE-ADD", "RETIRE")
DELETED = "—"  # a fact whose text is an em dash is deleted


class Fact(BaseModel):
    id: str  # "<category>.<n>"
    text: str
    line: int = 0


class Category(BaseModel):
    number: int
    name: str
    facts: list[Fact] = Field(default_factory=list)


class Sheet(BaseModel):
    """A fact file. Runs keep live copies of these in their state; the originals are never modified."""

    name: str  # file name without .md
    title: str
    categories: list[Category] = Field(default_factory=list)

    def live_facts(self) -> list[Fact]:
        return [f for c in self.categories for f in c.facts if f.text.strip() != DELETED]

    def find(self, fact_id: str) -> Fact | None:
        for category in self.categories:
            for fact in category.facts:
                if fact.id == fact_id:
                    return fact
        return None


class Check(BaseModel):
    """``❓ <id> [<TYPE>…] <question> Correct answer: <answer>``"""

    id: str
    types: list[str] = Field(default_factory=list)
    question: str
    answer: str
    line: int = 0


class Phase(BaseModel):
    index: int  # 0-based over the whole benchmark
    chapter: str  # chapter file name
    title: str  # the ``## `` heading
    body: str  # the text after the js block, templates not yet rendered
    line: int  # line of the heading in the chapter file
    js: str | None = None
    js_line: int = 0  # line of the first code line of the js block
    checks: list[Check] = Field(default_factory=list)
    date: Day | None = None  # from a first line like "2026-03-10, Tue"
    anchors: list[time] = Field(default_factory=list)  # HH:MM action lines, in order

    def last_anchor(self) -> datetime | None:
        if self.date is None or not self.anchors:
            return None
        return datetime.combine(self.date, self.anchors[-1])


class Benchmark(BaseModel):
    name: str
    path: Path
    chapters: list[str]
    phases: list[Phase]
    sheets: dict[str, Sheet]  # every fact file by name, "profile" included
    instructions: str = ""
    title: str = ""
    description: str = ""
    time_master: bool = False
    time_gate: bool = False
    start_time: datetime | None = None

    def checks(self) -> list[Check]:
        return [c for p in self.phases for c in p.checks]

    def check(self, check_id: str) -> Check | None:
        return next((c for c in self.checks() if c.id == check_id), None)


class Problem(BaseModel):
    """One validation problem, printed as ``file:line: message``."""

    file: str
    line: int = 0
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}" if self.line else f"{self.file}: {self.message}"


class BenchmarkError(Exception):
    """A benchmark that cannot be loaded; carries every problem found."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(str(p) for p in problems[:3]))
        self.problems = problems
