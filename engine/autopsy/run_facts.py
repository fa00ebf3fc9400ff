"""What an attribution needs of a run's transcript, read in one streamed pass: the agent's own actions
(``agent_action`` events, read whole) and where each message to the agent was sent (``message_sent``: only its
number, read from the line's head; a message's text may be megabytes).
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from engine.events import AgentActed, parse_event

_HEAD = re.compile(rb'\{"t":"[^"]*","n":(\d+),"kind":"([a-z_]+)"')


@dataclass
class RunFacts:
    actions: list[AgentActed] = field(default_factory=list)
    messages: list[int] = field(default_factory=list)  # transcript numbers of the messages sent, in order

    def question_of(self, evaluation_n: int) -> int:
        """The transcript number of the message a grade at ``evaluation_n`` graded the answer to (the last sent
        before it; the grade's own number when there is none)."""
        at = bisect.bisect_left(self.messages, evaluation_n)
        return self.messages[at - 1] if at else evaluation_n

    def actions_between(self, after: int, upto: int, file: str | None = None) -> list[AgentActed]:
        """The actions recorded between two snapshots (events ``after <= n < upto``), on ``file`` when given."""
        return [
            a
            for a in self.actions
            if after <= a.n < upto and (file is None or _same_file(a.target, file)) and not a.error
        ]

    def counts(self) -> Counter[str]:
        return Counter(a.action for a in self.actions)


def _same_file(target: str, file: str) -> bool:
    """Whether an action's target names the memory file ``file`` (a path ending in it, or its name)."""
    target = target.replace("\\", "/").strip()
    return target == file or target.endswith("/" + file)


def read_facts(transcript: Path) -> RunFacts:
    """The actions and messages of a transcript (none when it is missing); a torn line is skipped."""
    facts = RunFacts()
    try:
        handle = open(transcript, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return facts
    with handle:
        for line in handle:
            head = _HEAD.match(line)
            if head is None:
                continue
            kind = head.group(2)
            if kind == b"message_sent":
                facts.messages.append(int(head.group(1)))
            elif kind == b"agent_action":
                try:
                    event = parse_event(line.decode("utf-8"))
                except ValueError:
                    continue
                if isinstance(event, AgentActed):
                    facts.actions.append(event)
    return facts


def action_label(action: AgentActed) -> str:
    """How evidence names an action: ``memory replace #212`` (the tool, the verb its summary starts with as
    ``verb: …``, its event)."""
    head, colon, _ = action.summary.partition(":")
    verb = head.strip() if colon and head.strip().isalpha() and head.strip() != action.tool else ""
    return f"{action.tool}{' ' + verb if verb else ''} #{action.n}"
