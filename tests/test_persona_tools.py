"""The persona's tool calls and hooks answer a slip with an error the model can act on (issue 21, point 9).

An unknown tool is answered with the tools this run offers (``wait`` only in virtual-time scenarios), a call
without some of its required arguments names every one missing, and an exact echo of an agent reply is
refused however short it is (its whole cycle dropped from the context), while a short message of the
persona's own goes through.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import FORGETFUL, fast, kinds, make_config

from engine.models.base import Completion, ToolCall
from engine.persona import hooks
from engine.persona.notebook import ToolError
from engine.persona.tools import TOOL_NAMES, dispatch, missing_arguments
from engine.run.build import build_run
from engine.run.loop import Run
from engine.transcript import read_events


async def started(tmp_path: Path, benchmark: str, agent: str = FORGETFUL) -> Run:
    config = make_config(tmp_path, {"r": {"benchmark": benchmark, "agent": agent}})
    run = build_run(config, "r", tune=fast)
    await run._initialise()
    return run


async def refused(run: Run, name: str, args: dict[str, Any]) -> str:
    with pytest.raises(ToolError) as info:
        await dispatch(run, name, args)
    return str(info.value)


def offered_in(error: str) -> list[str]:
    return error.split("tools: ", 1)[1].split(", ")


# ---- unknown tools: the tools of this run, and no other ------------------------------------------


async def test_an_unknown_tool_lists_only_the_tools_of_a_real_time_run(tmp_path: Path) -> None:
    run = await started(tmp_path, "full")  # real time: no wait
    assert not run.bench.time_master
    error = await refused(run, "facts_delete", {"sheet": "pets"})
    assert "unknown tool 'facts_delete'" in error
    assert offered_in(error) == [name for name in TOOL_NAMES if name != "wait"]


async def test_wait_in_a_real_time_run_is_an_unknown_tool_that_says_why(tmp_path: Path) -> None:
    run = await started(tmp_path, "full")
    error = await refused(run, "wait", {"until": "07:30"})
    assert "unknown tool 'wait'" in error and "real time" in error
    assert "wait" not in offered_in(error)


async def test_an_unknown_tool_of_a_virtual_time_run_lists_wait(tmp_path: Path) -> None:
    run = await started(tmp_path, "days", "fixture_agents:ClockAgent")
    assert run.bench.time_master
    error = await refused(run, "sleep", {"until": "07:30"})
    assert offered_in(error) == TOOL_NAMES


# ---- missing arguments: every one named at once ---------------------------------------------------


async def test_every_missing_argument_is_named_at_once(tmp_path: Path) -> None:
    run = await started(tmp_path, "full")
    error = await refused(run, "facts_edit", {"sheet": "pets"})
    assert "missing arguments 'id', 'text' for facts_edit" in error
    error = await refused(run, "log_evaluation", {"check_id": "1.1", "score": None})
    assert "missing arguments 'score', 'attempt', 'answer', 'comment' for log_evaluation" in error
    error = await refused(run, "facts_read", {})
    assert "missing argument 'sheet' for facts_read" in error  # one: singular
    assert not run.state.evaluations  # nothing was graded with made-up defaults


def test_missing_arguments_read_the_schema() -> None:
    assert missing_arguments("facts_add", {"sheet": "pets"}) == ["category", "text"]
    assert missing_arguments("next_phase", {}) == []
    assert missing_arguments("send_message", {"text": ""}) == []  # present: "text is empty" says the rest


# ---- the echo guard: an exact echo however short, never a shared word -----------------------------


def send(text: str) -> Completion:
    arguments = json.dumps({"text": text})
    return Completion(tool_calls=[ToolCall(id="c1", name="send_message", arguments=arguments)])


@pytest.mark.parametrize("text", ["Noted.", "noted", '  "Noted!"  ', "**Noted.**", "NOTED …"])
def test_a_short_exact_echo_is_refused(text: str) -> None:
    refusal = hooks.refuse(send(text), ["Noted."], echo_guard=True, plain_text_guard=True)
    assert refusal is not None and refusal.slip == "echo: the output repeats an agent reply"
    assert hooks.imitates_agent(Completion(content=text), ["Noted."]) == "the output repeats an agent reply"


@pytest.mark.parametrize(
    "text", ["Noted, thanks!", "Thanks.", "Noted. One more thing: Rex's vet moved to Albany Road.", "Not ed"]
)
def test_a_short_message_that_shares_words_goes_through(text: str) -> None:
    assert hooks.refuse(send(text), ["Noted.", "Thanks! Anything else?"], True, True) is None


def test_an_echo_of_a_reply_with_newlines_and_quotes_is_refused() -> None:
    reply = 'Sure, "Rex" eats 250 g a day now.\nI have updated my notes on his diet as well.'
    assert hooks.refuse(send(reply), [reply], True, True) is not None  # the JSON escaping is undone first


async def test_a_short_echo_never_reaches_the_agent(tmp_path: Path) -> None:
    run = await started(tmp_path, "full")
    agent = run.adapter
    run.append_message({"role": "tool", "tool_call_id": "c0", "content": "The assistant replied:\n\nNoted."})
    before = agent.received  # type: ignore[attr-defined]
    context = copy.deepcopy(run.state.persona_messages)
    await run._handle_completion(send("Noted."))
    assert agent.received == before  # type: ignore[attr-defined]
    evts = list(read_events(run.run_dir / "transcript.jsonl"))
    assert [e.hook for e in kinds(evts, "hook_fired")] == ["echo_guard"]
    assert run.state.persona_messages == context  # the whole cycle dropped: the context as it was
    await run._handle_completion(send("Noted, thanks. Rex's vet is Dr Hughes."))
    assert agent.received == before + 1  # type: ignore[attr-defined]
