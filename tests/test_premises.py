"""Premises from the transcript: a grade counts only when what it asks was told to the agent.

Played on a benchmark written the seed's way (``tests/benchmarks/prose_seed``: no KEY.md, its changes told
in prose, with Say lines that carry none of the new values): the scripted persona, which only plays the Say
lines, never tells the changes, so each check whose changed value it never sent is a persona fault with its
evidence; a persona that does what the prose says has none; the same persona behind a proxy that swaps every
message carrying a new value for small talk is caught, on its ``facts_mark_told`` and on the grades.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine_helpers import ROOT, fast, kinds, make_config

from engine.commands import NextPhase
from engine.events import Event, TerminationReason, ToolCalled
from engine.models.base import ChatModel, Completion, Message, ToolCall, ToolSchema
from engine.models.scripted_persona import ScriptedPersonaModel, _calls_since
from engine.placement.scheduler import Scheduler
from engine.run.build import build_run
from engine.run.loop import Run
from engine.transcript import read_events

SMALL_TALK = "Lovely weather today, isn't it?"
SWAPPED = json.dumps({"text": SMALL_TALK})
# what the prose of prose_seed's chapter 2 says, as a faithful model carries it out: (phase title, sheet,
# fact, new text, the message telling it)
NEWS = [
    (
        "Supplier news",
        "oven",
        "1.2",
        "The oven costs 5,100 EUR from the supplier Bakeline",
        "Bakeline called: the oven's price went up from 4,800 to 5,100 EUR.",
    ),
    (
        "Bookkeeping",
        "staff",
        "1.3",
        "The bakery's accountant is Birgit Sand",
        "Henrik Moll has retired; Birgit Sand does the bakery's books now.",
    ),
]


class FollowsTheProse(ScriptedPersonaModel):
    """The scripted persona, plus what a phase's prose asks (edit the sheet, tell it, mark it told), first."""

    def decide(self, messages: list[Message]) -> list[tuple[str, dict[str, Any]]]:
        start, text = self._phase(messages)
        calls = _calls_since(messages, start)
        title = text.splitlines()[0] if text else ""
        for phase, sheet, fact_id, new_text, message in NEWS:
            if f": {phase})" not in title:
                continue
            edits = [i for i, c in enumerate(calls) if c.name == "facts_edit" and c.args.get("id") == fact_id]
            if not edits:
                return [("facts_edit", {"sheet": sheet, "id": fact_id, "text": new_text})]
            if not any(c.name == "send_message" for c in calls[edits[0] :]):  # whatever a proxy made of it
                return [("send_message", {"text": message})]
            if not any(c.name == "facts_mark_told" and fact_id in c.args.get("ids", []) for c in calls):
                return [("facts_mark_told", {"sheet": sheet, "ids": [fact_id]})]
        return super().decide(messages)


class SmallTalkProxy:
    """Between a persona model and the run: every message carrying one of ``values`` becomes small talk, and
    the model is shown its own history as it wrote it (it believes it told them)."""

    def __init__(self, inner: ChatModel, values: list[str]) -> None:
        self.inner = inner
        self.values = values
        self.name = inner.name
        self.written: dict[str, str] = {}  # call id -> the arguments the model wrote

    async def complete(self, messages: list[Message], tools: list[ToolSchema] | None = None) -> Completion:
        completion = await self.inner.complete([self._as_written(m) for m in messages], tools)
        calls = [self._swap(call) for call in completion.tool_calls]
        return completion.model_copy(update={"tool_calls": calls})

    def _as_written(self, message: Message) -> Message:
        calls = message.get("tool_calls")
        if not calls or not any(self._swapped(c) for c in calls):
            return message
        restored = [
            {**c, "function": {**c["function"], "arguments": self.written[c["id"]]}}
            if self._swapped(c)
            else c
            for c in calls
        ]
        return {**message, "tool_calls": restored}  # type: ignore[typeddict-item]

    def _swapped(self, call: Any) -> bool:  # a call's id is not unique over a run: its text says it
        return call["id"] in self.written and call["function"]["arguments"] == SWAPPED

    def _swap(self, call: ToolCall) -> ToolCall:
        args = json.loads(call.arguments)
        if call.name == "send_message" and any(v in args["text"] for v in self.values):
            self.written[call.id] = call.arguments
            return call.model_copy(update={"arguments": SWAPPED})
        return call


async def play_prose(tmp_path: Path, persona: ChatModel | None = None) -> Run:
    config = make_config(tmp_path, {"r": {"benchmark": "prose_seed", "agent": "chatbot"}})
    run = build_run(config, "r", tune=fast)
    if persona is not None:
        run.persona_model = persona
    await run.run()
    assert run.termination is TerminationReason.FINISHED, run.state.reason
    return run


def faults(run: Run) -> dict[str, str]:
    return {cid: e.persona_fault for cid, e in run.state.evaluations.items() if e.persona_fault}


