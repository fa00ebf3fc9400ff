"""``mmb-tui regrade RUN [--judge MODEL]``: a saved run graded again by a judge, without replaying it (issue 14).

The answers are in the run's transcript: the latest ``evaluation_logged`` of each check holds its question, its
correct answer and the agent's verbatim replies, and the judge (``engine/judge_role.py``) grades them as it
would in the run. The run's own files are only read (it may even be playing). The result is a report entry
appended to ``results/report.md`` and printed, its header marked as a regrade of the run's latest entry
(``… @ <agent> · regrade by <judge> of the entry of <date>``); its figures are the run's entry's, led by the
judge's grades (over the planned checks of the benchmark as it is now, persona faults excluded): the score,
the agreement with the persona, every disagreement in full (``engine/report.py`` ``grade_lines``).
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TextIO

from engine.benchmark.model import Benchmark
from engine.build import BuildError, load_named_benchmark
from engine.config import Config
from engine.events import EvaluationLogged, JudgeGraded, RunStarted
from engine.judge_role import judge_evaluation, judge_key
from engine.models.base import ModelError
from engine.models.judges import RULES_JUDGE, Judge, make_judge
from engine.models.usage import UsageMeter
from engine.provenance import benchmark_hash, project_version
from engine.report import REPORT_NAME, append_entry, grade_lines
from engine.report_entries import index_report
from engine.report_parse import REGRADE
from engine.sanitize import printable
from engine.state import StateError, load_state
from engine.transcript import read_events

CONCURRENCY = 4  # judge calls at once (a model judge); the rules judge does not wait


class RegradeError(Exception):
    """A run that cannot be regraded: one line naming the file, the run or the option."""


@dataclass(frozen=True)
class SavedRun:
    """What a regrade reads of a run: its benchmark, agent, start date and each check's latest grade."""

    run_id: str
    bench: Benchmark
    agent: str
    start_date: date
    evaluations: dict[str, EvaluationLogged]  # check id -> its latest grade, in transcript order


def read_saved_run(config: Config, run_id: str) -> SavedRun:
    """The run ``run_id`` as its folder holds it; ``RegradeError`` when there is nothing to regrade."""
    run_dir = config.results_path() / run_id
    transcript = run_dir / "transcript.jsonl"
    if not run_dir.is_dir():
        have = sorted(p.parent.name for p in config.results_path().glob("*/transcript.jsonl"))
        raise RegradeError(
            f"{run_dir}: no such run folder (runs with a transcript: {', '.join(have) or 'none'})"
        )
    if not transcript.is_file():
        raise RegradeError(f"{transcript}: no transcript (the run never started)")
    evaluations: dict[str, EvaluationLogged] = {}
    started: RunStarted | None = None
    for event in read_events(transcript):
        if isinstance(event, EvaluationLogged):
            evaluations[event.check_id] = event  # a later grade of a check replaces the earlier
        elif isinstance(event, RunStarted):
            started = started or event
    if not evaluations or started is None:
        raise RegradeError(f"{transcript}: no evaluations to regrade (no check was graded)")
    bench = _benchmark(config, run_id, started.benchmark)
    return SavedRun(run_id, bench, started.agent, _start_date(run_dir, started), evaluations)


def _benchmark(config: Config, run_id: str, name: str) -> Benchmark:
    """The run's benchmark as config.jsonc names it (else as its transcript does), for its planned checks."""
    configured = config.runs.get(run_id)
    key = f"runs.{run_id}.benchmark" if configured else f"the benchmark {name!r} of {run_id}'s transcript"
    try:
        return load_named_benchmark(config, configured.benchmark if configured else name, key)
    except BuildError as exc:
        raise RegradeError(str(exc)) from None


def _start_date(run_dir: Path, started: RunStarted) -> date:
    """The date the run's templates were rendered from: its state's, else its first start's."""
    try:
        state = load_state(run_dir / "state.json")
    except StateError:
        state = None
    if state is not None:
        return state.start_date
    return datetime.fromisoformat(started.t).date() if started.t else datetime.now(UTC).date()


