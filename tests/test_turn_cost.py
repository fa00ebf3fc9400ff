"""Flat cost per turn (issue 13): running token totals equal a fresh count, and compaction with them cuts
exactly where counting the whole history every turn did. Speed itself is measured by ``bench/turn_cost.py``."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import date

import pytest

from engine.models import tokens
from engine.models.base import Message
from engine.models.prompt_usage import schema_tokens
from engine.models.scripted_persona import ScriptedPersonaModel
from engine.models.tokens import TokenTally, count_tokens, is_estimate
from engine.persona.context import Compacted, compact, compact_state, shorten_replies
from engine.persona.tools import tool_schemas
from engine.state import RunState

WORDS = "bike garden tomato rent service ride Otley forty-two Sungold beagle €95 👍 naïve".split()


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _turn(rng: random.Random, n: int) -> list[Message]:
    """A persona turn: a tool call and its result, now and then a plain user message."""
    if rng.random() < 0.2:
        return [{"role": "user", "content": _text(rng, rng.randint(1, 60))}]
    arguments = json.dumps({"text": _text(rng, rng.randint(0, 30))})
    call = {
        "id": f"call_{n}",
        "type": "function",
        "function": {"name": "send_message", "arguments": arguments},
    }
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {
            "role": "tool",
            "tool_call_id": f"call_{n}",
            "content": "The assistant replied:\n\n" + _text(rng, 20),
        },
    ]


def test_a_tally_equals_a_fresh_count_after_appends_cuts_and_copies() -> None:
    rng = random.Random(3)
    tally = TokenTally()
    history: list[Message] = []
    tally.update(history)
    assert tally.count() == count_tokens(history) == 0
    for n in range(300):
        history += _turn(rng, n)
        if n % 37 == 36:  # cut back and changed further up: counted again from the first difference
            del history[-5:]
            history[-2] = {"role": "user", "content": _text(rng, 9)}
        if n % 50 == 49:  # equal copies, as parsed from JSON again: the same counts
            history = json.loads(json.dumps(history))
        tally.update(history)
        assert tally.messages == history
        if n % 3 == 1:
            continue  # counted later: tokens are counted when asked for, after cuts too
        assert tally.count() == count_tokens(history)
        start = rng.randrange(len(history))
        head: Message = {"role": "system", "content": _text(rng, 40)}
        assert tally.count(start) == count_tokens(history[start:])
        assert tally.count(start, [head]) == count_tokens([head, *history[start:]])
        assert tally.count(len(history), [head]) == count_tokens([head])
        moved = tally.with_head(head, start)  # after a compaction: the kept messages are not counted again
        assert moved.messages == [head, *history[start:]]
        assert moved.count() == count_tokens([head, *history[start:]])
        assert moved.count(1) == count_tokens(history[start:])
        assert tally.count(len(history)) == count_tokens([]) == 0


def _reference_compact(
    system: str,
    messages: list[Message],
    phase_starts: list[int],
    max_tokens: int,
    trim_to_tokens: int,
    reinjected: Callable[[], str],
) -> Compacted | None:
    """``compact`` as it was before running totals: the whole history counted every turn."""
    chars = sum(len(str(m.get("content") or "")) + len(str(m.get("tool_calls") or "")) for m in messages)
    if len(system) + chars < max_tokens:
        return None
    before = count_tokens([{"role": "system", "content": system}, *messages])
    if before < max_tokens:
        return None
    candidates = sorted(i for i in set(phase_starts) if 0 < i < len(messages))
    if not candidates:
        return None
    cut = candidates[-1]
    for start in reversed(candidates):
        if count_tokens(messages[start:]) <= trim_to_tokens:
            cut = start
        else:
            break
    kept = messages[cut:]
    note: Message = {
        "role": "user",
        "content": (
            "[Platform note: your own record of the earlier conversation was cut to save space (what you told "
            "stays marked told in your sheets). Your current profile and the sheets you had loaded follow.]\n\n"
            + reinjected()
        ),
    }
    new_messages = [note, *kept]
    new_starts = [0] + [i - cut + 1 for i in phase_starts if i >= cut]
    after = count_tokens([{"role": "system", "content": system}, *new_messages])
    if after >= before:
        return None
    return Compacted(new_messages, sorted(set(new_starts)), before, after, is_estimate())


def _state() -> RunState:
    return RunState(run_id="r", benchmark="b", agent="a", start_date=date(2026, 3, 10))


def test_compaction_from_running_totals_cuts_where_a_full_count_did() -> None:
    rng = random.Random(11)
    state = _state()
    expected_messages: list[Message] = []
    expected_starts: list[int] = []
    cuts = 0
    for n in range(1500):
        if n % 9 == 0:  # a phase begins
            state.phase_starts.append(len(state.persona_messages))
            expected_starts.append(len(expected_messages))
        if n == 700:  # one phase alone over the limit: no cut helps
            big: Message = {"role": "user", "content": _text(rng, 900)}
            state.persona_messages.append(big)
            expected_messages.append(big)
        for message in _turn(rng, n):
            state.persona_messages.append(message)
            expected_messages.append(message)
        system = "You are Sam. " + _text(rng, rng.randint(5, 50))  # the live profile changes
        profile = _text(rng, 30).__str__
        expected = _reference_compact(system, expected_messages, expected_starts, 1200, 500, profile)
        event = compact_state(state, system, 1200, 500, profile)
        assert (event is None) == (expected is None), n
        if expected is not None and event is not None:
            cuts += 1
            assert (event.tokens_before, event.tokens_after) == (
                expected.tokens_before,
                expected.tokens_after,
            )
            assert state.persona_messages == expected.messages
            assert state.phase_starts == expected.phase_starts
            expected_messages, expected_starts = list(expected.messages), list(expected.phase_starts)
        assert count_tokens(state.persona_messages) == count_tokens(expected_messages)
    assert cuts > 20 and state.persona_compactions == cuts


def test_a_history_edited_in_place_is_counted_again() -> None:
    prefix = "The assistant replied:\n\n"
    state = _state()
    state.persona_messages = [
        {"role": "user", "content": "hello " * 50},
        {"role": "tool", "tool_call_id": "c1", "content": prefix + "word " * 3000},
        {"role": "user", "content": "bye " * 50},
    ]
    state.phase_starts = [0, 1, 2]
    assert compact_state(state, "system", 100_000, 500, lambda: "profile") is None  # totals kept
    shorten_replies(state.persona_messages, prefix, 100)  # now far below the limit
    assert count_tokens(state.persona_messages) < 600
    assert compact_state(state, "system", 2000, 500, lambda: "profile") is None
    assert compact("system", state.persona_messages, [0, 1, 2], 2000, 500, lambda: "profile") is None


async def test_the_scripted_personas_prompt_usage_is_counted_once_per_message_and_right_after_a_cut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its usage is the tokenizer's count of what it was sent (tool schemas included), each message counted
    once however long the history, and right again after a compaction cut it."""
    model = ScriptedPersonaModel()
    tools = tool_schemas(False)
    history: list[Message] = [{"role": "user", "content": "Your first phase:\n\n## Day 1\nSay: hello."}]
    counted: list[int] = []
    real = tokens.message_tokens

    def counting(message: Message) -> int:
        counted.append(1)
        return real(message)

    monkeypatch.setattr(tokens, "message_tokens", counting)
    for turn in range(30):
        messages: list[Message] = [{"role": "system", "content": "profile"}, *history]  # the same each turn
        before = len(counted)
        completion = await model.complete(messages, tools)
        # the new message, not the history; right after the cut, what it kept
        assert len(counted) - before <= (len(messages) if turn in (0, 21) else 1)
        assert completion.usage.prompt_tokens == count_tokens(messages) + schema_tokens(tools)
        history.append({"role": "assistant", "content": f"turn {turn}"})
        if turn == 20:  # a compaction: a new, shorter history
            history = history[-3:]