async def test_a_persona_that_never_tells_the_prose_changes_is_faulted_with_evidence(tmp_path: Path) -> None:
    run = await play_prose(tmp_path)
    found = faults(run)
    assert set(found) == {"3.1", "3.3", "3.4"}  # the new price (alone and in the sum), the new accountant
    assert "'5,100 EUR' was never sent to the assistant before the question" in found["3.1"]
    assert "'5,100 EUR' was never sent" in found["3.3"] and "350" not in found["3.3"]  # 350 was told in ch1
    assert "'Sand' was never sent" in found["3.4"]
    assert len(run.state.evaluations) == 6  # the old price, the delivery day and the VOID check stand
    assert run.state.evaluations["3.2"].premise == ["4,800 EUR"]
    assert run.state.evaluations["3.6"].premise == []  # VOID: nothing to look for


async def test_a_persona_that_tells_every_change_has_no_fault(tmp_path: Path) -> None:
    run = await play_prose(tmp_path, FollowsTheProse())
    assert faults(run) == {}
    assert len(run.state.evaluations) == 6
    assert run.state.sheets["oven"].find("1.2").text.startswith("The oven costs 5,100")  # type: ignore[union-attr]
    assert run.state.evaluations["3.1"].premise == ["5,100 EUR"]


async def test_a_proxy_that_swaps_the_news_for_small_talk_is_caught(tmp_path: Path) -> None:
    run = await play_prose(tmp_path, SmallTalkProxy(FollowsTheProse(), ["5,100", "Birgit"]))
    assert set(faults(run)) == {"3.1", "3.3", "3.4"}
    evts = list(read_events(run.run_dir / "transcript.jsonl"))
    refused = [e for e in kinds(evts, "tool_called") if e.name == "facts_mark_told" and e.error]
    assert refused and "oven 1.2's new amount 5,100 EUR" in refused[0].result  # told means sent
    assert not any("Birgit" in e.text for e in kinds(evts, "message_sent"))


async def test_the_persona_is_not_told_the_expected_text_of_a_fault(tmp_path: Path) -> None:
    run = await play_prose(tmp_path)
    evts = list(read_events(run.run_dir / "transcript.jsonl"))
    results = [e.result for e in kinds(evts, "tool_called") if e.name == "log_evaluation"]
    set_aside = [r for r in results if "set aside" in r]
    assert len(set_aside) == 3
    assert not any("5,100" in r or "expected" in r for r in set_aside)


async def test_on_max_marks_of_messages_that_never_reached_the_agent_change_no_grade_unseen(
    tmp_path: Path,
) -> None:
    """``max`` through a proxy that swaps every message carrying two changed values (the flights' new fare,
    the corrected vitamin D dose) for small talk: each mark of them is refused, the operator forces the
    phases the persona cannot finish, and no grade that needs them counts for the agent."""
    swapped = ["560", "4000"]

    class ForcesAStuckPhase:
        def on_event(self, run_id: str, event: Event) -> None:
            if isinstance(event, ToolCalled) and event.name == "next_phase" and event.error:
                run.command(NextPhase(force=True))

    config = make_config(
        tmp_path, {"max": {"benchmark": "max", "agent": "chatbot"}}, benchmarks=ROOT / "benchmarks"
    )
    run = build_run(config, "max", tune=fast)
    run.persona_model = SmallTalkProxy(run.persona_model, swapped)
    run.observers.append(ForcesAStuckPhase())
    assert await run.run() is TerminationReason.FINISHED
    evts = list(read_events(run.run_dir / "transcript.jsonl"))
    refused = [e.result for e in kinds(evts, "tool_called") if e.name == "facts_mark_told" and e.error]
    assert any("carried trip 2.1's new amount $560: send it" in r for r in refused)
    assert any("carried health 3.1's new figure 4000 IU: send it" in r for r in refused)
    found = faults(run)
    assert "'$560' was never sent" in found["20.15"] and "'560' was never sent" in found["20.14"]
    assert "health 3.1 as it stands was not told" in found["20.3"]  # "4,000 km" of the bike is another figure
    sent = [(e.n, e.text) for e in kinds(evts, "message_sent")]
    for check_id, grade in run.state.evaluations.items():
        needs = [v for v in swapped if v in grade.expected.replace(",", "")]
        told = all(any(v in text.replace(",", "") for n, text in sent if n < grade.n) for v in needs)
        assert told or grade.persona_fault, f"{check_id} counted though {needs} never reached the agent"


async def test_the_runs_table_shows_the_reports_score_persona_faults_left_out(tmp_path: Path) -> None:
    run = await play_prose(tmp_path)
    report = (run.run_dir.parent / "report.md").read_text()
    headline = float(report.split("📊 Score: ", 1)[1].split("/10", 1)[0])
    config = make_config(tmp_path, {"r": {"benchmark": "prose_seed", "agent": "chatbot"}})
    view = Scheduler(config).view("r")  # read back from state.json, as a fresh app shows it
    assert view.average is not None and round(view.average, 2) == headline
    assert "persona faults 3 excluded" in report
