"""``scripted/agent``: a deterministic model for real agents (Hermes, OpenClaw, Letta Code) to run on, offline.

Served by ``engine.models.server``; the agent sends it its whole request (system prompt, history, tool
schemas) and this model decides from that alone, so the agent's own machinery is what gets exercised:

- "remember ..." / "note ..." (with the plan ``save``: any statement) with a memory-writing tool on offer:
  Hermes gets a ``memory`` call (``add``, or ``replace`` of the entry the fact updates); OpenClaw gets ``read``
  of ``MEMORY.md`` then ``write`` of it with the fact appended (or ``edit`` of the line it updates); Letta Code the
  same with its ``Read``/``Write``/``Edit`` in its memory directory, then a ``Bash`` ``git commit`` of it
  (``scripted_files.py``). After the
  last write's tool result it answers ``Saved.`` A plan (``scripted/agent?plan=skip``) plants a memory fault:
  an update skipped, reverted, kept twice, or a question answered from nothing (``scripted_memory.py``).
- a compaction request (a summarisation prompt listing ``## `` headings) gets a summary that echoes every
  heading (OpenClaw's safeguard rejects summaries without them) with the conversation's statements.
- "what is the date/time today" gets the date found in the latest timestamped user message
  (``[Mon 2026-11-30 07:43 UTC] ...``) or the system prompt (``Conversation started: Monday, ...``), so
  the agent's (possibly faked) clock is visible: ``Today is 2026-11-30 (Monday, November 30, 2026).``
- any other question gets the best lexically matching line of the context (system prompt with injected
  memory, and earlier messages); a statement gets ``Noted.``
- ``scripted/agent?reply_tokens=600``: every reply (never a tool call or a compaction's summary) is that long,
  its own sentence first, then prose that elaborates it and states no figure (``scripted_padding.py``), so an
  agent's context grows as with a real model's replies.

Letta Code's ``<system-reminder>`` blocks are not the user's words: they are left out of a message's text.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from datetime import datetime
from typing import Any

from engine.models.base import Completion, Message, ToolCall, ToolSchema, Usage
from engine.models.scripted_files import FileTools, commit_call, file_tools, is_commit, plain_file_text
from engine.models.scripted_memory import (
    PLANS,
    file_tool_plan,
    look_in_notes,
    memory_tool_plan,
    planted_answer,
)
from engine.models.scripted_padding import pad
from engine.models.scripted_recall import content_words
from engine.models.tokens import count_text, count_tokens

NAME = "scripted/agent"
SAVED = "Saved."
NOTED = "Noted."
DONT_KNOW = "I don't know — you didn't tell me that."

_REMEMBER = re.compile(r"^\s*(?:please\s+)?(?:remember|note)\b[:,]?\s*(?:that\s+)?(?P<fact>.+)", re.I | re.S)
_DATE_QUESTION = re.compile(
    r"\b(?:what(?:'s| is)\s+(?:the\s+|today's\s+)?(?:date|day|time)|what\s+day\s+is\s+it|today's\s+date)\b",
    re.I,
)
_STAMP = re.compile(r"^\s*\[(?P<stamp>[^\]\n]{4,80})\]\s*")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_STARTED = re.compile(r"Conversation started:\s*(?:[A-Za-z]+,\s*)?(?P<date>[A-Za-z]+ \d{1,2}, \d{4})")
_HEADING = re.compile(r"^##\s+\S.*$", re.M)
_SUMMARY_REQUEST = re.compile(r"summar(?:y|ize|ise|isation|ization)", re.I)
_INTERNAL = ("<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT", "<<<BEGIN_")
_RUNTIME_TRAILER = re.compile(r"\n\s*Runtime: agent=.*$", re.S)
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)  # Letta's, before the user's words
_SENTENCES = re.compile(r"(?<=[.!])\s+|\n+")
_SEARCH_WORDS = frozenset({"search", "memory", "memorie", "earlier", "conversation", "note", "check", "look"})
_BOILERPLATE_LINE = re.compile(r"^\s*(?:#|<!--|\||```|-{3,}|={3,}|═)")


def text_of(content: Any) -> str:
    """A message's text: a string, or the joined text parts of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _is_internal(text: str) -> bool:
    return text.lstrip().startswith(_INTERNAL)


def clean_user_text(text: str) -> str:
    """A user message without what the agent added to it: its ``<system-reminder>`` blocks (Letta Code), its
    timestamp prefix and its runtime trailer."""
    return _RUNTIME_TRAILER.sub("", _STAMP.sub("", _REMINDER.sub("", text).lstrip(), count=1)).strip()


