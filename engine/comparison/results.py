"""A run's result as saved (``state.json`` and its journal, read with ``engine/state.py``): what repeats,
``mmb-tui compare`` and the comparison screen average, per run.

The run's score is the report headline's (``engine/report/tally.py`` ``tally``, under the config's
``judge.lead``): over every planned check of its benchmark, an ungraded check counting 0, a persona fault (and,
when the lead needs the judge's grade, a check it lacks) left out. A check is answered right when its counted
score is at least ``PASS_SCORE`` (7/10); one left out is neither right nor wrong.
A run needs no scheduler: a repeat ``X.r<k>`` that is no longer in the config is read with ``X``'s settings.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from engine.benchmark.check_kinds import kinds_of
from engine.benchmark.model import Benchmark
from engine.benchmark.named import load_named_benchmark
from engine.config import BuildError, Config, RunConfig
from engine.events import EvaluationLogged
from engine.expand import repeat_base
from engine.judge.role import lead_of
from engine.models.judges import PASS_SCORE
from engine.report.prices import role_costs, role_prices
from engine.report.tally import Tally, current_grades, tally
from engine.state import StateError, load_state


class ResultError(Exception):
    """A run whose result cannot be read: one line naming the file."""


@dataclass(frozen=True)
class RunResult:
    """One run's planned checks and latest grades as its report counts them, its tokens and their cost."""

    run_id: str
    benchmark: str
    agent: str
    finished: bool
    planned: dict[str, list[str]]  # check id -> its kinds as the report shows them (``AGG~``: inferred)
    grades: dict[str, EvaluationLogged]  # the latest grade of each planned check graded
    counted: Tally  # the grades the report's headline counts (``judge.lead``: persona, judge or both)
    tokens: dict[str, dict[str, int]] = field(default_factory=dict)  # role -> prompt/completion tokens
    costs: dict[str, float] = field(default_factory=dict)  # role -> USD, for the roles with a price

    def _excluded(self, check_id: str) -> bool:
        """A persona fault, or a check the lead needs a judge grade for that it lacks: out of the score."""
        grade = self.grades.get(check_id)
        return (grade is not None and bool(grade.persona_fault)) or check_id in self.counted.unjudged

    @property
    def score(self) -> float:
        """The report headline's score."""
        return self.counted.score

    def type_score(self, check_type: str) -> float | None:
        """The headline's rule over the checks of one type; None when every one is left out."""
        checks = [c for c, types in self.planned.items() if check_type in types]
        t = self.counted
        part = Tally(
            lead=t.lead,
            planned=len(checks),
            scores={c: t.scores[c] for c in checks if c in t.scores},
            faults=sum(1 for c in checks if c in self.grades and self.grades[c].persona_fault),
            unjudged=[c for c in checks if c in t.unjudged],
        )
        return part.score if part.over > 0 else None

    def types(self) -> list[str]:
        return sorted({t for types in self.planned.values() for t in types})

    def passed(self, check_id: str) -> bool | None:
        """Answered right (a counted score of 7/10 or more); None for a check left out of the score."""
        if self._excluded(check_id):
            return None
        return self.counted.scores.get(check_id, 0.0) >= PASS_SCORE

    @property
    def graded(self) -> int:
        return len(self.grades)

    @property
    def faults(self) -> int:
        return self.counted.faults

    def fingerprint(self) -> str:
        """What the run's figures are made of: its counted scores, what is left out, whether it finished; the
        grades only, not where they stand in the transcript (a resume plays events again at new positions)."""
        parts = [self.run_id, str(self.finished), self.counted.lead, *self.counted.unjudged]
        parts += [
            f"{c}:{e.attempt}:{self.counted.scores.get(c)}:{bool(e.persona_fault)}"
            for c, e in sorted(self.grades.items())
        ]
        return hashlib.sha256("|".join(parts).encode()).hexdigest()[:12]


def run_config(config: Config, run_id: str) -> RunConfig | None:
    """A run's settings: its own, or for a repeat ``X.r<k>`` no longer in the config, ``X``'s."""
    found = config.runs.get(run_id)
    base = repeat_base(run_id)
    if found is None and base is not None:
        found = config.runs.get(base)
    return found


def repeats_on_disk(config: Config, name: str) -> list[str]:
    """``name.r1``, ``name.r2``, … as found in the results folder, in order of k."""
    root = config.results_path()
    if not root.is_dir():
        return []
    found = [p.name for p in root.iterdir() if repeat_base(p.name) == name and (p / "state.json").exists()]
    return sorted(found, key=lambda run_id: int(run_id.rsplit(".r", 1)[1]))


def has_result(config: Config, run_id: str) -> bool:
    return (config.results_path() / run_id / "state.json").exists()


def load_result(
    config: Config, run_id: str, benchmarks: dict[Path, Benchmark] | None = None
) -> RunResult | None:
    """The result of ``run_id`` from ``results/<id>/state.json``; None when it has none. ``benchmarks`` caches
    loaded benchmarks by folder across calls."""
    state_path = config.results_path() / run_id / "state.json"
    try:
        state = load_state(state_path)
    except StateError as exc:
        raise ResultError(str(exc)) from None
    if state is None:
        return None
    run_cfg = run_config(config, run_id)
    name = run_cfg.benchmark if run_cfg is not None else state.benchmark
    folder = config.benchmark_path(name)
    cache = benchmarks if benchmarks is not None else {}
    if folder not in cache:
        try:
            cache[folder] = load_named_benchmark(config, name, f"{run_id}: its benchmark {name!r}")
        except BuildError as exc:
            raise ResultError(str(exc)) from None
    planned = {
        c.id: kinds_of(c).shown() for c in cache[folder].checks()
    }  # an untagged check's inferred: AGG~
    tokens = {
        role: {
            "prompt_tokens": int(v.get("prompt_tokens", 0)),
            "cached_tokens": int(v.get("cached_tokens", 0)),
            "completion_tokens": int(v.get("completion_tokens", 0)),
        }
        for role, v in state.usage.items()
        if isinstance(v, dict)
    }
    grades = {c: e for c, e in state.evaluations.items() if c in planned}
    counted = [e for e in grades.values() if not e.persona_fault]
    judged = current_grades(counted, state.judge_grades)
    lead = lead_of(config)
    return RunResult(
        run_id=run_id,
        benchmark=state.benchmark,
        agent=state.agent,
        finished=state.finished,
        planned=planned,
        grades=grades,
        counted=tally(lead, len(planned), counted, len(grades) - len(counted), judged),
        tokens=tokens,
        costs=role_costs(tokens, role_prices(config, run_cfg)),
    )
