"""``scripted/persona``: drives the persona tools through any benchmark without an LLM.

Stateless: every decision is derived from the message history (the ``echo`` slip also remembers the phases it
echoed in: ``EchoSlip``), so it can also be served over HTTP.
Per phase it carries out, in the order of the phase text: ``Edit <sheet> <id>: <text>`` and
``Add to <sheet> category <n>: <text>`` directives, sheets to tell (named in backticks or required by
the gates: read, tell untold facts verbatim in batches of three, mark told), ``Say``/``Tell`` lines
(sent verbatim without the verb), ``HH:MM`` anchors (``wait`` first), and check lines (asked verbatim,
graded by the rules judge, a memory search and attempt 2 when the agent says it does not know). Then it
calls ``next_phase``, and answers a gate error by doing what it names.

This module owns the decisions: the next step of each action of the phase (telling a sheet, asking and
grading a check, with the slips played inside them) and the usage it reports. Reading the history is
``scripted_history.py``, answering a gate error ``scripted_gates.py``, the slip names and the slips that
reshape a whole step ``scripted_slips.py``.
"""

from __future__ import annotations

import json
import re

from engine.models.base import Completion, Message, ToolCall, ToolSchema
from engine.models.persona_plan import Action, plan_phase
from engine.models.prompt_usage import PrefixCache
from engine.models.rules_judge import judge
from engine.models.scripted_gates import answer_gate
from engine.models.scripted_history import Call, Step, current_phase, readable_sheets, reply_body
from engine.models.scripted_history import calls_since as _calls_since
from engine.models.scripted_slips import SLIPS, EchoSlip, check_slips, gate_named, skipped_check

__all__ = ["SLIPS", "ScriptedPersonaModel", "_calls_since"]

_DONT_KNOW = "says it does not know; asking it to search"
_SEARCH_PREFIX = "Please search your memory and our earlier conversation:"
BATCH = 3


