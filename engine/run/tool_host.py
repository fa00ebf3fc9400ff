"""The tools a run provides to the persona (``engine/persona/tools.py`` ``ToolHost``): a message to the agent,
the next phase behind its gates, a grade (and the judge's second grade of it), a virtual-time wait. A base
class of ``Run``: it names the parts of the run it uses."""

from __future__ import annotations

from engine.benchmark.model import Benchmark, Phase
from engine.clock import Clock
from engine.events import Event
from engine.grading import contract as grading
from engine.judge.role import RunJudge
from engine.persona.notebook import ToolError
from engine.run.agent_channel import AgentChannel
from engine.run.phases import FINISHED_TEXT, gate_problems, now_line
from engine.run.timemaster import TimeMaster
from engine.state import RunState


class RunTools:
    """``tool_*``: what ``dispatch`` calls on its host besides the notebook."""

    state: RunState
    bench: Benchmark
    clock: Clock
    agent: AgentChannel
    judge: RunJudge | None
    time: TimeMaster
    _in_flight: bool  # the pending batch being replayed after a kill may hold a message already sent
    _phase_started_by_call: bool

    def emit(self, event: Event) -> None:
        raise NotImplementedError

    def current_phase(self) -> Phase:
        raise NotImplementedError

    async def _start_phase(self, index: int) -> None:
        raise NotImplementedError

    async def tool_send_message(self, text: str) -> str:
        in_flight, self._in_flight = self._in_flight, False  # only the first send of a pending batch
        return await self.agent.deliver(text, in_flight)

    async def tool_next_phase(self, force: bool = False) -> str:
        if not force:
            problems = gate_problems(self.state, self.bench, self.clock.now())
            if problems:
                raise ToolError("cannot move on yet: " + "; ".join(problems))
        if self.state.phase_index + 1 >= len(self.bench.phases):
            self.state.finished = True
            return FINISHED_TEXT
        await self._start_phase(self.state.phase_index + 1)
        self._phase_started_by_call = True
        return self._with_time(self.state.phase_text)

    def _with_time(self, text: str) -> str:
        """In virtual-time scenarios the persona is always told what time it is."""
        return f"{text}\n\n{now_line(self.clock.now())}" if self.bench.time_master else text

    async def tool_log_evaluation(
        self, check_id: str, score: float, attempt: int, answer: str, comment: str
    ) -> str:
        result = grading.log_evaluation(
            self.state, self.bench, self.current_phase(), self.emit, check_id, score, attempt, answer, comment
        )
        if self.judge:  # a second opinion of the same answer, unseen by the persona (engine/judge/role.py)
            await self.judge.grade(check_id)
        return result

    async def tool_wait(self, until: str) -> str:
        return await self.time.wait(until)
