"""The persona's context: the system prompt, the message history and its compaction (SPEC §4)."""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from engine.events import PersonaCompacted
from engine.models.base import Message
from engine.models.tokens import TokenTally, is_estimate
from engine.sanitize import shorten_reply
from engine.state import RunState


@cache
def system_prompt_template() -> str:
    return resources.files("engine.persona").joinpath("system.md").read_text(encoding="utf-8")


def build_system_prompt(instructions: str, profile: str, sheet_names: list[str], virtual_time: bool) -> str:
    """The universal prompt, the benchmark's instructions under "Your scenario", the live profile.

    The "# Time" section (and with it any mention of ``wait``) is there only in virtual-time scenarios.
    """
    sheets = ", ".join(f"`{n}`" for n in sheet_names if n != "profile") or "(none)"
    parts = [
        _universal(virtual_time),
        "# Your scenario\n\n" + (instructions.strip() or "(no notes)"),
        "# Your profile\n\nThis is you as the story begins (sheet `profile`; a change of it is told to you when it "
        "happens, and facts_read shows it as it is now):\n\n" + profile.strip(),
        f"# Fact sheets\n\nSheets you can read with facts_read: {sheets}.",
    ]
    return "\n\n".join(parts) + "\n"


@cache
def _universal(virtual_time: bool) -> str:
    universal = system_prompt_template()
    return (universal if virtual_time else drop_section(universal, "Time")).rstrip()


def drop_section(markdown: str, heading: str) -> str:
    """``markdown`` without its ``# <heading>`` section: from that line to the next ``# `` heading or the end."""
    kept: list[str] = []
    dropping = False
    for line in markdown.splitlines(keepends=True):
        if line.startswith("# "):
            dropping = line[2:].strip() == heading
        if not dropping:
            kept.append(line)
    return "".join(kept)


def prompt_hash(instructions: str) -> str:
    """Identifies the persona prompt a result was produced with (reported with every entry)."""
    return hashlib.sha256((system_prompt_template() + "\n" + instructions).encode()).hexdigest()[:12]


@dataclass
class Compacted:
    messages: list[Message]
    phase_starts: list[int]
    tokens_before: int
    tokens_after: int
    estimated: bool


class HistoryTally(TokenTally):
    """A persona history's running totals: tokens, and the characters the cheap pre-check reads."""

    def __init__(self) -> None:
        super().__init__()
        self._chars = [0]

    def chars(self) -> int:
        return self._chars[-1]

    def _added(self, message: Message) -> None:
        super()._added(message)
        length = len(str(message.get("content") or "")) + len(str(message.get("tool_calls") or ""))
        self._chars.append(self._chars[-1] + length)

    def _cut(self, kept: int) -> None:
        super()._cut(kept)
        del self._chars[kept + 1 :]

    def _moved(self, tally: HistoryTally, start: int) -> None:
        offset = tally._chars[-1] - self._chars[start]
        tally._chars += [total + offset for total in self._chars[start + 1 :]]


# id(state) -> (the state, weakly: its entry goes with it; the history list counted; its totals)
_tallies: dict[int, tuple[weakref.ref[RunState], list[Message], HistoryTally]] = {}


def _state_tally(state: RunState, tally: HistoryTally | None = None) -> HistoryTally:
    """The running totals of the state's persona history: kept while the state lives and its list stays.
    ``tally`` replaces them (those of a compacted history)."""
    key = id(state)
    entry = _tallies.get(key)
    if tally is not None or entry is None or entry[1] is not state.persona_messages:  # new or replaced
        tally = tally or HistoryTally()
        _tallies[key] = (weakref.ref(state, lambda _: _tallies.pop(key, None)), state.persona_messages, tally)
        return tally
    return entry[2]


def _forget(messages: list[Message]) -> None:
    """Drop the totals of a history edited in place."""
    for key in [key for key, entry in _tallies.items() if entry[1] is messages]:
        del _tallies[key]


