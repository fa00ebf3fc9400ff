"""Scores you can trust: the grading contract, trap-write gates, persona faults, the stuck persona.

Each test drives the persona's tools the way a slipping language model would (on ``tests/benchmarks/full``:
phase 1 tells the pets sheet, phase 2 edits Rex's food 300 g → 250 g, deletes 2.2, adds a fact and asks
1.1; phase 3 is the exam 2.1-2.4 after a new session) and asserts the slip is refused with an error the
model can act on, or recorded visibly, never accepted silently.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import FORGETFUL, ROOT, events, fast, kinds, make_config, play

from engine.config import Config
from engine.events import TerminationReason
from engine.models.base import ChatModel, Completion, Message, ToolSchema
from engine.persona import hooks
from engine.persona.context import recent_replies
from engine.persona.notebook import ToolError
from engine.persona.tools import dispatch
from engine.run.agent_channel import REPLY_PREFIX
from engine.run.build import build_run
from engine.run.loop import Run
from engine.transcript import read_events

REX_FOOD = "Rex eats 250 g of dry food a day (the vet's advice)"


async def started(tmp_path: Path, **extra: Any) -> Run:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}}, **extra)
    run = build_run(config, "r", tune=fast)
    await run._initialise()
    return run


async def call(run: Run, name: str, **args: Any) -> str:
    return await dispatch(run, name, args)


async def refused(run: Run, name: str, **args: Any) -> str:
    with pytest.raises(ToolError) as info:
        await dispatch(run, name, args)
    return str(info.value)


async def tell_pets(run: Run) -> None:
    await call(run, "facts_read", sheet="pets")
    await call(
        run,
        "send_message",
        text="Rex is a five-year-old collie who eats 300 g of dry food a day; his vet is "
        "Dr Hughes on Albany Road. Four goldfish live in a 60-litre tank; its filter was replaced in May.",
    )
    await call(run, "facts_mark_told", sheet="pets", ids=["1.1", "1.2", "1.3", "2.1", "2.2"])
    await call(run, "next_phase")  # → phase 2 "Changes"


def transcript(run: Run) -> list[Any]:
    return list(read_events(run.run_dir / "transcript.jsonl"))


async def finish(run: Run) -> None:
    await run.recorder.writer.flush()
    run.recorder.transcript.close()


async def test_a_check_of_a_later_phase_is_refused_with_this_phases_checks(tmp_path: Path) -> None:
    run = await started(tmp_path)
    error = await refused(
        run, "log_evaluation", check_id="2.1", score=10, attempt=1, answer="250 g", comment=""
    )
    assert "not part of the current phase" in error and "this phase has no checks" in error
    assert not run.state.evaluations
    await finish(run)


async def test_every_argument_problem_is_reported_in_one_error(tmp_path: Path) -> None:
    run = await started(tmp_path)
    await tell_pets(run)
    error = await refused(run, "log_evaluation", check_id="1.1", score=11, attempt=3, answer="", comment="")
    assert "between 0 and 10" in error and "attempt must be 1 or 2" in error and "not asked" in error
    await finish(run)


async def test_grading_before_asking_then_attempt_two_first_then_a_regrade(tmp_path: Path) -> None:
    run = await started(tmp_path)
    await tell_pets(run)
    error = await refused(run, "log_evaluation", check_id="1.1", score=10, attempt=1, answer="x", comment="")
    assert "not asked" in error and "send its question" in error
    await call(run, "send_message", text="Who is Rex's vet again?")
    error = await refused(run, "log_evaluation", check_id="1.1", score=10, attempt=2, answer="x", comment="")
    assert "needs an attempt 1 first" in error
    await call(run, "log_evaluation", check_id="1.1", score=0, attempt=1, answer="no idea", comment="")
    error = await refused(run, "log_evaluation", check_id="1.1", score=10, attempt=2, answer="x", comment="")
    assert "needs a further message" in error
    await call(run, "send_message", text="Please search your memory: who is Rex's vet?")
    result = await call(
        run, "log_evaluation", check_id="1.1", score=10, attempt=2, answer="Dr Hughes", comment=""
    )
    assert "replaces the earlier grade 0/10, attempt 1" in result
    logged = kinds(transcript(run), "evaluation_logged")
    assert [(e.attempt, e.score) for e in logged] == [(1, 0), (2, 10)]  # both stay in the transcript
    assert logged[1].replaces.startswith("0/10, attempt 1")
    assert run.state.evaluations["1.1"].effective == 5
    await finish(run)


async def test_the_agents_verbatim_reply_is_kept_with_the_grade(tmp_path: Path) -> None:
    run = await started(tmp_path)
    await tell_pets(run)
    reply = await call(run, "send_message", text="Who is Rex's vet?")
    await call(run, "log_evaluation", check_id="1.1", score=10, attempt=1, answer="Dr Hughes", comment="ok")
    record = run.state.evaluations["1.1"]
    assert record.replies and record.replies[-1] in reply
    assert record.answer == "Dr Hughes"  # the persona's summary stays beside it
    await finish(run)


async def test_an_edit_told_without_facts_edit_keeps_the_phase_open(tmp_path: Path) -> None:
    run = await started(tmp_path)
    await tell_pets(run)
    await call(run, "send_message", text="The vet says Rex should eat 250 g a day now.")
    error = await refused(run, "next_phase")
    assert "`pets` 1.2 does not hold the directed text" in error and f"«{REX_FOOD}»" in error
    assert "must be deleted" in error and "category 2 lacks the fact to add" in error
    await finish(run)


async def test_an_edit_marked_told_without_telling_it_is_refused(tmp_path: Path) -> None:
    run = await started(tmp_path)
    await tell_pets(run)
    result = await call(run, "facts_edit", sheet="pets", id="1.2", text=REX_FOOD)
    assert "UNTOLD" in result and "send_message" in result
    error = await refused(run, "facts_mark_told", sheet="pets", ids=["1.2"])
    assert (
        "no message to the assistant since the last change carried pets 1.2" in error
        and "nothing was marked" in error
    )
    assert "1.2" not in run.state.told["pets"]
    error = await refused(run, "next_phase")
    assert "`pets` 1.2 was changed but not told" in error
    await finish(run)


async def test_a_phase_with_checks_gates_next_phase_by_default(tmp_path: Path) -> None:
    run = await started(tmp_path)
    await tell_pets(run)
    error = await refused(run, "next_phase")
    assert "ungraded checks: 1.1" in error  # phase 2 has no require_all_checks: checks gate by default
    await finish(run)


async def test_a_skipped_trap_write_makes_a_persona_fault_not_an_agent_score(tmp_path: Path) -> None:
    run = await started(tmp_path)
    await tell_pets(run)
    await run.tool_next_phase(force=True)  # the operator forces past the edits: Rex's food stays 300 g
    await call(run, "send_message", text="How much dry food does Rex eat a day now?")
    result = await call(
        run, "log_evaluation", check_id="2.1", score=0, attempt=1, answer="300 g", comment="stale"
    )
    assert "set aside" in result and "250" not in result  # the evidence is for the report, not the persona
    fault = run.state.evaluations["2.1"].persona_fault
    assert "pets 1.2 holds 'Rex eats 300 g of dry food a day'" in fault and REX_FOOD in fault
    assert kinds(transcript(run), "evaluation_logged")[-1].persona_fault == fault
    await finish(run)


async def test_after_a_session_switch_the_persona_is_told(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    await play(config, "r")
    exam = [e for e in kinds(events(config, "r"), "phase_started") if e.title == "The exam"][0]
    assert "started a new conversation" in exam.text and "long-term memory" in exam.text
    (tmp_path / "i").mkdir()
    ignored = make_config(
        tmp_path / "i", {"r": {"benchmark": "full", "agent": FORGETFUL, "ignore_session_break": True}}
    )
    await play(ignored, "r")
    exam = [e for e in kinds(events(ignored, "r"), "phase_started") if e.title == "The exam"][0]
    assert "new conversation" not in exam.text


def test_the_compaction_note_claims_nothing_about_the_assistant() -> None:
    from engine.persona.context import compact

    messages = [
        {"role": "user", "content": "x" * 400},
        {"role": "assistant", "content": "y" * 400},
        {"role": "user", "content": "z" * 40},
    ]
    result = compact(
        "system", messages, [0, 2], max_tokens=100, trim_to_tokens=50, reinjected=lambda: "profile"
    )
    assert result is not None
    note = str(result.messages[0]["content"])
    assert "still has it" not in note and "assistant" not in note.lower()


class Recording:
    """The persona model of a run, with the context of each of its calls and what it answered."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner, self.name = inner, inner.name
        self.calls: list[tuple[list[Message], Completion]] = []

    async def complete(self, messages: list[Message], tools: list[ToolSchema] | None = None) -> Completion:
        seen = copy.deepcopy(messages)
        completion = await self.inner.complete(messages, tools)
        self.calls.append((seen, completion))
        return completion


