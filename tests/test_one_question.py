"""One question per message, whatever the punctuation (issue 31, item 3): a grade after a message that asked two
checks of the phase is refused naming both, in every shape a model writes them (one sentence joined by "and", a
comma or a semicolon, "a) … b) …", a numbered list, "Also, …" without a question mark, "… — and the delivery
day?"), while one question phrased at length — an "and" inside it, a greeting or a thank-you around it — passes.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import FORGETFUL, ROOT, fast, make_config

from engine.benchmark.templates import render_templates
from engine.benchmark.validate import load_benchmark
from engine.grading.asked import asked_checks
from engine.grading.contract import checks_asked
from engine.persona.notebook import ToolError
from engine.persona.tools import dispatch
from engine.run.build import build_run
from engine.run.loop import Run

# a phase of checks that share words, as an exam's do
KITCHEN = {
    "1.1": "What's the oven's price?",
    "1.2": "When will the oven be delivered?",
    "1.3": "What did the hallway tile and its laying cost together?",
    "1.4": "What's the bathroom estimate total, without the general works?",
    "1.5": "What's the kitchen estimate total, without the general works?",
    "1.6": "How much was the bathroom wall tile before the price rise?",
    "1.7": "Which colour did we pick for the fridge?",
}

TWO_CHECKS = [
    ("What's the oven's price and when will it be delivered?", ["1.1", "1.2"]),
    ("What's the oven's price and which day is the delivery?", ["1.1", "1.2"]),
    ("What's the oven's price, when is it delivered?", ["1.1", "1.2"]),
    ("What was the oven's price; and when does the delivery come?", ["1.1", "1.2"]),
    ("What's the oven's price — and the delivery day?", ["1.1", "1.2"]),
    ("What's the oven's price? Also, the delivery day.", ["1.1", "1.2"]),
    ("What's the oven's price? Also when it gets delivered", ["1.1", "1.2"]),
    ("Two quick ones: a) the oven's price b) its delivery day", ["1.1", "1.2"]),
    ("Two quick ones: (a) the oven's price; (b) its delivery date.", ["1.1", "1.2"]),
    ("Could you remind me:\n1. the oven's price\n2. the delivery day of the oven", ["1.1", "1.2"]),
    ("Quick check:\n- what the oven cost\n- when it gets delivered", ["1.1", "1.2"]),
    ("When will the oven be delivered? And what's the fridge colour we picked?", ["1.2", "1.7"]),
    ("What's the bathroom estimate total, without the general works? And the kitchen?", ["1.4", "1.5"]),
    ("What are the bathroom and the kitchen estimate totals, without the general works?", ["1.4", "1.5"]),
    (
        "How much was the bathroom wall tile before the price rise, and what colour is the fridge?",
        ["1.6", "1.7"],
    ),
    ("Tell me the fridge colour we picked, plus the oven's price.", ["1.7", "1.1"]),
    ("Hi! What colour did we pick for the fridge? Thanks. Oh, and the oven's price?", ["1.7", "1.1"]),
]

ONE_CHECK = [
    ("What did I pay for the hallway tile and its laying together?", "1.3"),
    ("What did the hallway tile and the laying come to, both together?", "1.3"),
    ("How much did the hallway tile cost, laying and tile together?", "1.3"),
    ("What's the price of the oven, the one we ordered, installation and all?", "1.1"),
    ("Thanks, the fridge colour is noted — when will the oven be delivered?", "1.2"),
    ("Got it. When is the oven being delivered?", "1.2"),
    ("Great, thanks! Next one: what's the kitchen estimate total, without the general works?", "1.5"),
    ("What's the kitchen estimate total? I mean without the general works, of course.", "1.5"),
    ("Please search your memory and our earlier conversation: what's the oven's price?", "1.1"),
    ("Quick one about the oven: what's its price, roughly?", "1.1"),
    ("How much was the bathroom wall tile before the price rise? Just the tile, per m².", "1.6"),
    ("Which colour did we pick for the fridge in the end, and was it your suggestion?", "1.7"),
    ("Remind me, what did we budget for the bathroom in total, leaving out the general works?", "1.4"),
]


@pytest.mark.parametrize(("message", "both"), TWO_CHECKS)
def test_two_checks_in_one_message_are_found_whatever_the_punctuation(message: str, both: list[str]) -> None:
    assert asked_checks(message, KITCHEN) == both


@pytest.mark.parametrize(("message", "check_id"), ONE_CHECK)
def test_one_question_phrased_at_length_asks_one_check(message: str, check_id: str) -> None:
    assert asked_checks(message, KITCHEN) == [check_id]


@pytest.mark.parametrize(
    ("message", "check_id"),
    [
        ("I've been thinking about the kitchen. What's its estimate total without the general works?", "1.5"),
        ("About the oven we ordered: when does it come?", "1.2"),
    ],
)
def test_a_question_leaning_on_the_sentence_before_is_never_several(message: str, check_id: str) -> None:
    assert asked_checks(message, KITCHEN) in ([], [check_id])  # a pronoun names no check: nothing to refuse


@pytest.mark.parametrize(
    "message",
    [
        "Thanks, that's all for now.",
        "Great — the bathroom estimate is noted.",
        "I picked the fridge colour.",
        "",
    ],
)
def test_a_message_that_asks_nothing_names_no_check(message: str) -> None:
    assert asked_checks(message, KITCHEN) == []


@pytest.mark.parametrize(
    "benchmark", ["benchmarks/max", "benchmarks/multiday", "benchmarks/demo", "tests/benchmarks/full"]
)
def test_every_shipped_check_asked_as_written_asks_itself_alone(benchmark: str) -> None:
    bench = load_benchmark(ROOT / benchmark)
    for phase in bench.phases:
        questions = {c.id: render_templates(c.question, date(2026, 3, 1)) for c in phase.checks}
        for check_id, question in questions.items():
            search = f"Please search your memory and our earlier conversation: {question}"
            assert asked_checks(question, questions) == [check_id], question
            assert asked_checks(search, questions) == [check_id], search


# ---- the contract: a grade after such a message is refused, naming both -----------------------------

CHAPTER = """Author comment: the kitchen sheet, then questions that share words.

