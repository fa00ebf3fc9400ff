"""Premises compare values, not wording (issue 31, items 1, 2 and 8), played on ``tests/benchmarks/everyday_values``
(written the seed's way: prose, Say, Tell and Edit lines, no KEY.md; dollars and euros written as a code,
weekdays and times, one-figure changes, old values kept in brackets in the Edit lines, two totals whose answers
do not name their parts).

The scripted persona plays it behind proxies that stand for a language model: ``EverydayWords`` rewrites every
message the way a model might (currency words for codes and symbols, abbreviated weekdays and ranges, 12-hour
times, other date and number notations, a computed amount first, old values kept in brackets in its own words):
the grades are the plain run's, with no persona fault and no refused ``facts_mark_told``. ``OnlyNews`` tells a
change as a model often does, its new values only (no old value, no name said before): nothing refused, no
fault. ``DropsChanges`` never delivers the changes the totals rest on: each total is a persona fault naming the
value that was not sent.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from engine_helpers import fast, kinds, make_config

from engine.commands import NextPhase
from engine.events import Event, TerminationReason, ToolCalled
from engine.models.base import ChatModel, Completion, Message, ToolCall, ToolSchema
from engine.models.scripted_persona import ScriptedPersonaModel
from engine.run.build import build_run
from engine.run.loop import Run
from engine.transcript import read_events

BENCHMARK = "everyday_values"
DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
MONTHS = "January February March April May June July August September October November December".split()
_DAY = "|".join(DAYS)
_DAY_LIST = re.compile(rf"\b(?:{_DAY})(?:(?:, | and )(?:{_DAY}))+")


class RewritingProxy:
    """Between a persona model and the run: each message the model sends goes out as ``rewrite`` makes it,
    and the model is shown its own history as it wrote it (it believes it sent its own words)."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner
        self.name = inner.name
        self.written: dict[tuple[str, str], str] = {}  # (call id, arguments sent) -> arguments written

    def rewrite(self, text: str) -> str:
        raise NotImplementedError

    async def complete(self, messages: list[Message], tools: list[ToolSchema] | None = None) -> Completion:
        completion = await self.inner.complete([self._as_written(m) for m in messages], tools)
        return completion.model_copy(update={"tool_calls": [self._sent(c) for c in completion.tool_calls]})

    def _as_written(self, message: Message) -> Message:
        calls = message.get("tool_calls")
        if not calls:
            return message
        restored = [
            {**c, "function": {**c["function"], "arguments": self.written.get((c["id"], a), a)}}
            for c in calls
            for a in [c["function"]["arguments"]]
        ]
        return {**message, "tool_calls": restored}  # type: ignore[typeddict-item]

    def _sent(self, call: ToolCall) -> ToolCall:
        if call.name != "send_message":
            return call
        args = json.loads(call.arguments)
        text = self.rewrite(args["text"])
        if text == args["text"]:
            return call
        sent = json.dumps({**args, "text": text}, ensure_ascii=False)
        self.written[(call.id, sent)] = call.arguments
        return call.model_copy(update={"arguments": sent})


def _digits(raw: str, turn: int) -> str:
    """A number in another notation: no thousands comma, or in thousands (``1.375k``) every third time."""
    value = float(raw.replace(",", ""))
    if value >= 1000 and turn % 3 == 0:
        return f"{value / 1000:g}k"
    return f"{value:g}"


def _money(text: str, turn: int) -> str:
    dollars = "bucks" if turn % 2 else "dollars"
    text = re.sub(r"\$(\d[\d,]*(?:\.\d+)?)", lambda m: f"{_digits(m.group(1), turn)} {dollars}", text)
    text = re.sub(
        r"\bEUR (\d[\d,]*)|(\d[\d,]*) EUR\b|€(\d[\d,]*)",
        lambda m: f"{_digits(next(g for g in m.groups() if g), turn)} euros",
        text,
    )
    return text


