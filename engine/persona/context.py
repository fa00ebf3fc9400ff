"""The persona's context: the system prompt, the message history and its compaction (SPEC §4)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

from engine.models.base import Message
from engine.models.tokens import count_tokens, is_estimate


def system_prompt_template() -> str:
    return resources.files("engine.persona").joinpath("system.md").read_text(encoding="utf-8")


def build_system_prompt(instructions: str, profile: str, sheet_names: list[str], virtual_time: bool) -> str:
    """The universal prompt, the benchmark's instructions under "Your scenario", the live profile."""
    sheets = ", ".join(f"`{n}`" for n in sheet_names if n != "profile") or "(none)"
    parts = [
        system_prompt_template().rstrip(),
        "# Your scenario\n\n" + (instructions.strip() or "(no notes)"),
        "# Your profile\n\nThis is you, always current (sheet `profile`):\n\n" + profile.strip(),
        f"# Fact sheets\n\nSheets you can read with facts_read: {sheets}.",
    ]
    if not virtual_time:
        parts.append("This scenario runs in real time: `wait` is not available.")
    return "\n\n".join(parts) + "\n"


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


def compact(
    system: str,
    messages: list[Message],
    phase_starts: list[int],
    max_tokens: int,
    trim_to_tokens: int,
    reinjected: Callable[[], str],
) -> Compacted | None:
    """Cut the history at a phase boundary when it has reached ``max_tokens``.

    Keeps the latest phases whose messages total at most ``trim_to_tokens`` (always at least the current
    phase) and puts a message with the live profile and loaded sheets in front. None when no cut is due
    or possible. ``reinjected`` renders the live profile and sheets (only when a cut is made).
    """
    if len(system) + sum(len(str(m.get("content") or "")) + len(str(m.get("tool_calls") or "")) for m in messages) < max_tokens:
        return None  # a token is at least one character: far below the limit, no need to count
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
            "[Platform note: your earlier conversation was cut to save space. The assistant still has it. "
            "Your current profile and the sheets you had loaded follow.]\n\n" + reinjected()
        ),
    }
    new_messages = [note, *kept]
    new_starts = [0] + [i - cut + 1 for i in phase_starts if i >= cut]
    after = count_tokens([{"role": "system", "content": system}, *new_messages])
    return Compacted(new_messages, sorted(set(new_starts)), before, after, is_estimate())
