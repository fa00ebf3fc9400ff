"""``mmb-tui regrade RUN [--judge MODEL]``: a saved run graded again by a judge, without replaying it (issue 14).

The answers are in the run's transcript: the latest ``evaluation_logged`` of each check holds its question, its
correct answer and the agent's verbatim replies, and the judge (``engine/judge/role.py``) grades them as it
would in the run. The run's own files are only read (it may even be playing). The result is a report entry
appended to ``results/report.md`` and printed, its header marked as a regrade of the run's latest entry
(``… @ <agent> · regrade by <judge> of the entry of <date>``); its figures are the run's entry's, led by the
judge's grades (over the planned checks of the benchmark as it is now, persona faults excluded): the score,
the agreement with the persona, every disagreement in full (``engine/report/grades.py`` ``grade_lines``). Persona faults
are graded too: the judge's grade is shown beside the fault and stays out of every figure, as in the run.

A regrade entry carries the run's provenance like the run's own entry: the persona, agent and config lines of
the run's latest entry (else as ``config.jsonc`` makes them now, and the ``Regrade:`` line says so), the
memory score and context line, the persona line and the run's tokens (its last checkpoint), then the judge's.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TextIO

from engine.benchmark.model import Benchmark
from engine.benchmark.named import load_named_benchmark
from engine.config import BuildError, Config
from engine.events import EvaluationLogged, JudgeGraded, RunStarted
from engine.judge.role import judge_evaluation, judge_key
from engine.models.base import ModelError
from engine.models.judges import RULES_JUDGE, Judge, make_judge
from engine.models.usage import UsageMeter
from engine.persona.context import prompt_hash
from engine.report.entries import index_report
from engine.report.parse import REGRADE, ReportEntry
from engine.report.prices import priced_tokens_label, role_prices
from engine.report.provenance import (
    Provenance,
    agent_model_name,
    benchmark_hash,
    config_hash,
    describe_model,
    project_version,
)
from engine.report.trust import fault_count, persona_line, trust_lines, unchecked_premises
from engine.report.writer import REPORT_NAME, append_entry, grade_lines, provenance_lines
from engine.sanitize import printable
from engine.state import RunState, StateError, load_state
from engine.transcript import read_events

CONCURRENCY = 4  # judge calls at once (a model judge); the rules judge does not wait


class RegradeError(Exception):
    """A run that cannot be regraded: one line naming the file, the run or the option."""


@dataclass(frozen=True)
class SavedRun:
    """What a regrade reads of a run: its benchmark, agent, start date, each check's latest grade, and its last
    checkpoint (the persona's record, the agent's compactions, the tokens)."""

    run_id: str
    bench: Benchmark
    agent: str
    start_date: date
    evaluations: dict[str, EvaluationLogged]  # check id -> its latest grade, in transcript order
    state: RunState | None = None  # None: no readable state.json


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
    state = _saved_state(run_dir)
    start = state.start_date if state is not None else _first_start(started)
    return SavedRun(run_id, bench, started.agent, start, evaluations, state)


def _benchmark(config: Config, run_id: str, name: str) -> Benchmark:
    """The run's benchmark as config.jsonc names it (else as its transcript does), for its planned checks."""
    configured = config.runs.get(run_id)
    key = f"runs.{run_id}.benchmark" if configured else f"the benchmark {name!r} of {run_id}'s transcript"
    try:
        return load_named_benchmark(config, configured.benchmark if configured else name, key)
    except BuildError as exc:
        raise RegradeError(str(exc)) from None


def _saved_state(run_dir: Path) -> RunState | None:
    """The run's last checkpoint, None when there is none to read (the transcript alone is regraded)."""
    try:
        return load_state(run_dir / "state.json")
    except StateError:
        return None


def _first_start(started: RunStarted) -> date:
    """Without a state, the date the run's templates were rendered from: its first start's."""
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


def original_entry(report: Path, run_id: str) -> ReportEntry | None:
    """The run's latest entry in ``report`` that is not a regrade (None without one)."""
    entries = [e for e in index_report(report) if e.run_id == run_id and not e.head.regrade]
    return entries[-1].entry if entries else None