def _weekdays(text: str) -> str:
    """Days as a model shortens them: ``every day except Sunday`` → ``Mon–Sat``, three days in a row or more
    as a range (``Mon–Thu``), any other day cut to three letters."""
    text = re.sub(rf"every day except ({_DAY})", lambda m: _range_without(m.group(1)), text)

    def listed(m: re.Match[str]) -> str:
        days = [DAYS.index(d) for d in re.findall(_DAY, m.group(0))]
        if len(days) >= 3 and days == list(range(days[0], days[0] + len(days))):
            return f"{DAYS[days[0]][:3]}–{DAYS[days[-1]][:3]}"
        return m.group(0)

    text = _DAY_LIST.sub(listed, text)
    return re.sub(rf"\b({_DAY})\b", lambda m: m.group(1)[:3], text)


def _range_without(day: str) -> str:
    index = DAYS.index(day)
    return f"{DAYS[(index + 1) % 7][:3]}–{DAYS[(index + 6) % 7][:3]}"


def _times(text: str) -> str:
    def twelve(m: re.Match[str]) -> str:
        hour, minute = int(m.group(1)), m.group(2)
        clock = f"{hour % 12 or 12}" + ("" if minute == "00" else f":{minute}")
        return f"{clock} {'pm' if hour >= 12 else 'am'}"

    return re.sub(r"\b([01]?\d|2[0-3]):([0-5]\d)\b", twelve, text)


def _dates(text: str) -> str:
    def month_first(m: re.Match[str]) -> str:
        day = int(m.group(1))
        suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
        return f"{m.group(2)[:3]} {day}{suffix}"

    return re.sub(rf"\b(\d{{1,2}}) ({'|'.join(MONTHS)})\b", month_first, text)


def _amount_first(text: str) -> str:
    """``25 m² at $55 per m² → $1,375`` → ``$1,375 for 25 m² at $55 per m²``: the result said first."""
    return re.sub(r"(\d[^→;()]*?)\s*→\s*([$€]?\d[\d,.]*(?: EUR)?)", r"\2 for \1", text)


def _history_reworded(text: str) -> str:
    """An old value kept in brackets, in a model's words: ``(was $42 per m²)`` → ``(it used to be $42 per m²)``."""
    return re.sub(r"\(([^()]*?)\bwas\b", r"(\1it used to be", text)


class EverydayWords(RewritingProxy):
    """Every message said in other words, its values unchanged (module docstring)."""

    def __init__(self, inner: ChatModel) -> None:
        super().__init__(inner)
        self.turn = 0

    def rewrite(self, text: str) -> str:
        self.turn += 1
        text = re.sub(r"^Update: ", "Quick change: ", text)
        text = _history_reworded(_amount_first(text))
        return _money(_dates(_times(_weekdays(text))), self.turn)


_PAST_BRACKET = re.compile(r"\s*\([^()]*\b(?:was|instead of|budgeted|first|moved from)\b[^()]*\)")
_PLACE = re.compile(r"(?:\s(?:at|from|with|by))?((?:\s[A-Z][\w'’]+)+)")


class OnlyNews(EverydayWords):
    """A change told by its new values only: the old value in brackets and the names said before left out."""

    def __init__(self, inner: ChatModel) -> None:
        super().__init__(inner)
        self.names: set[str] = set()

    def rewrite(self, text: str) -> str:
        told = text
        if text.startswith("Update: "):
            text = _PAST_BRACKET.sub("", text)
            text = _PLACE.sub(lambda m: "" if set(m.group(1).split()) <= self.names else m.group(0), text)
        self.names |= {w for w in re.findall(r"(?<=[a-z,] )[A-Z][\w'’]+", told) if w not in DAYS + MONTHS}
        return super().rewrite(text)


class DropsChanges(RewritingProxy):
    """Every message carrying one of ``values`` becomes small talk: those changes never reach the agent."""

    def __init__(self, inner: ChatModel, values: list[str]) -> None:
        super().__init__(inner)
        self.values = values

    def rewrite(self, text: str) -> str:
        return "Lovely weather today, isn't it?" if any(v in text for v in self.values) else text


class ForcesAStuckPhase:
    """The operator: a phase whose gate the persona cannot pass (its change never delivered) is forced."""

    def __init__(self) -> None:
        self.run: Run | None = None

    def on_event(self, run_id: str, event: Event) -> None:
        if self.run and isinstance(event, ToolCalled) and event.name == "next_phase" and event.error:
            self.run.command(NextPhase(force=True))


