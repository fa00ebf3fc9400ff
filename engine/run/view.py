"""A playing run's read model: the ``RunView`` a front end shows, from the run itself (the scheduler's local
runs, a Ray actor's run)."""

from __future__ import annotations

from engine.api import CheckView, RunView
from engine.benchmark.model import Check
from engine.events import EvaluationLogged
from engine.report.prices import total_cost
from engine.report.tally import current_grades, run_score
from engine.run.loop import Run
from engine.run.phases import gate_problems


def check_views(checks: list[Check], evaluations: dict[str, EvaluationLogged]) -> list[CheckView]:
    """A phase's checks as a front end shows them: graded or not, with the effective score; a run's own view
    and one read from its saved state (the scheduler's) alike."""
    return [
        CheckView(
            check=c,
            graded=c.id in evaluations,
            score=evaluations[c.id].effective if c.id in evaluations else None,
        )
        for c in checks
    ]


def run_view(run: Run, running: bool = True) -> RunView:
    state, bench = run.state, run.bench
    phase = run.current_phase()
    evaluations = list(state.evaluations.values())
    status = state.status if running else ("finished" if state.finished else state.status)
    untold = {name: run.notebook.untold(name) for name in state.loaded_sheets if name in state.sheets}
    return RunView(
        run_id=run.run_id,
        benchmark=bench.name,
        agent=run.adapter.name,
        status=status,
        reason=state.reason,
        phase_index=state.phase_index,
        total_phases=len(bench.phases),
        chapter=phase.chapter,
        phase_title=phase.title,
        phase_text=state.phase_text,
        checks=check_views(phase.checks, state.evaluations),
        untold=untold,  # every loaded sheet, an empty list when all its facts are told
        loaded_sheets=list(state.loaded_sheets),
        facts={name: sheet.live_facts() for name, sheet in state.sheets.items()},
        agent_sessions=run.adapter.supports_new_conversation,
        gates=[] if state.finished else gate_problems(state, bench, run.clock.now()),
        evaluations=len(evaluations),
        average=run_score(
            [c.id for c in bench.checks()],
            state.evaluations,
            current_grades(state.evaluations.values(), state.judge_grades),
            run.judge.lead if run.judge else "persona",
            state.finished,
        ),
        agent_compactions=len(state.agent_observations),
        clock=run.clock.iso() if running else (state.clock_now or run.clock.iso()),  # stops at the end
        clock_jumps=state.clock_jumps,
        virtual_time=bench.time_master,
        activity=run.liveness.activity,  # every wait is left when the run ends: nothing then
        pause_pending=running and run.operator.pause_pending,
        last_event_at=run.liveness.last_event_at,
        cost=total_cost(run.meter.as_dict(), run.provenance.prices),
    )
