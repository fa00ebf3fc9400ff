"""What an adapter says of its agent and the engine reads (issue 21, points 5 and 9).

Whether a new session clears the agent's context (``supports_new_conversation``): the persona's
session-switch note is true for the agent at hand, ``chatbot`` (the control) keeping its whole history.
How long one reply may take (``reply_timeout``): for an agent played by a model of ``config.jsonc``, as long as
that model entry's ``timeout`` and ``max_retries`` let its call take.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from engine_helpers import events, fast, kinds, make_config, play

from engine.agents import BUILTIN, AgentAdapter, resolve
from engine.config import ModelSpec
from engine.events import Event, PhaseStarted
from engine.models.openai_model import RETRY_AFTER_CAP, longest_call
from engine.run.build import build_run
from engine.run.loop import Run
from engine.run.phase_start import start_phase
from engine.run.phases import SESSION_KEPT_NOTE, SESSION_SWITCH_NOTE, session_switch_note

# ---- a new session: cleared or kept, and the note says which ----------------------------------------


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_an_adapter_says_whether_a_new_session_clears_its_context(name: str) -> None:
    cls = resolve(name)
    restarts = cls.start_new_conversation is not AgentAdapter.start_new_conversation
    assert cls.supports_new_conversation is restarts  # a no-op new conversation never claims a clear
    assert cls.supports_new_conversation is (name != "chatbot")  # the control keeps its whole history


def test_the_note_is_true_for_either_kind_of_agent() -> None:
    assert session_switch_note(True) == SESSION_SWITCH_NOTE
    assert "no longer sees anything" in SESSION_SWITCH_NOTE
    kept = session_switch_note(False)
    assert kept == SESSION_KEPT_NOTE and "still sees everything" in kept
    assert "no longer" not in kept and "long-term memory" not in kept


def built(tmp_path: Path, run: dict[str, Any], **extra: Any) -> Run:
    config = make_config(tmp_path, {"r": {"benchmark": "full", **run}}, **extra)
    return build_run(config, "r", tune=fast)


@pytest.mark.parametrize("agent", ["chatbot", "fixture_agents:ForgetfulAgent"])
async def test_the_session_switch_of_a_phase_tells_the_persona_what_the_agent_still_sees(
    tmp_path: Path, agent: str
) -> None:
    run = built(tmp_path, {"agent": agent})
    exam = next(i for i, phase in enumerate(run.bench.phases) if "newSession" in (phase.js or ""))
    events: list[Event] = []

    async def new_session() -> bool:
        return True

    clears = run.adapter.supports_new_conversation  # what the run hands start_phase (engine/run/loop.py)
    await start_phase(run.state, run.bench, exam, new_session, events.append, clears_context=clears)
    started = [e for e in events if isinstance(e, PhaseStarted)]
    assert started and started[0].text.endswith(f"[Platform note: {session_switch_note(clears)}]")
    if agent == "chatbot":
        assert "still sees everything" in run.state.phase_text and "no longer" not in run.state.phase_text
    else:
        assert "no longer sees anything" in run.state.phase_text


async def test_a_chatbot_run_tells_the_persona_its_agent_still_sees_the_chat(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": "chatbot"}})
    await play(config, "r")
    exam = next(e for e in kinds(events(config, "r"), "phase_started") if e.title == "The exam")
    assert SESSION_KEPT_NOTE in exam.text and "no longer sees" not in exam.text


# ---- one reply's time: the model entry's timeout and retries --------------------------------------


def test_the_longest_call_counts_every_attempt_and_every_wait() -> None:
    spec = ModelSpec(model="m", base_url="http://127.0.0.1:9/v1", timeout=10, max_retries=2)
    assert longest_call(spec) == 3 * 10 + 2 * RETRY_AFTER_CAP
    assert longest_call(spec.model_copy(update={"max_retries": 0})) == 10


def test_a_chatbot_on_a_model_entry_waits_as_long_as_the_entry_allows(tmp_path: Path) -> None:
    entry = {"model": "x", "base_url": "http://127.0.0.1:9/v1", "timeout": 900, "max_retries": 7}
    run = built(tmp_path, {"agent": "chatbot", "model": "slow"}, models={"slow": entry})
    budget = run.adapter.reply_timeout
    assert budget == longest_call(ModelSpec.model_validate(entry))
    assert budget is not None and budget >= 900 * 8  # beyond the engine's default of 600 s
    assert run.adapter.model.spec.timeout == 900 and run.adapter.model.spec.max_retries == 7  # type: ignore[attr-defined]


def test_a_chatbot_on_a_scripted_model_sets_no_bound(tmp_path: Path) -> None:
    assert built(tmp_path, {"agent": "chatbot", "model": "scripted/recall"}).adapter.reply_timeout is None


def test_an_endpoint_agent_waits_its_reply_timeout(tmp_path: Path) -> None:
    run = built(
        tmp_path,
        {
            "agent": "openai-endpoint",
            "base_url": "http://127.0.0.1:9/v1",
            "model": "x",
            "reply_timeout": 1500,
        },
    )
    assert run.adapter.reply_timeout == 1500


async def test_the_engine_waits_as_long_as_the_adapters_own_reply_timeout_allows(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": "fixture_agents:SlowToTakeAgent"}})

    def impatient(settings: Any) -> None:
        fast(settings)
        settings.agent_reply_timeout = (
            0.01  # shorter than each send: only the adapter's own limit lets it finish
        )

    run = build_run(config, "r", tune=impatient)
    await run.run()
    assert run.state.finished and run.agent.reply_timeout() == 35.0