def compact(
    system: str,
    messages: list[Message],
    phase_starts: list[int],
    max_tokens: int,
    trim_to_tokens: int,
    reinjected: Callable[[], str],
    tally: HistoryTally | None = None,
    tools_tokens: int = 0,
) -> Compacted | None:
    """Cut the history at a phase boundary when it has reached ``max_tokens``.

    Keeps the latest phases whose messages total at most ``trim_to_tokens`` (always at least the current
    phase) and puts a message with the live profile and loaded sheets in front. None when no cut is due
    or possible. ``reinjected`` renders the live profile and sheets (only when a cut is made).
    ``tally`` holds the running totals of this history from the last call (``compact_state`` keeps one per
    state), so that a turn counts only its new messages; without one the whole history is counted.
    ``tools_tokens``: the tool schemas sent with every request, counted against ``max_tokens`` (a provider
    sees them) and in the sizes before and after; never cut.
    """
    if tally is None:
        tally = HistoryTally()
    tally.update(messages)
    if len(system) + tally.chars() + tools_tokens < max_tokens:
        return None  # a token is at least one character: far below the limit, no need to count
    head: Message = {"role": "system", "content": system}
    before = tally.count(0, [head]) + tools_tokens
    if before < max_tokens:
        return None
    candidates = sorted(i for i in set(phase_starts) if 0 < i < len(messages))
    if not candidates:
        return None
    cut = candidates[-1]
    for start in reversed(candidates):
        if tally.count(start) <= trim_to_tokens:
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
    after = tally.count(cut, [head, note]) + tools_tokens
    if after >= before:  # the current phase alone is over the limit: a cut would only swap the note
        return None
    return Compacted(new_messages, sorted(set(new_starts)), before, after, is_estimate())


def pending_tool_calls(messages: list[Message]) -> list[dict[str, Any]]:
    """Tool calls of the last assistant message that have no result yet (after a kill, say)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message["role"] == "assistant":
            answered = {m.get("tool_call_id") for m in messages[index + 1 :] if m["role"] == "tool"}
            return [c for c in message.get("tool_calls") or [] if c["id"] not in answered]
        if message["role"] == "user":
            return []
    return []


def recent_replies(messages: list[Message], reply_prefix: str) -> list[str]:
    """The agent's replies among the last messages of the context (what an echo would copy)."""
    replies: list[str] = []
    for message in reversed(messages[-12:]):
        content = message.get("content") or ""
        if (
            message["role"] in ("tool", "user")
            and isinstance(content, str)
            and content.startswith(reply_prefix)
        ):
            replies.append(content.split("\n\n", 1)[-1])
    return replies


def compact_state(
    state: RunState,
    system: str,
    max_tokens: int,
    trim_to_tokens: int,
    reinjected: Callable[[], str],
    tools_tokens: int = 0,
) -> PersonaCompacted | None:
    """Compact the persona's context in ``state`` if it is due; the event to record, or None."""
    messages, tally = state.persona_messages, _state_tally(state)
    result = compact(
        system, messages, state.phase_starts, max_tokens, trim_to_tokens, reinjected, tally, tools_tokens
    )
    if result is None:
        return None
    state.persona_messages = result.messages
    state.phase_starts = result.phase_starts
    state.persona_compactions += 1
    cut = len(messages) - len(result.messages) + 1  # the note, then the messages from the cut on
    _state_tally(state, tally.with_head(result.messages[0], cut))  # the kept ones are not counted again
    return PersonaCompacted(
        tokens_before=result.tokens_before, tokens_after=result.tokens_after, estimated=result.estimated
    )


def shorten_replies(messages: list[Message], reply_prefix: str, limit: int) -> None:
    """Shorten agent replies in a context saved before replies were shortened (a huge one kept the persona
    stuck, even after a restart)."""
    for message in messages:
        content = message.get("content")
        if isinstance(content, str) and content.startswith(reply_prefix) and len(content) > 2 * limit:
            message["content"] = shorten_reply(content, limit)
            _forget(messages)  # edited in place: its totals are stale