def last_user_index(messages: list[Message]) -> int:
    """Index of the latest user message written by the user (skipping agents' internal-context turns)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") == "user" and not _is_internal(text_of(message.get("content"))):
            return index
    return -1


def _tool_names(tools: list[ToolSchema] | None) -> set[str]:
    return {str(t.get("function", {}).get("name")) for t in tools or [] if isinstance(t, dict)}


def _calls_in_turn(messages: list[Message], start: int) -> list[tuple[str, dict[str, Any]]]:
    """(tool name, parsed arguments) of the assistant's tool calls after the user message at ``start``."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for message in messages[start + 1 :]:
        for call in message.get("tool_calls") or []:
            function = call.get("function", {}) if isinstance(call, dict) else {}
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except ValueError:
                arguments = {}
            calls.append((str(function.get("name", "")), arguments if isinstance(arguments, dict) else {}))
    return calls


class _Call:
    counter = 0

    @classmethod
    def make(cls, name: str, arguments: dict[str, Any]) -> ToolCall:
        cls.counter += 1
        return ToolCall(
            id=f"call_mmb_{cls.counter}", name=name, arguments=json.dumps(arguments, ensure_ascii=False)
        )


def remember_step(
    messages: list[Message],
    start: int,
    fact: str,
    tools: list[ToolSchema] | None,
    plan: frozenset[str] = frozenset(),
) -> ToolCall | str | None:
    """The next step of saving ``fact`` (``engine/models/scripted_memory.py``, with the plan's faults): a tool
    call, ``Saved.`` once every call is made, or None when no memory tool is offered."""
    names = _tool_names(tools)
    made = _calls_in_turn(messages, start)
    if "memory" in names:
        planned = memory_tool_plan(messages[:start], fact, plan)
        done = sum(1 for name, _ in made if name == "memory")
        return _Call.make("memory", planned[done]) if done < len(planned) else SAVED
    found = file_tools(messages, tools)
    if found is None:
        return None
    if isinstance(found, tuple):  # the memory directory is asked of the shell first
        return _Call.make(*found) if not _asked(made, found) else None
    return _file_step(messages, start, fact, plan, found, made)


def _asked(made: list[tuple[str, dict[str, Any]]], call: tuple[str, dict[str, Any]]) -> bool:
    """Whether ``call`` was made in this turn already (its answer did not name a directory: give up)."""
    return call in made


def _file_step(
    messages: list[Message],
    start: int,
    fact: str,
    plan: frozenset[str],
    tools: FileTools,
    made: list[tuple[str, dict[str, Any]]],
) -> ToolCall | str:
    """The next file call (a read, a write, then the commit of a memory directory), or ``Saved.``."""
    step = file_tool_plan(messages, start, fact, plan, tools)
    if isinstance(step, str):
        assert tools.read is not None  # a read is asked only where a read tool is offered
        return _Call.make(tools.read, {tools.read_path: step})
    done = sum(1 for name, _ in made if tools.is_write(name))
    if done < len(step):
        return _Call.make(*step[done])
    commit = commit_call(tools)
    if step and commit is not None and not any(is_commit(tools, *call) for call in made):
        return _Call.make(*commit)
    return SAVED


def _summary_prompt(messages: list[Message]) -> str | None:
    """The text of a compaction request (the last user or system message asking for a summary)."""
    for message in reversed(messages[-3:]):
        text = text_of(message.get("content"))
        if message.get("role") in ("user", "system") and _SUMMARY_REQUEST.search(text[:4000] + text[-6000:]):
            lowered = text.lower()
            if len(_HEADING.findall(text)) >= 3 and (
                "checkpoint" in lowered or "section headings" in lowered
            ):
                return text
    return None


def summary(prompt: str, messages: list[Message]) -> str:
    """A summary echoing the prompt's ``## `` headings in order, with the conversation's statements."""
    headings: list[str] = []
    for heading in _HEADING.findall(prompt):
        heading = heading.strip()
        if heading not in headings:
            headings.append(heading)
    facts = _statements(prompt) + [
        s
        for m in messages[:-1]
        if m.get("role") == "user"
        for s in _statements(clean_user_text(text_of(m.get("content"))))
    ]
    unique = list(dict.fromkeys(f[:300] for f in facts if not f.startswith("##")))[-40:]
    lines = []
    for index, heading in enumerate(headings):
        lines.append(heading)
        lines.append("\n".join(f"- {fact}" for fact in unique) if index == 0 and unique else "None.")
        lines.append("")
    return "\n".join(lines).strip() or "Summary: " + "; ".join(unique)


def _statements(text: str) -> list[str]:
    found = []
    for line in _SENTENCES.split(text):
        line = line.strip().lstrip("-•*§ ").strip()
        if len(line) > 3 and "?" not in line and not _BOILERPLATE_LINE.match(line):
            match = _REMEMBER.match(line)
            found.append(match.group("fact").strip() if match else line)
    return found


def today(messages: list[Message], user_index: int) -> str | None:
    """The agent's idea of today: the latest stamped user message, else 'Conversation started:'."""
    for message in reversed(messages[: user_index + 1]):
        if message.get("role") != "user":
            continue
        stamp = _STAMP.match(text_of(message.get("content")))
        if stamp:
            iso = _ISO_DATE.search(stamp.group("stamp"))
            if iso:
                moment = datetime(int(iso.group(1)), int(iso.group(2)), int(iso.group(3)))
                return f"{moment:%Y-%m-%d} ({moment:%A, %B} {moment.day}, {moment.year})"
    for message in messages:
        if message.get("role") == "system":
            started = _STARTED.search(text_of(message.get("content")))
            if started:
                moment = datetime.strptime(started.group("date"), "%B %d, %Y")
                return f"{moment:%Y-%m-%d} ({moment:%A, %B} {moment.day}, {moment.year})"
    return None