def echoed(completion: Completion, context: list[Message]) -> bool:
    return hooks.refuse(completion, recent_replies(context, REPLY_PREFIX), True, True) is not None


async def recorded_play(config: Config) -> tuple[Run, Recording]:
    run = build_run(config, "r", tune=fast)
    recording = run.persona_model = Recording(run.persona_model)
    await run.run()
    return run, recording


@pytest.mark.parametrize("persona", ["scripted/persona?faults=4:echo", "scripted/persona?slips=echo"])
async def test_an_echo_is_never_delivered_and_its_cycle_is_dropped(tmp_path: Path, persona: str) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL, "persona": persona}})
    run, recording = await recorded_play(config)
    assert run.termination is TerminationReason.FINISHED
    evts = events(config, "r")
    fired = kinds(evts, "hook_fired")
    assert fired and all(e.hook == "echo_guard" for e in fired)  # the transcript shows the hook
    trips = [i for i, (context, done) in enumerate(recording.calls) if echoed(done, context)]
    assert len(trips) == len(fired)
    for i in trips:  # the next call sees the context the echo was written at, nothing added
        assert recording.calls[i + 1][0] == recording.calls[i][0]
    assert not any("echo guard" in str(m.get("content")) for m in run.state.persona_messages)
    assert not any(e.text.startswith("Assistant:") for e in kinds(evts, "message_sent"))
    assert run.adapter.received == len(kinds(evts, "message_sent"))  # type: ignore[attr-defined]


