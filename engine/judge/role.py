"""The judge in a run (issue 14): a second, independent grade of every answer the persona graded.

The persona grades her own exam, so nothing checks the grader. With ``"judge": {"model": …}`` in config.jsonc
(or a run's ``judge`` key) a judge (``engine/models/judges.py``: the rules judge ``scripted/judge`` or any
model with the persona's grading rules) grades each check right after an accepted ``log_evaluation``, from
the check's question, its correct answer and the agent's verbatim replies — never from the persona's summary
— and the persona is not told. The grade is a ``judge_graded`` event kept in the run's state per check,
journaled on the same line as the persona's grade, so a checkpoint holds both or neither: a kill between
them replays both. An evaluation found without its judge grade (the judge added to the config of a run
already under way), or whose judge gave none, is graded when the run resumes. A judge that fails (a call
that failed after its retries, a reply that could not be read, a bug of its own) gives an event with its
``error``, shown and reported, never a crash. Its tokens are metered under the role ``judge``.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

from engine.commands import CallInterrupted
from engine.config import Config, JudgeLead
from engine.events import EvaluationLogged, Event, JudgeGraded, WaitingFor
from engine.models.base import ChatModel, ModelError
from engine.models.judges import Judge, ModelJudge, make_judge
from engine.models.usage import UsageMeter
from engine.report.tally import current_grades
from engine.state import RunState


class _Waits(Protocol):
    def waiting(self, what: WaitingFor, until: str = "") -> AbstractContextManager[None]: ...


class JudgeRecorder(Protocol):
    """What the judge needs of a run's recorder: its state, what it waits for, and its events."""

    @property
    def state(self) -> RunState: ...

    @property
    def liveness(self) -> _Waits: ...

    def emit(self, event: Event) -> None: ...


REPLIES_JOIN = "\n\n"  # between several verbatim replies to one question, as the judge reads them


def judge_key(config: Config, run_id: str) -> tuple[str, str] | None:
    """The judge of run ``run_id`` and the config key naming it: the run's ``judge`` key, else
    ``judge.model`` (also for a run no longer in the config); None without either."""
    run_cfg = config.runs.get(run_id)
    run_judge = run_cfg.judge if run_cfg is not None else None
    if run_judge:
        return run_judge, f"runs.{run_id}.judge"
    if config.judge is not None:
        return config.judge.model, "judge.model"
    return None


def lead_of(config: Config) -> JudgeLead:
    """Which grade the report's headline counts (``judge.lead``; the persona's without a judge section)."""
    return config.judge.lead if config.judge is not None else "persona"


async def judge_evaluation(judge: Judge, evaluation: EvaluationLogged) -> JudgeGraded:
    """The judge's grade of the answer ``evaluation`` graded, as an event not yet stamped; whatever goes
    wrong in the judge is the event's ``error``."""
    answer = REPLIES_JOIN.join(reply for reply in evaluation.replies if reply.strip())
    try:
        grade = await judge.grade(evaluation.question, evaluation.expected, answer)
    except Exception as exc:  # a judge must never end a run or a regrade: its failure is a result
        return _event(judge, evaluation, None, "", f"{type(exc).__name__}: {exc}")
    return _event(judge, evaluation, grade.score, grade.comment, grade.error or "")


def _event(
    judge: Judge, evaluation: EvaluationLogged, score: float | None, comment: str, error: str
) -> JudgeGraded:
    return JudgeGraded(
        check_id=evaluation.check_id,
        evaluation_n=evaluation.n,
        judge=judge.name,
        score=score,
        comment=comment,
        error=error,
        persona_score=evaluation.score,
    )


class RunJudge:
    """A run's judge: grades the persona's latest grade of a check and records it (``Run`` holds one when
    the config names a judge)."""

    def __init__(self, judge: Judge, lead: JudgeLead = "persona") -> None:
        self.judge = judge
        self.lead = lead
        self.cut: list[str] = []  # checks whose judge call a pause cut short: graded by ``grade_cut``
        self._recorder: JudgeRecorder | None = None

    @property
    def model(self) -> ChatModel | None:
        """The model a model judge calls (the run reports its retries); None for the rules judge."""
        return self.judge.model if isinstance(self.judge, ModelJudge) else None

    def attach(self, recorder: JudgeRecorder) -> RunJudge:
        """Record into ``recorder``."""
        self._recorder = recorder
        return self

    async def grade(self, check_id: str) -> JudgeGraded | None:
        """Grade the check's latest evaluation: a ``judge_graded`` event, kept in the state. A call the operator
        cuts short is made again at once (``AbortCall``), or left in ``cut`` for ``grade_cut`` (a pause: None)."""
        recorder = self._recorder
        assert recorder is not None, "RunJudge.attach first"
        evaluation = recorder.state.evaluations[check_id]
        while True:
            try:
                with recorder.liveness.waiting("judge model"):
                    event = await judge_evaluation(self.judge, evaluation)
                break
            except CallInterrupted as cut:
                if cut.why == "pause":
                    self.cut.append(check_id)
                    return None
        recorder.emit(event)  # stamps its transcript number
        recorder.state.judge_grades[check_id] = event
        return event

    async def grade_cut(self) -> None:
        """Grade the checks whose judge call a pause cut short (the run does it once it plays on)."""
        cut, self.cut = self.cut, []
        for check_id in cut:
            await self.grade(check_id)

    async def grade_pending(self) -> int:
        """Grade every evaluation left without a judge grade of it, or whose judge gave none (a failed call
        may not fail again after a restart); how many were graded (a pause may leave some for later)."""
        assert self._recorder is not None, "RunJudge.attach first"
        state = self._recorder.state
        current = current_grades(state.evaluations.values(), state.judge_grades)
        pending = [c for c in state.evaluations if c not in current or current[c].score is None]
        graded = [await self.grade(check_id) for check_id in pending]
        return sum(1 for event in graded if event is not None)


def make_run_judge(config: Config, run_id: str, meter: UsageMeter) -> RunJudge | None:
    """The judge of run ``run_id`` (None without one); ModelError naming the config key for an unknown model."""
    named = judge_key(config, run_id)
    if named is None:
        return None
    name, key = named
    try:
        return RunJudge(make_judge(name, config, meter), lead_of(config))
    except ModelError as exc:
        raise ModelError(f"{key}: {exc}") from None
