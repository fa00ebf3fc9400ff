"""One run: the persona's conversation with the agent, as a template method.

``Run.run()`` initialises (fresh or from ``state.json``), steps persona turns until the scenario ends or a fault
exhausts its retries, and finalises in ``finally``. Everything observable is an event; a kill at any moment
resumes from the last checkpoint (``engine/run/checkpoint.py``), saved before anything leaves the run.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from engine import persona_record
from engine.agents import AdapterError
from engine.api import Observer
from engine.autopsy.run_autopsy import run_autopsy
from engine.benchmark.model import Phase
from engine.commands import CallInterrupted, Command, CommandResult
from engine.events import (
    ErrorOccurred,
    ErrorWhere,
    Event,
    PersonaThinking,
    RunEnded,
    RunStarted,
    RunStatus,
    TerminationReason,
    ToolCalled,
)
from engine.grading.premises import told_problem
from engine.judge.role import RunJudge
from engine.models.base import Completion, ModelError
from engine.models.prompt_usage import schema_tokens
from engine.models.tokens import warm_up
from engine.persona import hooks
from engine.persona.context import compact_state, pending_tool_calls, recent_replies, shorten_replies
from engine.persona.notebook import Notebook, ToolError
from engine.persona.tools import dispatch, parse_arguments, tool_schemas
from engine.report.interventions import read_interventions
from engine.report.writer import REPORT_NAME, RunSummary, append_once, new_entry
from engine.run.agent_channel import REPLY_PREFIX, AgentChannel
from engine.run.checkpoint import LOCAL_TOOLS
from engine.run.liveness import report_retries
from engine.run.memory_keeper import MemoryKeeper
from engine.run.operator import OperatorDesk
from engine.run.parts import AgentDidNotStart, RunParts
from engine.run.phase_start import start_phase
from engine.run.recorder import RunRecorder
from engine.run.timemaster import TimeMaster
from engine.run.tool_host import RunTools
from engine.state import RunState, StateSaveError

log = logging.getLogger(__name__)


class Run(RunTools):
    def __init__(self, parts: RunParts, judge: RunJudge | None = None) -> None:
        self.run_id = parts.run_id
        self.run_dir = parts.run_dir
        self.bench = parts.benchmark
        self.state = parts.state
        self.clock = parts.clock
        self.adapter = parts.adapter
        self.settings = parts.settings
        self.persona_model = parts.persona_model
        self.meter = parts.meter
        self.provenance = parts.provenance
        self.resumed = parts.resumed
        self.lock = parts.lock
        self.notebook = Notebook(
            self.state, lambda sheet, fact: told_problem(self.state, self.bench, sheet, fact)
        )
        self.recorder = RunRecorder(
            self.run_id, self.run_dir, self.state, self.clock, parts.observers, self._fill_state
        )
        self.observers.append(persona_record.tally(self.state, self.adapter))  # slips, sessions: the report's
        self.judge = judge.attach(self.recorder) if judge else None  # a second grade of every answer
        if self.judge and self.judge.model:  # a model judge's retries are model_retry events too
            report_retries(self.judge.model, self.recorder, where="judge model")
        self.liveness = self.recorder.liveness  # what the run waits for (``engine/run/liveness.py``)
        report_retries(self.persona_model, self.recorder)
        virtual_time = self.bench.time_master
        memory = MemoryKeeper(self.recorder, self.adapter, self.run_dir)  # its history, the agent's actions
        channel = (self.recorder, self.adapter, self.settings, self.run_id, virtual_time, memory)
        self.agent = AgentChannel(*channel)
        self.operator = OperatorDesk(self)
        self.time = TimeMaster(
            self.recorder,
            self.adapter,
            self.settings,
            virtual_time,
            lambda: self.current_phase().date,
            self.agent.idle,
        )
        self._tools = tool_schemas(virtual_time)
        self._slips = hooks.SlipStreak()  # consecutive persona turns that did nothing
        self._phase_started_by_call = False
        self._in_flight = False  # the next send_message may already be with the agent (see AgentChannel)
        self.termination: TerminationReason | None = None
        self.handed_over = False  # stopped to be played on by another process: no report entry of its own

    # ---- events and saving (the recorder) -----------------------------------------------------

    def emit(self, event: Event) -> None:
        self.recorder.emit(event)

    def save(self) -> None:
        self.recorder.save()

    def set_status(self, status: RunStatus, reason: str = "") -> None:
        self.recorder.set_status(status, reason)

    def _fill_state(self, state: RunState) -> None:
        state.adapter_state, state.usage = self.adapter.export_state(), self.meter.as_dict()

    @property
    def observers(self) -> list[Observer]:
        return self.recorder.observers

    def summary(self) -> RunSummary:
        """The run as the report sees it (its interventions and waits read from the transcript)."""
        who = (self.run_id, self.adapter.name, self.bench, self.state)
        ended = (self.termination, self.clock.now(), self.meter.as_dict(), self.provenance)
        lead = self.judge.lead if self.judge else None
        autopsy = run_autopsy(self.run_dir, self.state.evaluations, self.agent.memory.exposes_actions)
        return RunSummary(*who, *ended, lead, read_interventions(self.recorder.transcript.path), autopsy)

    async def new_session(self, by_operator: bool = False) -> bool:
        return await self.agent.new_session(by_operator)

    # ---- the template method -------------------------------------------------------------------

    async def run(self) -> TerminationReason:
        reason = TerminationReason.CRASHED
        try:
            await self._initialise()
            reason = await self._loop()
        except asyncio.CancelledError:
            reason = TerminationReason.STOPPED
            raise
        except AgentDidNotStart as exc:  # resumable once the agent is fixed: waiting, with the reason
            self.set_status("waiting", str(exc))
            reason = TerminationReason.WAITING
        except Exception as exc:
            log.exception("run %s crashed", self.run_id)
            self.emit(ErrorOccurred(message=f"{type(exc).__name__}: {exc}", where="engine", fatal=True))
            self.state.reason = f"{type(exc).__name__}: {exc}"
            reason = TerminationReason.CRASHED
        finally:
            self.termination = reason
            self.termination = reason = await self._finalise(reason)
        return reason

    async def _initialise(self) -> None:
        self._warm = asyncio.ensure_future(asyncio.to_thread(warm_up))  # the tokenizer loads meanwhile
        shorten_replies(self.state.persona_messages, REPLY_PREFIX, self.settings.max_reply_chars)
        self._append_pending_report()
        self.adapter.import_state(self.state.adapter_state)
        self.notebook.freeze_templates()
        await self.recorder.begin(self.resumed)  # the transcript cut back to the checkpoint, or a first one
        bench, agent = self.bench.name, self.adapter.name
        self.emit(RunStarted(run_id=self.run_id, benchmark=bench, agent=agent, resumed=self.resumed))
        self.set_status("running")
        if self.judge:  # evaluations left without a judge grade (a judge added since) are graded now
            await self.judge.grade_pending()
        try:
            if self.state.phases_started == 0:  # a fresh run starts from an empty memory, wherever it lives
                await self.adapter.destroy_session()
            await self.adapter.create_session(self.run_id)
        except AdapterError as exc:
            self.emit(ErrorOccurred(message=f"agent did not start: {exc}", where="agent"))
            raise AgentDidNotStart(f"agent did not start: {exc}") from None
        await self.agent.tell_time()
        # whether it exposes its actions is known from the start (a resume killed after its last message would
        # else never ask, and its report say "none recorded" where the run's says "none exposed"), and what it
        # did after the checkpoint is recorded again
        await self.agent.memory.actions()
        await self.agent.memory.take("start")  # the memory it starts (or resumes) from
        opening = ""
        if self.state.phases_started == 0:
            await self._start_phase(0)
            opening = "Your first phase:"
        elif self.state.finished and self.state.phases_started < len(self.bench.phases):
            # chapters were appended to a finished benchmark: continue the story
            self.state.finished = self.state.reported = False
            await self._start_phase(self.state.phases_started)
            opening = "The story continues. Your next phase:"
        if opening:
            text = self._with_time(f"{opening}\n\n{self.state.phase_text}")
            self.append_message({"role": "user", "content": text}, phase_start=True)
        self.save()

    async def _loop(self) -> TerminationReason:
        failures = 0
        while not self.state.finished:
            await self.operator.apply_queued()
            if self.operator.paused:
                await self.operator.wait_resumed()
                continue
            if self.judge and self.judge.cut:  # the judge calls a pause cut short are made now
                await self.judge.grade_cut()
            try:
                await self._step()
                failures = 0
            except CallInterrupted as cut:  # by the operator: the cut step is made again (after a pause)
                if cut.why == "abort" and cut.what == "agent reply":
                    await self.agent.revive()  # as after a timeout: the message goes again, checked first
                self.save()  # the cut on record (a state a failure saves too): a kill does not take it back
            except (ModelError, AdapterError) as exc:
                failures += 1
                where: ErrorWhere = "agent" if isinstance(exc, AdapterError) else "persona model"
                delay = min(self.settings.fault_backoff * 2 ** (failures - 1), 300)
                last = failures > self.settings.fault_retries
                then = "no retries left: waiting for the operator" if last else f"retrying in {delay:g} s"
                message = f"{exc} (attempt {failures}/{self.settings.fault_retries + 1}; {then})"
                self.emit(ErrorOccurred(message=message, where=where))
                self.set_status("waiting", f"{where}: {exc}")
                self.save()
                if last:
                    return TerminationReason.WAITING
                await self.operator.back_off(delay)  # cut short by AbortCall or a pause
                if isinstance(exc, AdapterError) and not await self.agent.revive():
                    continue
                self.set_status("running")
            if self.recorder.writer.failure:  # never play on (or report finished) over a stale checkpoint
                self.set_status("waiting", f"cannot save state: {self.recorder.writer.failure}")
                return TerminationReason.WAITING
            stuck = self.stuck_reason()
            if stuck:
                self._slips.clear()
                self.set_status("waiting", stuck)
                self.save()
                return TerminationReason.WAITING
        return TerminationReason.FINISHED

    async def _finalise(self, reason: TerminationReason) -> TerminationReason:
        """Status, report entry, last checkpoint, agent closed, lock released; how the run really ended
        (``waiting`` when its last checkpoint could not be written, whatever it was before)."""
        try:
            entry = ""
            if reason is not TerminationReason.STOPPED and (
                reason is not TerminationReason.FINISHED or not self.state.reported
            ):
                # an end of its own gets an entry (an unfinished one is marked incomplete), the finished one
                # once; a stop the operator asked for is a pause, with none. Each supersedes the one before
                entry = new_entry(self.summary())
                self.state.reported = reason is TerminationReason.FINISHED
            if reason is TerminationReason.STOPPED:  # cancelled mid-step: the last checkpoint stands
                self.set_status("idle", "handed over" if self.handed_over else "stopped")
            else:  # the checkpoint first (the entry pending in it), then the report: never twice, never lost
                self.state.pending_report = entry
                self.save()
                await self.recorder.writer.flush()
                self._append_pending_report()
                if reason is TerminationReason.FINISHED:  # only once the report has it
                    await self.agent.memory.take("end")
                    self.set_status("finished")
                elif reason is TerminationReason.CRASHED:
                    self.set_status("crashed", self.state.reason or "engine error")
            self.emit(RunEnded(reason=reason, detail=self.state.reason, tokens=self.meter.as_dict()))
            if reason is not TerminationReason.STOPPED:
                self.save()
        except StateSaveError as exc:
            log.error("run %s: %s", self.run_id, exc)
            self.emit(ErrorOccurred(message=f"cannot save state: {exc}", where="engine"))
            self.set_status("waiting", f"cannot save state: {exc}")
            reason = TerminationReason.WAITING
        finally:
            try:
                await self.recorder.writer.flush()
            except StateSaveError as exc:
                log.error("run %s: the last checkpoint was not written: %s", self.run_id, exc)
            except Exception:
                log.exception("saving the state failed")
            try:
                await asyncio.shield(self.adapter.close())
            except Exception:
                log.exception("adapter close failed")
            self.recorder.close_files()
            if self.lock is not None:
                self.lock.release()
        return reason

    def _append_pending_report(self) -> None:
        entry, self.state.pending_report = self.state.pending_report, ""
        append_once(self.run_dir.parent / REPORT_NAME, entry)

    # ---- one step: a persona turn, or the tool calls left pending by a kill -----------------

    async def _step(self) -> None:
        pending = pending_tool_calls(self.state.persona_messages)
        if pending:  # left by a kill or a failure: a message among them may already be with the agent
            self._in_flight = True
            await self._execute_tool_calls(pending)
            self._in_flight = False
            return
        system = self.notebook.system_prompt(
            self.bench.instructions, self.bench.time_master, self.bench.sheets["profile"]
        )
        self._maybe_compact(system)
        with self.liveness.waiting("persona model"):
            messages = [{"role": "system", "content": system}, *self.state.persona_messages]
            completion = await self.persona_model.complete(messages, self._tools)
        self.state.persona_turns_in_phase += 1
        await self._handle_completion(completion)

    async def _handle_completion(self, completion: Completion) -> None:
        if completion.reasoning:
            self.emit(PersonaThinking(text=completion.reasoning))
        recent = recent_replies(self.state.persona_messages, REPLY_PREFIX)
        refusal = hooks.refuse(completion, recent, self.settings.echo_guard, self.settings.plain_text_guard)
        if refusal is not None:  # nothing reaches the agent: the model is told why and tries again
            self._slips.add(refusal.slip)
            for event in refusal.events:
                self.emit(event)
            for message in refusal.messages:
                self.append_message(message)
            if refusal.messages:  # an echo's dropped cycle changed nothing: a kill replays it from a save
                self.save()
            return
        self._slips.clear()
        content = (completion.content or "").strip()
        if not completion.tool_calls:  # plain text without the guard goes to the agent (a naive harness)
            self.append_message({"role": "assistant", "content": content})
            reply = await self.agent.deliver(content)
            self.append_message({"role": "user", "content": reply})
            self.save()
            return
        if content:
            self.emit(PersonaThinking(text=content))
        self.append_message(completion.as_message())  # saved with its first call that leaves the run
        await self._execute_tool_calls(pending_tool_calls(self.state.persona_messages))

    def stuck_reason(self) -> str:
        """Why the persona counts as stuck, or an empty string."""
        turns = self.state.persona_turns_in_phase
        if turns > self.settings.max_turns_per_phase:
            return f"persona stuck ({turns} turns in phase {self.state.phase_index + 1})"
        return self._slips.stuck_reason(self.settings.stuck_after)

    async def _execute_tool_calls(self, calls: list[dict[str, Any]]) -> None:
        for call in calls:  # saved before each call that leaves the run and at the end (``LOCAL_TOOLS``)
            name = call["function"]["name"]
            if name not in LOCAL_TOOLS:
                self.save()  # the checkpoint before a message leaves knows everything before it
            args: dict[str, Any] = {}
            error = False
            self._phase_started_by_call = False
            try:
                args = parse_arguments(call["function"].get("arguments") or "")
                result = await dispatch(self, name, args)
            except ToolError as exc:
                result, error = f"ERROR: {exc}", True
            self.emit(ToolCalled(name=name, arguments=args, result=result, error=error))
            self.append_message({"role": "tool", "tool_call_id": call["id"], "content": result})
            if self._phase_started_by_call:
                self._mark_phase_start_at_last_assistant()
        self.save()

    # ---- phases --------------------------------------------------------------------------------

    def current_phase(self) -> Phase:
        return self.bench.phases[min(self.state.phase_index, len(self.bench.phases) - 1)]

    async def _start_phase(self, index: int) -> None:
        if index > 0:  # the memory at the end of the phase before
            await self.agent.memory.take("phase")
        await start_phase(
            self.state,
            self.bench,
            index,
            self.agent.new_session,
            self.emit,
            clears_context=self.adapter.supports_new_conversation,
        )

    def append_message(self, message: dict[str, Any], phase_start: bool = False) -> None:
        if phase_start:
            self.state.phase_starts.append(len(self.state.persona_messages))
        self.state.persona_messages.append(message)

    def _mark_phase_start_at_last_assistant(self) -> None:
        messages = self.state.persona_messages
        self.state.phase_starts.append(max(i for i, m in enumerate(messages) if m["role"] == "assistant"))

    def _maybe_compact(self, system: str) -> None:
        settings = self.settings
        limits = (settings.compaction_max_tokens, settings.compaction_trim_to_tokens)
        event = compact_state(
            self.state, system, *limits, self.notebook.render_loaded, schema_tokens(self._tools)
        )
        if event is not None:
            self.emit(event)
            self.save()

    def command(self, command: Command) -> asyncio.Future[CommandResult]:
        """A front end's command: applied between persona turns, or at once for ``Resume`` and ``AbortCall``
        (``engine.run.operator``); what became of it."""
        return self.operator.command(command)