async def test_a_persona_that_keeps_slipping_stops_as_stuck(tmp_path: Path) -> None:
    persona = "scripted/persona?faults=" + ",".join(f"{n}:echo" for n in range(3, 12))
    config = make_config(
        tmp_path,
        {"r": {"benchmark": "full", "agent": FORGETFUL, "persona": persona}},
        persona={"model": "scripted/persona", "stuck_after": 3},
    )
    run = await play(config, "r")
    assert run.termination is TerminationReason.WAITING
    assert run.state.status == "waiting" and run.state.reason.startswith("persona stuck (3 turns in a row")
    assert "echo" in run.state.reason
    assert len(kinds(events(config, "r"), "hook_fired")) == 3


async def test_an_echo_repeated_forever_stops_as_stuck_with_the_context_as_it_was(tmp_path: Path) -> None:
    persona = "scripted/persona?faults=" + ",".join(f"{n}:echo" for n in range(5, 400))
    config = make_config(
        tmp_path,
        {"r": {"benchmark": "full", "agent": FORGETFUL, "persona": persona}},
        persona={"model": "scripted/persona", "stuck_after": 4},
    )
    run, recording = await recorded_play(config)
    assert run.termination is TerminationReason.WAITING
    assert run.state.reason.startswith("persona stuck (4 turns in a row without a valid tool call: echo")
    contexts = [context for context, _ in recording.calls[4:]]
    assert len(contexts) == 4 and all(c == contexts[0] for c in contexts)  # the same context, four times
    assert run.state.persona_messages == contexts[0][1:]  # saved as it was (the system prompt aside)
    assert len(kinds(events(config, "r"), "hook_fired")) == 4