async def play(tmp_path: Path, wrap: Any = None) -> Run:
    tmp_path.mkdir(parents=True, exist_ok=True)
    config = make_config(tmp_path, {"r": {"benchmark": BENCHMARK, "agent": "chatbot"}})
    run = build_run(config, "r", tune=fast)
    operator = ForcesAStuckPhase()
    operator.run = run
    run.observers.append(operator)
    if wrap is not None:
        run.persona_model = wrap(ScriptedPersonaModel())
    assert await run.run() is TerminationReason.FINISHED, run.state.reason
    return run


def grades(run: Run) -> dict[str, float]:
    return {cid: e.score for cid, e in run.state.evaluations.items()}


def faults(run: Run) -> dict[str, str]:
    return {cid: e.persona_fault for cid, e in run.state.evaluations.items() if e.persona_fault}


def refused_marks(run: Run) -> list[str]:
    evts = list(read_events(run.run_dir / "transcript.jsonl"))
    return [e.result for e in kinds(evts, "tool_called") if e.name == "facts_mark_told" and e.error]


def sent(run: Run) -> list[str]:
    return [e.text for e in kinds(list(read_events(run.run_dir / "transcript.jsonl")), "message_sent")]


async def test_a_change_told_in_everyday_words_is_told(tmp_path: Path) -> None:
    plain = await play(tmp_path / "plain")
    assert faults(plain) == {} and refused_marks(plain) == [] and len(plain.state.evaluations) == 10
    worded = await play(tmp_path / "worded", EverydayWords)
    said = "\n".join(sent(worded))
    for wording in ("Mon–Thu", "Tue and Thu", "7:15 pm", "Oct 21st", "420 euros", "bucks", "dollars", "k "):
        assert wording in said, wording  # the proxy did rewrite the values
    assert "EUR" not in said and "$" not in said and "Tuesday" not in said and "19:15" not in said
    assert refused_marks(worded) == []
    assert faults(worded) == {}
    assert grades(worded) == grades(plain)
    assert worded.state.evaluations["3.3"].premise == plain.state.evaluations["3.3"].premise  # the same parts
    assert {"bathroom 1.1", "bathroom 1.4"} <= set(worded.state.evaluations["3.3"].premise)


async def test_a_change_told_by_its_new_values_only_is_told(tmp_path: Path) -> None:
    run = await play(tmp_path, OnlyNews)
    said = "\n".join(sent(run))
    assert "plumber charges 950 " in said and "Ben Carter charges 950" not in said  # no name said again
    assert "budgeted" not in said and "quoted" not in said and "instead of" not in said  # no old value
    assert refused_marks(run) == []
    assert {c for c, f in faults(run).items()} <= {"3.2"}  # 3.2 asks the old tile price: it was never resent
    assert "3.2" not in faults(run) or "$42" in faults(run)["3.2"]


async def test_a_total_whose_changes_were_dropped_is_the_personas_fault(tmp_path: Path) -> None:
    run = await play(tmp_path, lambda inner: DropsChanges(inner, ["$55", "$950", "EUR 420"]))
    assert refused_marks(run)  # each change marked told without reaching the agent is refused
    found = faults(run)
    bathroom, car = found["3.3"], found["3.6"]
    assert (
        "the total '$3,175' rests on bathroom 1.1, whose '$55'" in bathroom
        and "not sent after its change" in bathroom
    )
    assert "the total '$3,175' rests on bathroom 1.4, whose '$950'" in bathroom
    assert "the total 'EUR 980' rests on car 1.1, whose 'EUR 420' was not sent after its change" in car
    assert "car 1.2" not in car  # the tyres were told
    assert set(found) == {"3.1", "3.3", "3.6", "3.7"}  # the totals and the changed values asked alone
    notes = [e.result for e in kinds(list(read_events(run.run_dir / "transcript.jsonl")), "tool_called")]
    set_aside = [r for r in notes if "set aside" in r]
    assert any(
        "send what changed in bathroom 1.1 as your sheet has it now to the assistant" in r for r in set_aside
    )
    assert not any("55" in r or "950" in r or "3,175" in r or "expected" in r for r in set_aside)