class ScriptedPersonaModel:
    """A deterministic ChatModel for the persona role."""

    name = "scripted/persona"

    def __init__(self, slips: frozenset[str] = frozenset()) -> None:
        check_slips(slips)
        self.slips = slips
        self._echo = EchoSlip(slips)
        self._cache = PrefixCache()  # usage as a prefix-caching provider would report it

    async def complete(self, messages: list[Message], tools: list[ToolSchema] | None = None) -> Completion:
        calls = self.decide(messages)
        tool_calls = [
            ToolCall(id=f"call_{len(messages)}_{i}", name=n, arguments=json.dumps(a, ensure_ascii=False))
            for i, (n, a) in enumerate(calls)
        ]
        completion = Completion(content=None, tool_calls=tool_calls)
        return completion.model_copy(update={"usage": self._cache.usage(messages, tools, completion)})

    def decide(self, messages: list[Message]) -> Step:
        start, phase_text = self._phase(messages)
        sheets = self._sheets(messages)
        calls = _calls_since(messages, start)
        plan = plan_phase(phase_text, sheets)
        skipped = skipped_check(self.slips, plan)
        for action in plan:
            if action.kind == "check" and action.args["id"] == skipped and not gate_named(calls, skipped):
                continue
            step = self._next_for(action, calls)
            if step:
                return self._echo.apply(step, messages, start)
        # everything in the text is done: answer the last gate error, or move on
        last_next = next((c for c in reversed(calls) if c.name == "next_phase"), None)
        if last_next and last_next.result and last_next.result.startswith("ERROR") and calls[-1] is last_next:
            step = answer_gate(last_next.result, calls, plan, self._check, self._tell)
            if step:
                return step
        return [("next_phase", {})]

    # ---- reading the history (kept as methods: a subclass may read it the same way) -----------

    def _phase(self, messages: list[Message]) -> tuple[int, str]:
        return current_phase(messages)

    def _sheets(self, messages: list[Message]) -> set[str]:
        return readable_sheets(messages)

    # ---- one action --------------------------------------------------------------------------

    def _next_for(self, action: Action, calls: list[Call]) -> Step | None:
        a = action.args
        match action.kind:
            case "wait":
                done = any(c.name == "wait" and c.args.get("until") == a["until"] for c in calls)
                return None if done else [("wait", {"until": a["until"]})]
            case "edit":
                done = any(
                    c.name == "facts_edit"
                    and c.args.get("sheet") == a["sheet"]
                    and c.args.get("id") == a["id"]
                    for c in calls
                )
                update = ("send_message", {"text": f"Update: {a['text']}"})
                if "skip_edit" in self.slips and a["text"].strip() != "—":
                    told = any(c.name == "send_message" and c.args == update[1] for c in calls)
                    return None if told else [update]  # told, never edited: the gate must say so
                if done:
                    return None
                if a["text"].strip() == "—":
                    return [("facts_edit", dict(a))]
                mark = ("facts_mark_told", {"sheet": a["sheet"], "ids": [a["id"]]})
                if "skip_retell" in self.slips:
                    return [("facts_edit", dict(a)), mark]  # marked told, never told: refused
                return [("facts_edit", dict(a)), update, mark]
            case "add":
                added = next(
                    (c for c in calls if c.name == "facts_add" and c.args.get("text") == a["text"]), None
                )
                if added is None:
                    return [("facts_add", dict(a)), ("send_message", {"text": f"Also: {a['text']}"})]
                m = re.match(r"Added [\w-]+ (\d+\.\d+):", added.result or "")
                after = calls[
                    calls.index(added) + 1 :
                ]  # an id freed and reused in this phase was told before
                marked = any(
                    c.name == "facts_mark_told"
                    and m
                    and m.group(1) in (c.args.get("ids") or [])
                    and not (c.result or "").startswith("ERROR")
                    for c in after
                )
                return (
                    None
                    if (m is None or marked)
                    else [("facts_mark_told", {"sheet": a["sheet"], "ids": [m.group(1)]})]
                )
            case "say":
                done = any(c.name == "send_message" and c.args.get("text") == a["text"] for c in calls)
                return None if done else [("send_message", {"text": a["text"]})]
            case "tell":
                return self._tell(a["sheet"], calls)
            case "check":
                return self._check(a["id"], a["q"], a["a"], calls)
        return None

    def _tell(self, sheet: str, calls: list[Call]) -> Step | None:
        if not any(c.name == "facts_read" and c.args.get("sheet") == sheet for c in calls):
            return [("facts_read", {"sheet": sheet})]
        latest = next(
            (
                c
                for c in reversed(calls)
                if c.name in ("facts_get_untold", "facts_mark_told", "facts_read")
                and c.args.get("sheet") == sheet
            ),
            None,
        )
        if latest is None or latest.name != "facts_get_untold" or latest.result is None:
            return [("facts_get_untold", {"sheet": sheet})]
        if latest.result.startswith("All facts") or latest.result.startswith("ERROR"):
            return None
        facts = [line.split(" ", 1) for line in latest.result.splitlines() if re.match(r"^\d+\.\d+ ", line)]
        batch = facts[:BATCH]
        if not batch:
            return None
        text = " ".join(f[1].strip().rstrip(".") + "." for f in batch)
        return [
            ("send_message", {"text": text}),
            ("facts_mark_told", {"sheet": sheet, "ids": [f[0] for f in batch]}),
            ("facts_get_untold", {"sheet": sheet}),
        ]

    def _check(self, check_id: str, question: str, expected: str, calls: list[Call]) -> Step | None:
        logged = [
            c
            for c in calls
            if c.name == "log_evaluation"
            and str(c.args.get("check_id")) == check_id
            and not (c.result or "").startswith("ERROR")
        ]
        if any(
            c.args.get("attempt") == 2 or not str(c.args.get("comment", "")).startswith(_DONT_KNOW)
            for c in logged
        ):
            return None
        asked = [
            c
            for c in calls
            if c.name == "send_message" and c.args.get("text") == question and c.result is not None
        ]
        if not asked:
            if "grade_ahead" in self.slips and not self._tried(calls, check_id, 1):
                return [
                    (
                        "log_evaluation",
                        {
                            "check_id": check_id,
                            "score": 10,
                            "attempt": 1,
                            "answer": "(not asked yet)",
                            "comment": "graded ahead",
                        },
                    )
                ]
            return [("send_message", {"text": question})]
        search_text = f"{_SEARCH_PREFIX} {question}"
        searched = [
            c
            for c in calls
            if c.name == "send_message" and c.args.get("text") == search_text and c.result is not None
        ]
        if searched:
            reply = reply_body(searched[-1].result)
            verdict = judge(question, expected, reply)
            return [
                (
                    "log_evaluation",
                    {
                        "check_id": check_id,
                        "score": verdict.score,
                        "attempt": 2,
                        "answer": reply[:300],
                        "comment": f"after a search: {verdict.comment}",
                    },
                )
            ]
        if logged:  # attempt 1 said it does not know: now the search
            return [("send_message", {"text": search_text})]
        reply = reply_body(asked[-1].result)
        verdict = judge(question, expected, reply)
        grade = {
            "check_id": check_id,
            "score": verdict.score,
            "attempt": 1,
            "answer": reply[:300],
            "comment": verdict.comment,
        }
        if verdict.dont_know:
            grade["comment"] = f"{_DONT_KNOW}: {verdict.comment}"
        if "attempt2_first" in self.slips and not self._tried(calls, check_id, 2):
            return [("log_evaluation", {**grade, "attempt": 2})]
        return [("log_evaluation", grade)]

    @staticmethod
    def _tried(calls: list[Call], check_id: str, attempt: int) -> bool:
        return any(
            c.name == "log_evaluation"
            and str(c.args.get("check_id")) == check_id
            and c.args.get("attempt") == attempt
            for c in calls
        )