def recall(question: str, messages: list[Message], user_index: int) -> str | None:
    """The context line sharing the most (rarity-weighted) content words with ``question`` (a request to search
    looks for what it asks, not for the words "search your memory")."""
    wanted = content_words(question) - _SEARCH_WORDS or content_words(question)
    if not wanted:
        return None
    candidates: list[str] = []
    for index, message in enumerate(messages):
        if index == user_index or message.get("role") not in ("system", "user", "tool"):
            continue
        text = text_of(message.get("content"))
        if _is_internal(text):
            continue
        role = message.get("role")
        text = clean_user_text(text) if role == "user" else plain_file_text(text) if role == "tool" else text
        candidates.extend(_statements(text))
    frequency: Counter[str] = Counter()
    words = [content_words(c) for c in candidates]
    for found in words:
        frequency.update(found & wanted)
    best: tuple[float, str] | None = None
    for candidate, found in zip(candidates, words, strict=True):
        shared = found & wanted
        if not shared:
            continue
        score = sum(1.0 / math.sqrt(frequency[w]) for w in shared)
        if best is None or score >= best[0]:
            best = (score, candidate)
    return best[1] if best else None


def fact_to_save(question: str, plan: frozenset[str]) -> str | None:
    """The fact a message asks to save ("remember …"); with the ``save`` plan, any statement."""
    remember = _REMEMBER.match(question)
    if remember:
        return remember.group("fact").strip()
    statement = "?" not in question and len(question.strip()) > 3 and not _DATE_QUESTION.search(question)
    return question.strip() if "save" in plan and statement else None


def respond(
    messages: list[Message], tools: list[ToolSchema] | None, plan: frozenset[str] = frozenset()
) -> ToolCall | str:
    """The next step for this request: a tool call or the reply text."""
    prompt = _summary_prompt(messages)
    if prompt is not None:
        return summary(prompt, messages)
    index = last_user_index(messages)
    if index < 0:
        return NOTED
    question = clean_user_text(text_of(messages[index].get("content")))
    fact = fact_to_save(question, plan)
    if fact:
        step = remember_step(messages, index, fact, tools, plan)
        return step if step is not None else NOTED
    if _DATE_QUESTION.search(question):
        date = today(messages, index)
        return f"Today is {date}." if date else "I don't know today's date."
    if "?" in question:
        found = (
            file_tools(messages, tools) if "twice" in plan and "memory" not in _tool_names(tools) else None
        )
        listed = found if isinstance(found, FileTools) else None
        if listed is not None and (look := look_in_notes(messages, index, listed, plan)) is not None:
            assert listed.read is not None  # look_in_notes reads only with a read tool
            return _Call.make(listed.read, {listed.read_path: look})
        return planted_answer(question, plan) or recall(question, messages, index) or DONT_KNOW
    return NOTED


class ScriptedAgentModel:
    """A ChatModel for real agents: deterministic, tool-using, reads only what the agent sends."""

    def __init__(self, plan: frozenset[str] = frozenset(), reply_tokens: int = 0) -> None:
        if plan - PLANS:
            raise ValueError(
                f"unknown memory plan {sorted(plan - PLANS)[0]!r} (known: {', '.join(sorted(PLANS))})"
            )
        self.name = NAME
        self.plan = plan  # the memory faults it plants (``engine/models/scripted_memory.py``)
        self.reply_tokens = reply_tokens  # replies padded to about this many tokens (``scripted_padding.py``)

    def _padded(self, step: str, messages: list[Message]) -> str:
        """A reply to the user at the length asked for (a compaction's summary is left as it is)."""
        if not self.reply_tokens or _summary_prompt(messages) is not None:
            return step
        index = last_user_index(messages)
        message = clean_user_text(text_of(messages[index].get("content"))) if index >= 0 else ""
        return pad(step, message, self.reply_tokens)

    async def complete(self, messages: list[Message], tools: list[ToolSchema] | None = None) -> Completion:
        """One step: a memory tool call, or a reply; usage counts the whole request like a real model."""
        step = respond(messages, tools, self.plan)
        if isinstance(step, str):
            step = self._padded(step, messages)
        prompt_tokens = (
            count_tokens(messages) + count_text(json.dumps(tools)) if tools else count_tokens(messages)
        )
        if isinstance(step, ToolCall):
            usage = Usage(prompt_tokens=prompt_tokens, completion_tokens=count_text(step.arguments))
            return Completion(content=None, tool_calls=[step], usage=usage)
        return Completion(
            content=step, usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=count_text(step))
        )
