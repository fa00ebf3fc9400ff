"""A hung or failing call cut short by the operator (issue 25 point 3): the scripted models' transport faults
in process, ``AbortCall`` (retry now) and a pause that never waits behind a hung call."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import FORGETFUL, events, fast, kinds, make_config, play, scaled

from engine.commands import AbortCall, Pause, Resume
from engine.config import ConfigError, parse_config
from engine.events import TerminationReason, WaitingFor
from engine.placement.remote import COMMAND
from engine.placement.scheduler import Scheduler
from engine.run.build import build_run
from engine.run.loop import Run
from engine.run.parts import RunSettings
from mmb_tui.view_format import status_text

HUNG_PERSONA = {"benchmark": "full", "agent": FORGETFUL, "persona": "scripted/persona?faults=1:hang"}


async def _until(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    async with asyncio.timeout(scaled(timeout)):
        while not predicate():
            await asyncio.sleep(0.005)


def _waits_for(run: Run, what: WaitingFor) -> Callable[[], bool]:
    return lambda: run.liveness.activity.waiting_for == what


def _scores(run: Run) -> dict[str, float]:
    return {check: evaluation.score for check, evaluation in run.state.evaluations.items()}


async def _baseline(tmp_path: Path, run: dict[str, Any]) -> dict[str, float]:
    (tmp_path / "baseline").mkdir()
    return _scores(await play(make_config(tmp_path / "baseline", {"r": run}), "r"))


def _slow_back_off(settings: RunSettings) -> None:
    fast(settings)
    settings.fault_backoff = 100.0  # "retrying in 100 s": only the operator ends it in a test


async def test_a_pause_during_a_hung_persona_call_pauses_at_once_and_the_turn_is_made_again(
    tmp_path: Path,
) -> None:
    expected = await _baseline(tmp_path, {"benchmark": "full", "agent": FORGETFUL})
    config = make_config(tmp_path, {"r": HUNG_PERSONA})
    run = build_run(config, "r", tune=fast)
    task = asyncio.create_task(run.run())
    await _until(_waits_for(run, "persona model"))  # its first call: it never answers
    async with asyncio.timeout(scaled(2)):  # not behind the hung call
        paused = await run.command(Pause())
        await _until(lambda: run.state.status == "paused", timeout=2)
    assert paused.ok and paused.message == "the persona model call was cut short: made again on resume"
    assert run.liveness.activity.waiting_for == "" and run.state.persona_turns_in_phase == 0
    assert (await run.command(AbortCall())).ok is False  # paused: no call to cut short
    run.command(Resume())
    assert await task is TerminationReason.FINISHED
    assert _scores(run) == expected  # nothing lost, nothing graded twice
    actions = [(e.action, e.detail) for e in kinds(events(config, "r"), "operator")]
    assert actions == [("pause", paused.message), ("resume", "")]
    assert not kinds(events(config, "r"), "error")


async def test_abort_makes_a_hung_persona_call_again_at_once_through_the_engine_api(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": HUNG_PERSONA})
    scheduler = Scheduler(config, tune=fast)
    await scheduler.start("r")
    await _until(lambda: scheduler.view("r").activity.waiting_for == "persona model")
    aborted = await scheduler.command("r", AbortCall())
    assert aborted.ok and aborted.message == "the persona model call was cut short: tried again now"
    async with asyncio.timeout(scaled(20)):
        assert (await scheduler.wait(["r"]))["r"] is TerminationReason.FINISHED
    evts = events(config, "r")
    assert [(e.action, e.detail) for e in kinds(evts, "operator")] == [("abort_call", aborted.message)]
    assert not kinds(evts, "error") and scheduler.view("r").evaluations == 5
    assert not (await scheduler.command("r", AbortCall())).ok  # finished: nothing to cut short


async def test_abort_of_a_hung_agent_reply_starts_the_agent_again_and_the_message_goes_again(
    tmp_path: Path,
) -> None:
    chatbot = {"benchmark": "full", "agent": "chatbot", "model": "scripted/recall"}
    expected = await _baseline(tmp_path, chatbot)
    config = make_config(tmp_path, {"r": {**chatbot, "model": "scripted/recall?faults=2:hang"}})
    run = build_run(config, "r", tune=fast)
    task = asyncio.create_task(run.run())
    second = lambda: len(kinds(events(config, "r"), "message_sent")) == 2  # noqa: E731
    await _until(lambda: second() and _waits_for(run, "agent reply")())  # its reply never comes
    aborted = await run.command(AbortCall())
    assert aborted.message == "the wait for the agent's reply was cut short: tried again now"
    assert await task is TerminationReason.FINISHED
    assert _scores(run) == expected
    sent = [e.text for e in kinds(events(config, "r"), "message_sent")]
    assert sent[1] == sent[2] and sent.count(sent[1]) == 2  # the cut message went again, once
    assert run.adapter.log.messages.count({"role": "user", "content": sent[1]}) == 1  # type: ignore[attr-defined]


async def test_a_pause_while_the_agent_hangs_pauses_at_once_and_resumes_without_loss(tmp_path: Path) -> None:
    chatbot = {"benchmark": "full", "agent": "chatbot", "model": "scripted/recall"}
    expected = await _baseline(tmp_path, chatbot)
    config = make_config(tmp_path, {"r": {**chatbot, "model": "scripted/recall?faults=1:hang"}})
    run = build_run(config, "r", tune=fast)
    task = asyncio.create_task(run.run())
    await _until(_waits_for(run, "agent reply"))
    async with asyncio.timeout(scaled(2)):
        paused = await run.command(Pause())
    assert "the wait for the agent's reply was cut short" in paused.message
    run.command(Resume())
    assert await task is TerminationReason.FINISHED
    assert _scores(run) == expected


async def test_a_hung_judge_call_is_made_again_by_abort_and_after_the_resume_by_a_pause(
    tmp_path: Path,
) -> None:
    judge = {"model": "scripted/recall?faults=1:hang,2:hang"}  # a model judge that hangs twice
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}}, judge=judge)
    run = build_run(config, "r", tune=fast)
    assert run.judge is not None and run.judge.model is not None
    judge_model: Any = run.judge.model.inner  # type: ignore[attr-defined]  # metered: the scripted model in it
    task = asyncio.create_task(run.run())
    await _until(lambda: judge_model.calls == 1 and _waits_for(run, "judge model")())
    graded = set(run.state.evaluations)
    aborted = await run.command(AbortCall())
    assert aborted.message == "the judge model call was cut short: tried again now"
    await _until(lambda: judge_model.calls == 2 and _waits_for(run, "judge model")())
    async with asyncio.timeout(scaled(2)):
        paused = await run.command(Pause())
    assert paused.message == "the judge model call was cut short: made again on resume"
    assert set(run.state.evaluations) == graded and not set(run.state.judge_grades) & graded
    run.command(Resume())
    assert await task is TerminationReason.FINISHED
    assert set(run.state.judge_grades) == set(run.state.evaluations) and len(run.state.evaluations) == 5
    assert judge_model.calls == 2 + len(kinds(events(config, "r"), "judge_graded"))


async def test_a_429_in_process_goes_through_the_retry_path(tmp_path: Path) -> None:
    persona = "scripted/persona?faults=2:429"
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL, "persona": persona}})
    run = await play(config, "r")
    assert run.termination is TerminationReason.FINISHED and len(run.state.evaluations) == 5
    evts = events(config, "r")
    (error,) = kinds(evts, "error")
    assert error.where == "persona model"
    assert error.message.startswith(
        "model 'scripted/persona?faults=2:429': HTTP 429: scripted rate limit (call 2)"
    )
    assert "retrying in 0.01 s" in error.message
    assert [e.status for e in kinds(evts, "status")].count("waiting") == 1


async def test_a_back_off_is_cut_short_by_abort_and_by_a_pause(tmp_path: Path) -> None:
    persona = "scripted/persona?faults=1:500,2:500"
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL, "persona": persona}})
    run = build_run(config, "r", tune=_slow_back_off)
    task = asyncio.create_task(run.run())
    await _until(lambda: run.state.status == "waiting")
    assert "retrying in 100 s" in kinds(events(config, "r"), "error")[-1].message
    aborted = await run.command(AbortCall())
    assert aborted.message == "the back-off was cut short: the next attempt is made now"
    await _until(lambda: len(kinds(events(config, "r"), "error")) == 2)  # call 2 fails: another back-off
    assert "retrying in 200 s" in kinds(events(config, "r"), "error")[-1].message
    async with asyncio.timeout(scaled(2)):
        paused = await run.command(Pause())
    assert paused.message == "the back-off was cut short: made again on resume"
    run.command(Resume())
    async with asyncio.timeout(scaled(20)):
        assert await task is TerminationReason.FINISHED
    assert len(run.state.evaluations) == 5


async def test_a_back_off_is_the_runs_activity_with_its_end_so_views_count_down(tmp_path: Path) -> None:
    """Not only ``retrying in 100 s`` in the transcript: the view says it, with its end (issue 25, point 6)."""
    persona = "scripted/persona?faults=1:500"
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL, "persona": persona}})
    scheduler = Scheduler(config, tune=_slow_back_off)
    await scheduler.start("r")
    try:
        await _until(lambda: scheduler.view("r").activity.waiting_for == "back-off")
        view = scheduler.view("r")
        activity = view.activity
        assert view.status == "waiting" and view.reason.startswith("persona model: ")
        assert activity.since is not None and activity.ends_at == pytest.approx(activity.since + 100)
        status = status_text(view, activity.since + 30.4, width=80).plain
        assert status.startswith("⏳ retrying in 1m09s: persona model: ") and "⚠" not in status
        assert (await scheduler.command("r", AbortCall())).ok
        await _until(lambda: scheduler.view("r").activity.waiting_for != "back-off")
        assert scheduler.view("r").activity.ends_at is None  # the wait's end goes with it
    finally:
        await scheduler.stop_all()


async def test_transport_faults_in_process_fail_as_the_openai_wrapper_reads_them() -> None:
    from engine.models.base import ModelError
    from engine.models.registry import make_scripted

    model = make_scripted("scripted/recall?faults=1:429,2:500,3:bad_json,4:no_choices,5:hang")
    reasons = []
    for _ in range(4):
        with pytest.raises(ModelError) as info:
            await model.complete([{"role": "user", "content": "hi"}])
        reasons.append(str(info.value).split(": ", 1)[1])
    assert reasons == [
        "HTTP 429: scripted rate limit (call 1)",
        "HTTP 500: scripted server error (call 2)",
        "malformed response: the body is not JSON",
        "malformed response: no choices",
    ]
    hung = asyncio.ensure_future(model.complete([{"role": "user", "content": "hi"}]))
    done, _ = await asyncio.wait({hung}, timeout=0.2)
    assert not done  # a hang lasts until the call is cancelled
    hung.cancel()
    answer = await model.complete([{"role": "user", "content": "hi"}])
    assert answer.content and model.calls == 6


def test_a_bad_fault_plan_is_a_config_error_naming_the_model_key() -> None:
    for raw, key in [
        (
            {"models": {"p": {"model": "scripted/persona?faults=3:teapot"}}},
            "models.p.model: bad fault '3:teapot'",
        ),
        ({"persona": {"model": "scripted/persona?faults=0:hang"}}, "persona.model: bad fault '0:hang'"),
        (
            {
                "runs": {
                    "r": {"benchmark": "full", "agent": "chatbot", "persona": "scripted/persona?fault=1:hang"}
                }
            },
            "runs.r.persona: unknown option 'fault'",
        ),
    ]:
        with pytest.raises(ConfigError, match=key):
            parse_config(json.dumps(raw))


def test_abort_travels_to_a_run_played_elsewhere() -> None:
    assert COMMAND.validate_python(AbortCall().model_dump(mode="json")) == AbortCall()