async def test_date_templates_are_rendered_once_into_the_live_sheets(tmp_path: Path) -> None:
    config = make_config(
        tmp_path, {"m": {"benchmark": "max", "agent": "chatbot"}}, benchmarks=ROOT / "benchmarks"
    )
    run = build_run(config, "m", tune=fast)
    assert any(
        "{{" in f.text for s in run.state.sheets.values() for f in s.live_facts()
    )  # raw in the benchmark
    await run._initialise()
    texts = [f.text for s in run.state.sheets.values() for f in s.live_facts()]
    assert not any("{{" in t for t in texts)  # frozen at the run's start: a resume tells the same dates
    assert any(str(run.state.start_date.year) in t for t in texts)
    await finish(run)


def test_the_persona_prompt_says_how_to_grade_non_answers() -> None:
    from engine.persona.context import system_prompt_template

    prompt = " ".join(system_prompt_template().split())
    assert "counts as not knowing" in prompt and "a quote of something else you said" in prompt
    assert "Implied is not stated" in prompt
    assert "any figure or detail it gives for it is invented and scores 0" in prompt
    assert "attempt 2 only after attempt 1" in prompt


async def test_attempt_two_is_final_for_its_check(tmp_path: Path) -> None:
    run = await started(tmp_path)
    await tell_pets(run)
    await call(run, "send_message", text="Who is Rex's vet again?")
    await call(run, "log_evaluation", check_id="1.1", score=0, attempt=1, answer="no idea", comment="")
    await call(run, "send_message", text="Please search your memory: who is Rex's vet?")
    await call(run, "log_evaluation", check_id="1.1", score=10, attempt=2, answer="Dr Hughes", comment="")
    await call(run, "send_message", text="Thanks! And who is Rex's vet, once more?")
    error = await refused(run, "log_evaluation", check_id="1.1", score=10, attempt=1, answer="x", comment="")
    assert "already has its final grade (attempt 2" in error
    assert run.state.evaluations["1.1"].effective == 5  # the ×0.5 stays
    await finish(run)


async def test_a_grade_after_a_message_asking_several_checks_is_refused(tmp_path: Path) -> None:
    run = await started(tmp_path)
    await tell_pets(run)
    await run.tool_next_phase(force=True)  # the exam: 2.1-2.4
    await call(
        run, "send_message", text="How much dry food does Rex eat a day now? And how big is the fish tank?"
    )
    error = await refused(
        run, "log_evaluation", check_id="2.1", score=10, attempt=1, answer="250 g", comment=""
    )
    assert "asked several checks at once (2.1, 2.4)" in error and "one question per message" in error
    await call(run, "send_message", text="How big is the fish tank?")  # one question: graded
    await call(run, "log_evaluation", check_id="2.4", score=10, attempt=1, answer="60 litres", comment="")
    await finish(run)


async def test_a_grade_records_what_its_premise_looked_for(tmp_path: Path) -> None:
    run = await started(tmp_path)
    await tell_pets(run)
    await call(run, "send_message", text="Who is Rex's vet?")
    await call(run, "log_evaluation", check_id="1.1", score=10, attempt=1, answer="Dr Hughes", comment="")
    assert (
        run.state.evaluations["1.1"].premise == ["Dr", "Hughes", "pets 1.3"]
        and not run.state.evaluations["1.1"].persona_fault
    )
    await finish(run)