def run_provenance(config: Config, saved: SavedRun, original: ReportEntry | None) -> tuple[Provenance, str]:
    """What produced the run's grades, and where the regrade read it: the run's entry's persona, agent and
    config lines, else ``config.jsonc`` as it is now (the agent's model as configured, ``?`` where only the
    adapter knew it). The benchmark's hash and the version are today's (the checks are today's)."""
    bench, run_cfg = saved.bench, config.runs.get(saved.run_id)
    today = Provenance(
        benchmark_hash=benchmark_hash(bench.path),
        version=project_version(),
        prices=role_prices(config, run_cfg),
    )
    if original is not None and original.persona_model:
        read = (original.persona_model, original.prompt_hash, original.agent_model, original.config_hash)
        source = f"the run's entry of {original.date}"
    elif run_cfg is not None:
        persona = run_cfg.persona or config.persona.model
        agent_model = agent_model_name(run_cfg.adapter_options(), None)
        hashed = config_hash(config, saved.run_id, persona, agent_model)
        read = (
            describe_model(config, persona),
            prompt_hash(bench.instructions),
            describe_model(config, agent_model),
            hashed,
        )
        source = "config.jsonc as it is now (no entry of the run)"
    else:
        return today, "unknown (no entry of the run, and it is not in config.jsonc)"
    persona_model, prompt, agent, hashed = read
    made = replace(today, persona=persona_model, prompt_hash=prompt, agent_model=agent, config_hash=hashed)
    return made, source


def format_regrade(
    saved: SavedRun,
    judge_name: str,
    grades: dict[str, JudgeGraded],
    of_entry: str,
    provenance: tuple[Provenance, str] = (Provenance(), ""),
    tokens: str = "",
    now: datetime | None = None,
) -> str:
    """The regrade's report entry: its header marks what it regrades, its figures lead with the judge's grades;
    ``provenance``: the run's and where it was read (``run_provenance``)."""
    stamp = (now or datetime.now(UTC)).astimezone(UTC)
    bench, state, evaluations = saved.bench, saved.state, saved.evaluations
    made, source = provenance
    original = f"the entry of {of_entry}" if of_entry else "the saved run (no entry of it in the report)"
    judged = sum(1 for g in grades.values() if g.score is not None)
    headline, figures = grade_lines(bench, evaluations, grades, "judge", saved.start_date)
    records = (state.persona_record, state.agent_observations) if state is not None else (None, [])
    usage = state.usage if state is not None else {}
    faults = fault_count(bench, evaluations)
    among = f" (persona faults among them {faults}: shown, not counted)" if faults else ""
    lines = [
        f"## {stamp:%Y-%m-%d %H:%M} UTC — {saved.run_id}: {bench.name} @ {saved.agent}{REGRADE}{judge_name}"
        f" of {original}",
        f"📊 Regrade: {judged} of {len(grades)} answers{among} in {saved.run_id}'s transcript graded by"
        f" {judge_name}, without replaying the run; the persona's grades are the run's"
        + (f"; its provenance from {source}" if source else ""),
        "📊 " + headline,
        *("📊 " + line for line in trust_lines(bench, evaluations, grades, "judge", *records)),
        *("📊 " + line for line in figures),
        *("📊 " + line for line in provenance_lines(bench.name, saved.agent, made)),
        "📊 " + persona_line(records[0], usage, faults, unchecked_premises(bench, evaluations)),
    ]
    if usage:
        lines.append("📊 Tokens: " + priced_tokens_label(usage, made.prices))
    if tokens:
        lines.append(f"📊 Judge tokens: {tokens}")
    lines.append(f"📊 Entry: {uuid.uuid4().hex[:12]}")
    return "\n".join(printable(line, newlines=False) for line in lines) + "\n"


async def regrade(config: Config, run_id: str, judge: Judge, meter: UsageMeter | None = None) -> str:
    """Regrade run ``run_id`` with ``judge``, append the entry to the report and return it."""
    saved = read_saved_run(config, run_id)
    planned = {c.id for c in saved.bench.checks()}
    answers = [e for e in saved.evaluations.values() if e.check_id in planned]  # faults too: shown only
    grades = await judge_all(judge, answers)
    used = meter.get("judge") if meter is not None else None
    tokens = (
        f"{used.prompt_tokens}+{used.completion_tokens} in {used.calls} calls" if used and used.calls else ""
    )
    report = config.results_path() / REPORT_NAME
    original = original_entry(report, run_id)
    of_entry = original.date if original is not None else ""
    provenance = run_provenance(config, saved, original)
    entry = format_regrade(saved, judge.name, grades, of_entry, provenance, tokens)
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
