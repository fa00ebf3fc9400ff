"""One run: the persona's conversation with the agent, as a template method.

``Run.run()`` initialises (fresh or from ``state.json``), steps persona turns until the scenario ends or
a fault exhausts its retries, and finalises in ``finally``. Everything observable is an event; every
change of state is followed by an atomic save, so a kill at any moment resumes from the last save.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from adapters.base import AdapterError
from engine import grading
from engine.agent_channel import REPLY_PREFIX, AgentChannel
from engine.benchmark.directives import phase_directives
from engine.benchmark.jsblock import JsBlockError, run_block
from engine.benchmark.model import Phase
from engine.clock import monotonic
from engine.commands import Command
from engine.events import (
    ErrorOccurred,
    EvaluationLogged,
    Event,
    HookFired,
    PersonaCompacted,
    PersonaThinking,
    PhaseStarted,
    RunEnded,
    RunStarted,
    StatusChanged,
    ToolCalled,
)
from engine.models.base import Completion, ModelError
from engine.models.tokens import warm_up
from engine.operator import OperatorDesk
from engine.persona import hooks
from engine.persona.context import build_system_prompt, compact
from engine.persona.notebook import Notebook, ToolError
from engine.persona.tools import dispatch, parse_arguments, tool_schemas
from engine.phases import FINISHED_TEXT, SESSION_SWITCH_NOTE, gate_problems, now_line, render_phase
from engine.run_parts import RunParts, TerminationReason
from engine.state import EvaluationRecord, StateWriter
from engine.timemaster import TimeMaster
from engine.transcript import Transcript

log = logging.getLogger(__name__)

class Run:
    def __init__(self, parts: RunParts) -> None:
        self.p = parts
        self.run_id = parts.run_id
        self.bench = parts.benchmark
        self.state = parts.state
        self.clock = parts.clock
        self.adapter = parts.adapter
        self.settings = parts.settings
        self.notebook = Notebook(self.state)
        self.transcript = Transcript(parts.run_dir / "transcript.jsonl")
        self.writer = StateWriter(parts.run_dir / "state.json")
        self.agent = AgentChannel(self)
        self.operator = OperatorDesk(self)
        self.time = TimeMaster(self)
        self._session_started = monotonic()
        self._tools = tool_schemas(self.bench.time_master)
        self._slips: list[str] = []  # consecutive persona turns that did nothing
        self._phase_started_by_call = False
        self.termination: TerminationReason | None = None

    # ---- events and saving -------------------------------------------------------------------

    def emit(self, event: Event) -> None:
        event.t = self.clock.iso()
        event.n = self.state.transcript_events
        self.state.transcript_events += 1
        self.transcript.append(event)
        for hook in self.p.emit_hooks:
            try:
                hook(self.run_id, event)
            except Exception:  # an observer must never break a run
                log.exception("observer failed")

    def save(self) -> None:
        now = monotonic()
        self.state.run_seconds += now - self._session_started
        self._session_started = now
        self.state.clock_offset = self.clock.offset
        self.state.clock_now = self.clock.iso()
        self.state.adapter_state = self.adapter.export_state()
        self.state.usage = self.p.meter.as_dict()
        self.state.transcript_bytes = self.transcript.size
        self.writer.save(self.state)

    def set_status(self, status: str, reason: str = "") -> None:
        if (self.state.status, self.state.reason) != (status, reason):
            self.state.status, self.state.reason = status, reason
            self.emit(StatusChanged(status=status, reason=reason))  # type: ignore[arg-type]

    # ---- the template method -------------------------------------------------------------------

    async def run(self) -> TerminationReason:
        reason = TerminationReason.CRASHED
        try:
            await self._initialise()
            reason = await self._loop()
        except asyncio.CancelledError:
            reason = TerminationReason.STOPPED
            raise
        except Exception as exc:
            log.exception("run %s crashed", self.run_id)
            self.emit(ErrorOccurred(message=f"{type(exc).__name__}: {exc}", where="engine", fatal=True))
            self.state.reason = f"{type(exc).__name__}: {exc}"
            reason = TerminationReason.CRASHED
        finally:
            self.termination = reason
            await self._finalise(reason)
        return reason

    async def _initialise(self) -> None:
        self._warm = asyncio.ensure_future(asyncio.to_thread(warm_up))  # the tokenizer loads meanwhile
        self.transcript.rollback(self.state.transcript_bytes)
        self.adapter.import_state(self.state.adapter_state)
        self.notebook.freeze_templates()
        self.emit(RunStarted(run_id=self.run_id, benchmark=self.bench.name, agent=self.adapter.name, resumed=self.p.resumed))
        self.set_status("running")
        try:
            await self.adapter.create_session(self.run_id)
        except AdapterError as exc:
            self.emit(ErrorOccurred(message=f"agent did not start: {exc}", where="agent"))
            raise
        await self.agent.tell_time()
        if self.state.phases_started == 0:
            await self._start_phase(0)
            self.append_message({"role": "user", "content": self._with_time("Your first phase:\n\n" + self.state.phase_text)}, phase_start=True)
        elif self.state.finished and self.state.phases_started < len(self.bench.phases):
            # chapters were appended to a finished benchmark: continue the story
            self.state.finished = False
            self.state.reported = False
            await self._start_phase(self.state.phases_started)
            self.append_message({"role": "user", "content": self._with_time("The story continues. Your next phase:\n\n" + self.state.phase_text)}, phase_start=True)
        self.save()

    async def _loop(self) -> TerminationReason:
        failures = 0
        while not self.state.finished:
            await self.operator.apply_queued()
            if self.operator.paused:
                await self.operator.wait_resumed()
                continue
            try:
                await self._step()
                failures = 0
            except (ModelError, AdapterError) as exc:
                failures += 1
                where = "agent" if isinstance(exc, AdapterError) else "persona model"
                self.emit(ErrorOccurred(message=str(exc), where=where))
                self.set_status("waiting", f"{where}: {exc}")
                self.save()
                if failures > self.settings.fault_retries:
                    return TerminationReason.WAITING
                await asyncio.sleep(min(self.settings.fault_backoff * 2 ** (failures - 1), 300))
                if isinstance(exc, AdapterError) and not await self.agent.revive():
                    continue
                self.set_status("running")
            stuck = self.stuck_reason()
            if stuck:
                self._slips.clear()
                self.set_status("waiting", stuck)
                self.save()
                return TerminationReason.WAITING
        return TerminationReason.FINISHED

    async def _finalise(self, reason: TerminationReason) -> None:
        try:
            if reason is TerminationReason.FINISHED:
                self.adapter.snapshot_memory("end")
                self.set_status("finished")
            elif reason is TerminationReason.CRASHED:
                self.set_status("crashed", self.state.reason or "engine error")
            elif reason is TerminationReason.STOPPED:
                self.set_status("idle", "stopped")
            if reason is not TerminationReason.FINISHED or not self.state.reported:
                # every end gets an entry (an unfinished one is marked incomplete); the finished one once
                from engine.report import append_report

                append_report(self)
                self.state.reported = reason is TerminationReason.FINISHED
            self.emit(RunEnded(reason=reason.value, detail=self.state.reason))
            if reason is not TerminationReason.STOPPED:
                self.save()
        finally:
            try:
                await self.writer.flush()
            except Exception:
                log.exception("saving the state failed")
            try:
                await asyncio.shield(self.adapter.close())
            except Exception:
                log.exception("adapter close failed")
            self.transcript.close()

    # ---- one step: a persona turn, or the tool calls left pending by a kill -----------------

    async def _step(self) -> None:
        pending = self._pending_tool_calls()
        if pending:
            await self._execute_tool_calls(pending)
            return
        system = self._system_prompt()
        self._maybe_compact(system)
        completion = await self.p.persona_model.complete(
            [{"role": "system", "content": system}, *self.state.persona_messages], self._tools)
        self.state.persona_turns_in_phase += 1
        await self._handle_completion(completion)

    async def _handle_completion(self, completion: Completion) -> None:
        if completion.reasoning:
            self.emit(PersonaThinking(text=completion.reasoning))
        content = (completion.content or "").strip()
        echo = hooks.imitates_agent(completion, self._recent_replies()) if self.settings.echo_guard else None
        if echo:  # never delivered: the model is told why and does the step again
            self._slip(f"echo: {echo}")
            self.emit(HookFired(hook="echo_guard", detail=f"{echo}; nothing was sent or done"))
            self.append_message(completion.as_message())
            error = hooks.echo_error(echo)
            for call in completion.tool_calls:
                self.append_message({"role": "tool", "tool_call_id": call.id, "content": error})
            if not completion.tool_calls:
                self.append_message({"role": "user", "content": error})
            self.save()
            return
        if not completion.tool_calls:
            if not content:
                self._slip("empty completion")
                self.emit(ErrorOccurred(message="the persona model returned an empty completion", where="persona model"))
                self.append_message({"role": "user", "content": hooks.EMPTY_ERROR})
                self.save()
                return
            if self.settings.plain_text_guard:
                self._slip("plain text instead of a tool call")
                self.emit(PersonaThinking(text=content))
                self.emit(HookFired(hook="plain_text_guard", detail="plain text instead of send_message"))
                self.append_message({"role": "assistant", "content": content})
                self.append_message({"role": "user", "content": hooks.PLAIN_TEXT_ERROR})
                self.save()
                return
            # without the guard, plain text goes to the agent as a message (a naive harness)
            self._slips.clear()
            self.append_message({"role": "assistant", "content": content})
            reply = await self.agent.deliver(content)
            self.append_message({"role": "user", "content": reply})
            self.save()
            return
        self._slips.clear()
        if content:
            self.emit(PersonaThinking(text=content))
        self.append_message(completion.as_message())
        self.save()
        await self._execute_tool_calls(self._pending_tool_calls())

    def _slip(self, what: str) -> None:
        """A persona turn that did nothing (echo, empty, plain text); enough in a row stop the run."""
        self._slips.append(what)

    def stuck_reason(self) -> str:
        """Why the persona counts as stuck, or an empty string."""
        if len(self._slips) >= self.settings.stuck_after:
            kinds = ", ".join(sorted(set(self._slips)))
            return f"persona stuck ({len(self._slips)} turns in a row without a valid tool call: {kinds})"
        if self.state.persona_turns_in_phase > self.settings.max_turns_per_phase:
            return f"persona stuck ({self.state.persona_turns_in_phase} turns in phase {self.state.phase_index + 1})"
        return ""

    def _pending_tool_calls(self) -> list[dict[str, Any]]:
        """Tool calls of the last assistant message that have no result yet (after a kill, say)."""
        messages = self.state.persona_messages
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if message["role"] == "assistant":
                answered = {m.get("tool_call_id") for m in messages[index + 1 :] if m["role"] == "tool"}
                return [c for c in message.get("tool_calls") or [] if c["id"] not in answered]
            if message["role"] == "user":
                return []
        return []

    async def _execute_tool_calls(self, calls: list[dict[str, Any]]) -> None:
        for call in calls:
            name = call["function"]["name"]
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

    # ---- tools the run provides (ToolHost) ---------------------------------------------------

    async def tool_send_message(self, text: str) -> str:
        return await self.agent.deliver(text)

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

    async def tool_log_evaluation(self, check_id: str, score: float, attempt: int, answer: str, comment: str) -> str:
        state = self.state
        problems = grading.evaluation_problems(state, self.bench, self.current_phase(), check_id, score, attempt)
        check = self.bench.check(check_id)
        if problems or check is None:
            raise ToolError("log_evaluation refused: " + "; ".join(problems))
        effective = score * (0.5 if attempt == 2 else 1.0)
        replaces = grading.replaced_text(state, check_id)
        faults = grading.premise_faults(state, self.bench, check)
        fault = "; ".join(faults)
        replies = list(state.last_replies)
        record = EvaluationRecord(
            check_id=check_id, score=score, attempt=attempt, effective=effective, answer=answer,
            comment=comment, phase_index=state.phase_index, transcript_n=state.transcript_events,
            replies=replies, persona_fault=fault,
        )
        state.evaluations[check_id] = record
        state.graded_at[check_id] = state.messages_sent
        grading.forget_exchange(state)
        show = self.notebook.show
        self.emit(EvaluationLogged(
            check_id=check_id, score=score, attempt=attempt, effective=effective, question=show(check.question),
            expected=show(check.answer), answer=answer, comment=comment, types=check.types,
            phase_index=state.phase_index, replies=replies, persona_fault=fault, replaces=replaces,
        ))
        counted = f" (counted {effective:g} for a 2nd attempt)" if attempt == 2 else ""
        result = f"Logged {check_id}: {score:g}/10, attempt {attempt}{counted}."
        if replaces:
            result += f" This regrade replaces the earlier grade {replaces}; both stay in the record."
        if fault:
            result += f" Recorded as a persona fault (not the assistant's score): {fault}."
        return result

    async def tool_wait(self, until: str) -> str:
        return await self.time.wait(until)

    # ---- phases --------------------------------------------------------------------------------

    def current_phase(self) -> Phase:
        return self.bench.phases[min(self.state.phase_index, len(self.bench.phases) - 1)]

    async def _start_phase(self, index: int) -> None:
        phase = self.bench.phases[index]
        self.state.phase_index = index
        self.state.phases_started = max(self.state.phases_started, index + 1)
        self.state.persona_turns_in_phase = 0
        self.state.phase_first_message = self.state.messages_sent
        grading.forget_exchange(self.state)
        vars_: dict[str, Any] = {}
        host = _JsHost(self)
        if phase.js:
            try:
                vars_ = await run_block(phase.js, host)
            except JsBlockError as exc:
                line = phase.js_line + exc.line - 1 if exc.line else phase.js_line - 1  # 0: the whole block
                self.emit(ErrorOccurred(message=f"{phase.chapter}:{line}: {exc}", where="js"))
        self.state.phase_vars = {k: v for k, v in vars_.items() if k in ("require_all_facts", "require_all_checks")}
        directed = bool(phase_directives(self.bench).get(index))
        text = render_phase(phase, len(self.bench.phases), self.state.start_date, self.state.phase_vars, directed)
        if host.switched:
            text += f"\n\n[Platform note: {SESSION_SWITCH_NOTE}]"
        self.state.phase_text = text
        self.emit(PhaseStarted(index=index, total=len(self.bench.phases), chapter=phase.chapter, title=phase.title, text=self.state.phase_text))

    def append_message(self, message: dict[str, Any], phase_start: bool = False) -> None:
        if phase_start:
            self.state.phase_starts.append(len(self.state.persona_messages))
        self.state.persona_messages.append(message)

    def _mark_phase_start_at_last_assistant(self) -> None:
        messages = self.state.persona_messages
        index = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
        self.state.phase_starts.append(index)

    def _recent_replies(self) -> list[str]:
        replies: list[str] = []
        for message in reversed(self.state.persona_messages[-12:]):
            content = message.get("content") or ""
            if message["role"] in ("tool", "user") and content.startswith(REPLY_PREFIX):
                replies.append(content.split("\n\n", 1)[-1])
        return replies

    def _system_prompt(self) -> str:
        return build_system_prompt(
            self.notebook.show(self.bench.instructions), self.notebook.render(self.state.sheets["profile"]),
            sorted(self.state.sheets), self.bench.time_master,
        )

    def _maybe_compact(self, system: str) -> None:
        result = compact(
            system, self.state.persona_messages, self.state.phase_starts,
            self.settings.compaction_max_tokens, self.settings.compaction_trim_to_tokens, self.notebook.render_loaded,
        )
        if result is None:
            return
        self.state.persona_messages = result.messages
        self.state.phase_starts = result.phase_starts
        self.state.persona_compactions += 1
        self.emit(PersonaCompacted(tokens_before=result.tokens_before, tokens_after=result.tokens_after, estimated=result.estimated))
        self.save()

    def command(self, command: Command) -> None:
        """A front end's command: applied between persona turns (``engine.operator``)."""
        self.operator.command(command)


class _JsHost:
    def __init__(self, run: Run) -> None:
        self.run = run
        self.switched = False

    async def new_session(self) -> None:
        self.switched = await self.run.agent.new_session() or self.switched

