"""``scripted/agent?reply_tokens=N`` (issue 34): replies of a real model's length, the answer's own sentence first,
then prose that states no figure, so that grades are those of the short replies and an agent's context grows to
the seed's scale."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from engine_helpers import ROOT, make_config, play

from engine.events import AgentReplied, EvaluationLogged
from engine.models.base import ModelError, ToolCall
from engine.models.faults import parse_scripted_name, scripted_name_problem
from engine.models.registry import make_scripted
from engine.models.rules_judge import judge
from engine.models.scripted_agent import DONT_KNOW, ScriptedAgentModel
from engine.models.scripted_padding import pad, topic_words
from engine.models.tokens import count_text
from engine.transcript import read_events

STATEMENTS = [
    "My gym locker is number 212 and the gym opens at 6 am on weekdays.",
    "The plumber Ben Carter charges $950 flat (we had budgeted $900).",
    "Lena changed her mind: microcement on the accent wall instead of decorative stone.",
    "I take amlodipine, 5 mg every morning, since 14 October.",
    "ok",
]
ANSWERS = [  # (question, correct answer, the short reply)
    ("What is my gym locker number?", "212.", "My gym locker is number 212."),
    ("What's the bathroom estimate total?", "$4,090.", "The bathroom comes to $4,090."),
    ("What's the bathroom estimate total?", "$4,090.", "The bathroom comes to $3,900."),
    ("How much was the tile before the price rise?", "$42 per m².", "It was $42 per m² before the rise."),
    ("What colour is my bike?", "you never told me.", DONT_KNOW),
    ("What colour is my bike?", "you never told me.", "Your bike is red."),
    ("When is the GP check-up?", "21 October at 9:30.", "The GP check-up is on 21 October at 9:30."),
    ("Which tile did we pick, marble or ceramic?", "ceramic.", "We picked the ceramic tile."),
    ("Which tile did we pick, marble or ceramic?", "ceramic.", "We picked marble."),
]


@pytest.mark.parametrize("tokens", [0, 1, 600, 20000])
def test_the_option_is_read_from_the_model_name(tokens: int) -> None:
    assert parse_scripted_name(f"scripted/agent?reply_tokens={tokens}").reply_tokens == tokens
    model = make_scripted(f"scripted/agent?reply_tokens={tokens}&plan=save&faults=3:429")
    assert isinstance(model.inner, ScriptedAgentModel) and model.inner.reply_tokens == tokens
    assert model.inner.plan == frozenset({"save"}) and model.faults == {3: "429"}
    assert parse_scripted_name("scripted/agent").reply_tokens == 0


@pytest.mark.parametrize("value", ["", "abc", "-5", "1.5", "20001", "600&reply_tokens=700", " 6 0"])
def test_a_bad_reply_length_is_one_clear_line(value: str) -> None:
    name = f"scripted/agent?reply_tokens={value}"
    problem = scripted_name_problem(name)
    assert problem.startswith("bad reply_tokens") and "0 to 20000" in problem and "\n" not in problem
    with pytest.raises(ModelError, match="reply_tokens"):
        make_scripted(name)


@pytest.mark.parametrize("base", ["scripted/persona", "scripted/recall"])
def test_only_the_agent_model_pads(base: str) -> None:
    with pytest.raises(ModelError, match="reply_tokens is played by scripted/agent only"):
        make_scripted(f"{base}?reply_tokens=300")


@pytest.mark.parametrize("tokens", [50, 300, 900, 2500])
@pytest.mark.parametrize("message", STATEMENTS + [q for q, _, _ in ANSWERS])
def test_a_padded_reply_is_about_as_long_as_asked_and_states_no_figure(tokens: int, message: str) -> None:
    for reply in ("Noted.", "My gym locker is number 212.", DONT_KNOW):
        padded = pad(reply, message, tokens)
        assert padded.startswith(reply + "\n\n")  # the answer's own sentence first
        assert tokens <= count_text(padded) <= tokens + 80
        extra = padded[len(reply) :]
        assert not re.search(r"\d|\?", extra), extra
        assert pad(reply, message, tokens) == padded  # deterministic


def test_a_statement_is_restated_a_question_never() -> None:
    padded = pad("Noted.", "Lena changed her mind: microcement on the accent wall instead of stone.", 300)
    assert "microcement" in padded and "accent" in padded
    assert "Lena" not in padded and "changed" not in padded  # names and the judge's tense words never
    assert topic_words("The plumber Ben Carter charges $950 on Monday, 14 October.") == ["plumber", "charges"]
    question = "Which tile did we pick for the bathroom, marble or ceramic?"
    assert not {"marble", "ceramic", "bathroom", "tile"} & set(
        re.findall(r"[a-z]+", pad("Hm.", question, 400))
    )
    assert pad("Short.", "anything", 0) == "Short." and pad("Short.", "anything", 1) == "Short."


@pytest.mark.parametrize(("question", "expected", "reply"), ANSWERS)
def test_padding_never_changes_a_grade(question: str, expected: str, reply: str) -> None:
    short = judge(question, expected, reply)
    for tokens in (200, 1200):
        long = judge(question, expected, pad(reply, question, tokens))
        assert (long.score, long.dont_know) == (short.score, short.dont_know), (tokens, long.comment)


async def test_tool_calls_and_summaries_are_never_padded() -> None:
    model = ScriptedAgentModel(reply_tokens=500)
    memory = [{"type": "function", "function": {"name": "memory", "parameters": {"properties": {}}}}]
    step = await model.complete([{"role": "user", "content": "Remember my locker code is 4417."}], memory)
    assert step.tool_calls and isinstance(step.tool_calls[0], ToolCall) and step.content is None
    summary_request = "Summarize the conversation under these section headings for the checkpoint:\n"
    summary_request += "\n".join(f"## Part {name}" for name in ("A", "B", "C"))
    history = [{"role": "user", "content": "I live in Batumi."}, {"role": "user", "content": summary_request}]
    summary = (await model.complete(history)).content or ""
    assert "Let me" not in summary and "Here is how" not in summary and count_text(summary) < 200
    answer = await model.complete([{"role": "user", "content": "I live in Batumi."}])
    assert answer.content and answer.content.startswith("Noted.") and answer.usage.completion_tokens >= 500


async def test_a_whole_run_grades_the_same_with_long_replies(tmp_path: Path) -> None:
    runs = {
        name: {"benchmark": "demo", "agent": "chatbot", "model": model}
        for name, model in (("short", "scripted/agent"), ("long", "scripted/agent?reply_tokens=400"))
    }
    config = make_config(tmp_path, runs, ROOT / "benchmarks")
    grades = {}
    for name in runs:
        await play(config, name)
        events = list(read_events(config.results_path() / name / "transcript.jsonl"))
        grades[name] = [(e.check_id, e.score) for e in events if isinstance(e, EvaluationLogged)]
        replies = [count_text(e.text) for e in events if isinstance(e, AgentReplied)]
        assert replies and (min(replies) >= 400 if name == "long" else max(replies) < 100), replies
    assert grades["long"] == grades["short"] and grades["short"]
