"""The judges behind one ``grade`` interface: the rules judge (``scripted/judge``, offline, the one the scripted
persona uses) and any chat model graded with the judge prompt — the persona's grading rules (read from
``engine/persona/system.md``, where they are written once and which the rules judge implements) and a JSON
answer, parsed robustly: a reply that cannot be read is a ``Grade`` with an ``error``, never an exception. A
score of ``PASS_SCORE`` (7/10) or more counts as correct.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from engine.config import Config, did_you_mean
from engine.models.base import ChatModel, Message, ModelError
from engine.models.rules_judge import judge as rules_judge
from engine.models.usage import UsageMeter

RULES_JUDGE = "scripted/judge"
PASS_SCORE = 7.0  # a judge score of 7/10 or more counts as "correct"
_SYSTEM_MD = Path(__file__).resolve().parent.parent / "persona" / "system.md"


@dataclass(frozen=True)
class Grade:
    """A judge's grade of one answer; ``error`` when the judge gave none that could be read."""

    score: float | None
    comment: str = ""
    error: str | None = None

    @property
    def passed(self) -> bool:
        return self.score is not None and self.score >= PASS_SCORE


class Judge(Protocol):
    """Grades one answer from the question and the correct answer."""

    name: str

    async def grade(self, question: str, expected: str, answer: str) -> Grade: ...


class RulesJudge:
    """The offline rules judge (``engine/models/rules_judge.py``), the one the scripted persona uses;
    ``latency``: seconds slept per grade, as a config entry's ``latency`` slows the scripted models."""

    def __init__(self, name: str = RULES_JUDGE, latency: float = 0.0) -> None:
        self.name = name
        self.latency = latency

    async def grade(self, question: str, expected: str, answer: str) -> Grade:
        if self.latency:
            await asyncio.sleep(self.latency)
        verdict = rules_judge(question, expected, answer)
        return Grade(verdict.score, verdict.comment)


def grading_rules(system_md: str) -> str:
    """The persona's grading rules, as written in its system prompt (said once, read here): the bullets of
    step 2 of "Checking the assistant"."""
    lines = system_md.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("2. Compare the reply")), None)
    rules: list[str] = []
    for line in lines[start + 1 :] if start is not None else []:
        if line.startswith("   - "):
            rules.append(line.strip())
        elif rules and line.startswith("     "):
            rules[-1] += " " + line.strip()
        elif rules:
            break
    if not rules:
        raise ValueError("engine/persona/system.md: the grading rules (step 2 of 'Checking') were not found")
    return "\n".join(rules)


def judge_messages(question: str, expected: str, answer: str) -> list[Message]:
    """The judge prompt: the persona's grading rules, the check, and the answer to grade."""
    rules = grading_rules(_SYSTEM_MD.read_text(encoding="utf-8"))
    system = (
        "You grade one answer of an AI assistant to a question about what its user told it earlier.\n"
        'Grade it from 0 to 10 against the correct answer, by these rules ("you" is the user):\n'
        f"{rules}\n"
        "Answer with one JSON object and nothing else: "
        '{"score": <number from 0 to 10>, "comment": "<one short sentence>"}'
    )
    user = f"Question: {question}\nCorrect answer: {expected}\nThe assistant's reply:\n{answer}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def parse_judge_reply(text: str | None) -> Grade:
    """A judge model's reply as a Grade: ``{"score": n, "comment": ...}``, in a code fence or among other
    text; anything else is an error naming what was wrong."""
    if not text or not text.strip():
        return Grade(None, error="empty reply")
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    start, end = body.find("{"), body.rfind("}")
    if start < 0:
        return Grade(None, error=f"no JSON object in the reply: {_clip(text)}")
    try:
        data = json.loads(body[start : end + 1] if end > start else body[start:])
    except json.JSONDecodeError as exc:
        return Grade(None, error=f"malformed JSON ({exc.msg}): {_clip(text)}")
    if not isinstance(data, dict) or "score" not in data:
        return Grade(None, error=f"no score in the reply: {_clip(text)}")
    raw = data["score"]
    try:
        score = float(raw) if not isinstance(raw, bool) else math.nan
    except (TypeError, ValueError):
        score = math.nan
    if not 0 <= score <= 10:  # also rejects nan
        return Grade(None, error=f"score {raw!r} is not a number from 0 to 10")
    comment = data.get("comment", "")
    return Grade(score, comment if isinstance(comment, str) else json.dumps(comment))


def _clip(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class ModelJudge:
    """A chat model grading with ``judge_messages``; a failed call or an unreadable reply is an error."""

    def __init__(self, model: ChatModel) -> None:
        self.model = model
        self.name = model.name

    async def grade(self, question: str, expected: str, answer: str) -> Grade:
        try:
            completion = await self.model.complete(judge_messages(question, expected, answer))
        except ModelError as exc:
            return Grade(None, error=f"model error: {exc}")
        return parse_judge_reply(completion.content)


def make_judge(name: str | None, config: Config | None, meter: UsageMeter | None = None) -> Judge:
    """The rules judge for ``None`` or ``scripted/judge`` (or a config entry naming it, its ``latency``
    kept); else the model ``name`` in the role ``judge``, its tokens counted into ``meter``. ModelError for
    an unknown name, with the closest known one (``scripted/judge`` among them)."""
    if name is None or name == RULES_JUDGE:
        return RulesJudge()
    spec = config.models.get(name) if config else None
    if spec is not None and spec.base_url is None and spec.model == RULES_JUDGE:
        return RulesJudge(name, spec.latency)
    from engine.models.registry import is_scripted_name, known_model_names, make_model

    if spec is None and not is_scripted_name(name):
        known = [*known_model_names(config), RULES_JUDGE]
        raise ModelError(f"unknown model {name!r} ({did_you_mean(name, known)}known: {', '.join(known)})")
    return ModelJudge(make_model(name, config or Config(), "judge", meter))
