"""Test agents whose answers differ from one repeat of a run to the next, so repeats have a spread to measure.

Named in test configs as ``repeat_agents:MoodyAgent``. The agent reads its run id: in repeat ``r<k>`` it
answers every ``k``-th question it is asked with "I don't remember" (``r1`` forgets every question, ``r2``
every second one, …; a run without a repeat suffix never forgets), and otherwise as ``ForgetfulAgent``.
"""

from __future__ import annotations

from typing import ClassVar

from fixture_agents import ForgetfulAgent

from adapters.base import AgentMessage
from engine.expand import REPEAT_SUFFIX

FORGOT = "I don't remember, sorry."


class MoodyAgent(ForgetfulAgent):
    name: ClassVar[str] = "moody"

    async def send_message(self, text: str) -> None:
        match = REPEAT_SUFFIX.match(self.ctx.run_id)
        if match is None or "?" not in text:
            await super().send_message(text)
            return
        self.questions = getattr(self, "questions", 0) + 1
        if self.questions % int(match["k"]) == 0:
            self.received += 1
            self.replies.append(
                AgentMessage(seq=len(self.replies) + 1, text=FORGOT, time=self.ctx.clock.iso())
            )
            return
        await super().send_message(text)