## Telling
```js
vars.require_all_facts = "kitchen";
```
Tell the `kitchen` sheet.

## Asking
Ask about the kitchen, one question at a time.
""" + "".join(f"❓ {cid} [RECALL] {q} Correct answer: see the sheet.\n" for cid, q in KITCHEN.items())

SHEET = """# Kitchen

## 1. Appliances
1.1 The oven costs $900 and comes on Tuesday
1.2 The fridge is sage green
"""


def kitchen_benchmark(root: Path) -> Path:
    folder = root / "benchmarks" / "kitchen"
    folder.mkdir(parents=True)
    (folder / "benchmark.json").write_text('{"title": "Kitchen", "chapters": ["chapter1.md"]}')
    (folder / "instructions.md").write_text("You are Kim. You write short messages.\n")
    (folder / "profile.md").write_text("# Kim\n\n## 1. About me\n1.1 Kim Park, a nurse in Cardiff\n")
    (folder / "kitchen.md").write_text(SHEET)
    (folder / "chapter1.md").write_text(CHAPTER)
    return folder.parent


async def asking(tmp_path: Path) -> Run:
    """A run of the kitchen benchmark in its second phase, the sheet told."""
    config = make_config(
        tmp_path, {"r": {"benchmark": "kitchen", "agent": FORGETFUL}}, benchmarks=kitchen_benchmark(tmp_path)
    )
    run = build_run(config, "r", tune=fast)
    await run._initialise()
    await call(run, "facts_read", sheet="kitchen")
    await call(
        run, "send_message", text="The oven costs $900 and comes on Tuesday. The fridge is sage green."
    )
    await call(run, "facts_mark_told", sheet="kitchen", ids=["1.1", "1.2"])
    await call(run, "next_phase")
    return run


async def call(run: Run, name: str, **args: Any) -> str:
    return await dispatch(run, name, args)


async def grade(run: Run, check_id: str) -> str:
    return await call(
        run, "log_evaluation", check_id=check_id, score=10, attempt=1, answer="as told", comment=""
    )


async def closed(run: Run) -> None:
    await run.recorder.writer.flush()
    run.recorder.transcript.close()


@pytest.mark.parametrize(
    "message",
    [
        "What's the oven's price and which day will it be delivered?",
        "Two quick ones: a) the oven's price b) the delivery day",
        "1. What's the oven's price\n2. When is it delivered",
        "What's the oven's price? Also, the delivery day.",
        "What's the oven's price — and the delivery day?",
    ],
)
async def test_a_grade_after_two_checks_in_one_message_is_refused_naming_both(
    tmp_path: Path, message: str
) -> None:
    run = await asking(tmp_path)
    await call(run, "send_message", text=message)
    with pytest.raises(ToolError) as refused:
        await grade(run, "1.1")
    assert "asked several checks at once (1.1, 1.2)" in str(refused.value)
    assert "one question per message" in str(refused.value)
    assert not run.state.evaluations  # nothing counted
    await call(run, "send_message", text="Sorry — one at a time: what did the oven cost?")
    assert "Logged 1.1" in await grade(run, "1.1")
    await closed(run)


async def test_one_question_with_and_inside_is_graded(tmp_path: Path) -> None:
    run = await asking(tmp_path)
    await call(run, "send_message", text="What did I pay for the hallway tile and its laying together?")
    assert "Logged 1.3" in await grade(run, "1.3")
    phase = run.current_phase()
    assert checks_asked("What's the oven's price and its delivery day?", phase, run.state) == ["1.1", "1.2"]
    await closed(run)