async def judge_all(
    judge: Judge, evaluations: list[EvaluationLogged], concurrency: int = CONCURRENCY
) -> dict[str, JudgeGraded]:
    """The judge's grade of each evaluation, by check id (a failure is the grade's ``error``)."""
    gate = asyncio.Semaphore(concurrency)

    async def one(e: EvaluationLogged) -> JudgeGraded:
        async with gate:
            return await judge_evaluation(judge, e)

    grades = await asyncio.gather(*(one(e) for e in evaluations))
    return {grade.check_id: grade for grade in grades}


def original_date(report: Path, run_id: str) -> str:
    """The date of the run's latest entry in ``report`` that is not a regrade ("" without one)."""
    dates = [e.head.date for e in index_report(report) if e.run_id == run_id and not e.head.regrade]
    return dates[-1] if dates else ""


def format_regrade(
    saved: SavedRun,
    judge_name: str,
    grades: dict[str, JudgeGraded],
    of_entry: str,
    tokens: str = "",
    now: datetime | None = None,
) -> str:
    """The regrade's report entry: its header marks what it regrades, its figures lead with the judge's grades."""
    stamp = (now or datetime.now(UTC)).astimezone(UTC)
    bench = saved.bench
    original = f"the entry of {of_entry}" if of_entry else "the saved run (no entry of it in the report)"
    judged = sum(1 for g in grades.values() if g.score is not None)
    headline, figures = grade_lines(bench, saved.evaluations, grades, "judge", saved.start_date)
    lines = [
        f"## {stamp:%Y-%m-%d %H:%M} UTC — {saved.run_id}: {bench.name} @ {saved.agent}{REGRADE}{judge_name}"
        f" of {original}",
        f"📊 Regrade: {judged} of {len(grades)} answers in {saved.run_id}'s transcript graded by {judge_name},"
        " without replaying the run; the persona's grades are the run's",
        "📊 " + headline,
        *("📊 " + line for line in figures),
        f"📊 Benchmark: {bench.name} · content {benchmark_hash(bench.path)} · MarathonMemBench {project_version()}",
    ]
    if tokens:
        lines.append(f"📊 Judge tokens: {tokens}")
    lines.append(f"📊 Entry: {uuid.uuid4().hex[:12]}")
    return "\n".join(printable(line, newlines=False) for line in lines) + "\n"


async def regrade(config: Config, run_id: str, judge: Judge, meter: UsageMeter | None = None) -> str:
    """Regrade run ``run_id`` with ``judge``, append the entry to the report and return it."""
    saved = read_saved_run(config, run_id)
    planned = {c.id for c in saved.bench.checks()}
    answers = [e for e in saved.evaluations.values() if e.check_id in planned and not e.persona_fault]
    grades = await judge_all(judge, answers)
    used = meter.get("judge") if meter is not None else None
    tokens = (
        f"{used.prompt_tokens}+{used.completion_tokens} in {used.calls} calls" if used and used.calls else ""
    )
    report = config.results_path() / REPORT_NAME
    entry = format_regrade(saved, judge.name, grades, original_date(report, run_id), tokens)
    append_entry(report, entry)
    return entry


def regrade_judge(config: Config, run_id: str, name: str | None, meter: UsageMeter) -> Judge:
    """``--judge MODEL``, else the run's judge in config.jsonc, else the rules judge; ``RegradeError`` naming
    the option or key for an unknown model."""
    named = (name, "--judge") if name else judge_key(config, run_id)
    judge_name, where = named or (RULES_JUDGE, "judge")
    try:
        return make_judge(judge_name, config, meter)
    except ModelError as exc:
        raise RegradeError(f"{where}: {exc}") from None


def main_regrade(
    config: Config, run_id: str, judge: str | None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """``mmb-tui regrade RUN [--judge MODEL]``: 0 with the entry printed and appended, 2 for bad input."""
    out, err = out or sys.stdout, err or sys.stderr
    meter = UsageMeter()
    try:
        entry = asyncio.run(regrade(config, run_id, regrade_judge(config, run_id, judge, meter), meter))
    except RegradeError as exc:
        print(f"regrade: {exc}", file=err)
        return 2
    print(entry, end="", file=out)
    print(f"appended to {config.results_path() / REPORT_NAME}", file=err)
    return 0
