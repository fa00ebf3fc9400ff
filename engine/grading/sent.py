"""The messages the agent received, as a premise reads them: each logged as its keys (``log_sent``,
``engine/grading/told_values.py``) with the phase it was sent in and its transcript number, and which of them
carried a value (``carriers``), over all of them before a question or only those after a fact's change.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from engine.grading.told_values import KEYS_VERSION, Value, message_keys
from engine.state import RunState, SentMessage

_OLDER = f" {KEYS_VERSION} "  # marks a message logged with this version's keys


def log_sent(state: RunState, n: int, text: str, sent_on: date) -> None:
    """Log a message the agent received (transcript number ``n``, sent on the run's day ``sent_on``) as the
    keys a premise is matched on."""
    keys = message_keys(text, sent_on=sent_on)
    state.sent_log.append(SentMessage(n=n, phase=state.phase_index, keys=" ".join(sorted(keys))))


def covered(state: RunState) -> bool:
    """Whether the log holds every message of the run (a run begun before the log existed is not checked)."""
    return len(state.sent_log) == state.messages_sent


@dataclass(frozen=True)
class Window:
    """The messages that may carry a value: numbers ``1 … before-1``; after a change at message ``c``, only
    those after it or of the phase message ``c`` was sent in."""

    before: int
    changed: int = 0
    phase: int = -1

    def admits(self, number: int, message: SentMessage) -> bool:
        return number < self.before and (number > self.changed or message.phase == self.phase)


def since_change(state: RunState, before: int, fact_key: str | None) -> Window:
    """The messages before ``before`` that may carry what the last change of ``fact_key`` brought in."""
    changed = state.changed_at.get(fact_key, 0) if fact_key else 0
    if changed <= 0 or changed > len(state.sent_log):
        return Window(before)
    return Window(before, changed, state.sent_log[changed - 1].phase)


def carriers(state: RunState, value: Value, admitted: Window) -> list[int]:
    """Transcript numbers of the admitted messages carrying one of ``value``'s keys."""
    tokens = [f" {key} " for key in value.keys]
    legacy = [f" {key} " for key in value.legacy]
    found = []
    for number, message in enumerate(state.sent_log, start=1):
        keys = f" {message.keys} "
        if admitted.admits(number, message) and (
            any(t in keys for t in tokens)
            or (legacy and _OLDER not in keys and any(t in keys for t in legacy))
        ):
            found.append(message.n)
    return found


def last_sent(state: RunState, value: Value, before: int) -> int | None:
    found = carriers(state, value, Window(before))
    return found[-1] if found else None
