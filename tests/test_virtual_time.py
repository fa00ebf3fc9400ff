"""Virtual time: the clock, wait, the Time Master's jumps and the time gate (SPEC §7)."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path
from typing import ClassVar

import pytest
from engine_helpers import events, kinds, make_config
from fixture_agents import ForgetfulAgent

from adapters.base import AdapterContext, AgentStatus
from engine.build import BuildError, build_run
from engine.events import ClockJumped
from engine.persona.notebook import ToolError
from engine.run_parts import RunSettings, TerminationReason


def quick(settings: RunSettings) -> None:
    settings.time_master_min_sleep = 5
    settings.time_master_pre_wake = 0.05
    settings.time_master_poll = 0.01
    settings.agent_quiet_seconds = 0.05
    settings.agent_poll_seconds = 0.001
    settings.fault_backoff = 0.01


class ClockAgent(ForgetfulAgent):
    """Follows virtual time and records when it was told the time and when it was polled."""

    name: ClassVar[str] = "clock-agent"
    supports_virtual_time: ClassVar[bool] = True
    log: ClassVar[list[tuple[str, str, str]]] = []  # (what, virtual now when called, argument)
    think_polls: ClassVar[int] = 0  # report "thinking" on this many polls first

    def __init__(self, ctx: AdapterContext) -> None:
        super().__init__(ctx)
        self.polls = 0

    async def set_virtual_time(self, iso: str) -> None:
        self.log.append(("set", self.ctx.clock.iso(), iso))

    async def get_status(self) -> AgentStatus:
        self.polls += 1
        thinking = self.polls <= self.think_polls
        self.log.append(("status", self.ctx.clock.iso(), "thinking" if thinking else "sleeping"))
        return AgentStatus(state="thinking" if thinking else "sleeping")


class NoStatusAgent(ClockAgent):
    async def get_status(self) -> None:  # type: ignore[override]
        return None


@pytest.fixture(autouse=True)
def _reset_agent_log() -> None:
    ClockAgent.log = []
    ClockAgent.think_polls = 0


async def test_a_multiday_scenario_runs_in_seconds_with_jumps(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"d": {"benchmark": "days", "agent": "chatbot"}})
    run = build_run(config, "d", tune=quick)
    started = asyncio.get_running_loop().time()
    assert await run.run() is TerminationReason.FINISHED
    assert asyncio.get_running_loop().time() - started < 20
    assert run.clock.now() >= datetime(2026, 3, 3, 8, 0)
    jumps = kinds(events(config, "d"), "clock_jumped")
    assert len(jumps) >= 4 and run.state.clock_jumps == len(jumps)
    history = (config.results_path() / "d" / "agent" / "chatbot.jsonl").read_text()
    assert "[Mon 02 Mar 2026 07:30]" in history  # the control agent sees the virtual time of each message
    assert "[Mon 02 Mar 2026 21:00]" in history
    assert run.state.evaluations["2.1"].effective == 10.0
    assert all(e.t.startswith("2026-03") for e in events(config, "d"))  # events are stamped on virtual time


async def test_time_gate_blocks_then_allows_and_the_date_line_fixes_the_day(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"d": {"benchmark": "days", "agent": "chatbot"}})
    run = build_run(config, "d", tune=quick)
    await run._initialise()
    assert run.clock.now().strftime("%Y-%m-%d %H:%M") == "2026-03-01 20:00"
    with pytest.raises(ToolError, match="until Sun 01 Mar 20:05"):
        await run.tool_next_phase()
    assert "20:0" in await run.tool_wait("20:05")
    assert (await run.tool_next_phase()).startswith("Phase 2/3")
    with pytest.raises(ToolError, match="until Mon 02 Mar 21:00"):  # the phase's date, not today's 21:00
        await run.tool_next_phase()
    await run.tool_wait("2026-03-02 21:00")
    await run.tool_next_phase()
    assert run.clock.now() >= datetime(2026, 3, 2, 21, 0)
    await run.adapter.close()


async def test_set_virtual_time_reaches_the_agent_before_each_jump(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"d": {"benchmark": "days", "agent": "fixture_agents_vt:ClockAgent"}})
    run = build_run(config, "d", tune=quick)
    assert await run.run() is TerminationReason.FINISHED
    jumps = [e for e in events(config, "d") if isinstance(e, ClockJumped)]
    sets = [(now, iso) for what, now, iso in ClockAgent.log if what == "set"]
    for jump in jumps:
        told = [now for now, iso in sets if iso == jump.to_time]
        assert told, f"agent not told before the jump to {jump.to_time}"
        assert told[0] <= jump.from_time  # told while the clock still read the old time


async def test_no_jump_while_the_agent_is_thinking(tmp_path: Path) -> None:
    ClockAgent.think_polls = 30
    config = make_config(tmp_path, {"d": {"benchmark": "days", "agent": "fixture_agents_vt:ClockAgent"}})
    run = build_run(config, "d", tune=quick)
    await run._initialise()
    await run.tool_wait("20:05")
    statuses = [(now, state) for what, now, state in ClockAgent.log if what == "status"]
    thinking_times = [now for now, state in statuses if state == "thinking"]
    assert thinking_times and all(now < "2026-03-01T20:04" for now in thinking_times)
    jump = kinds(events(config, "d"), "clock_jumped")[0]
    assert jump.from_time >= thinking_times[-1]
    await run.adapter.close()


async def test_without_get_status_idle_means_no_reply_activity(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"d": {"benchmark": "days", "agent": "fixture_agents_vt:NoStatusAgent"}})
    run = build_run(config, "d", tune=quick)
    await run._initialise()
    result = await run.tool_wait("2026-03-02 07:30")
    assert "Monday 02 March 2026, 07:3" in result
    assert kinds(events(config, "d"), "clock_jumped")
    await run.adapter.close()


async def test_short_sleeps_are_not_skipped(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"d": {"benchmark": "days", "agent": "fixture_agents_vt:ClockAgent"}})

    def slow_skip(settings: RunSettings) -> None:
        quick(settings)
        settings.time_master_min_sleep = 3600  # an hour: a 5-minute sleep is not skipped

    run = build_run(config, "d", tune=slow_skip)
    await run._initialise()
    run.clock.offset += 299.7  # 0.3 s before 20:05 of virtual time
    await run.tool_wait("20:05")
    assert not kinds(events(config, "d"), "clock_jumped")
    await run.adapter.close()


async def test_the_clock_survives_stop_and_resume(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"d": {"benchmark": "days", "agent": "chatbot"}})
    run = build_run(config, "d", tune=quick)
    task = asyncio.create_task(run.run())
    while run.state.phase_index < 2:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    saved = datetime.fromisoformat(run.state.clock_now)
    assert saved >= datetime(2026, 3, 2, 21, 0)
    await asyncio.sleep(0.3)
    resumed = build_run(config, "d", tune=quick)
    assert abs((resumed.clock.now() - saved).total_seconds()) < 2  # not real time, not the start time
    assert await resumed.run() is TerminationReason.FINISHED


async def test_agents_without_virtual_time_refuse_time_master_benchmarks(tmp_path: Path) -> None:
    config = make_config(tmp_path, {
        "d": {"benchmark": "days", "agent": "fixture_agents:ForgetfulAgent"},
        "ok": {"benchmark": "days", "agent": "fixture_agents:ForgetfulAgent", "allow_real_time": True},
    })
    with pytest.raises(BuildError, match='runs.d: .*cannot follow it; set "allow_real_time": true'):
        build_run(config, "d")
    assert build_run(config, "ok").bench.time_master


async def test_wait_is_refused_in_real_time_scenarios(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": "chatbot"}})
    run = build_run(config, "r", tune=quick)
    with pytest.raises(ToolError, match="only available in virtual-time scenarios"):
        await run.tool_wait("07:30")


def test_a_time_of_day_in_a_phase_dated_ahead_means_that_day() -> None:
    from datetime import date

    from engine.phases import parse_wait_target

    evening = datetime(2026, 3, 2, 21, 0)
    assert parse_wait_target("21:30", evening) == datetime(2026, 3, 2, 21, 30)  # next occurrence: tonight
    assert parse_wait_target("21:30", evening, date(2026, 3, 3)) == datetime(2026, 3, 3, 21, 30)  # the phase's day
    assert parse_wait_target("07:30", evening, date(2026, 3, 2)) == datetime(2026, 3, 3, 7, 30)
    assert parse_wait_target("2026-03-05 08:00", evening) == datetime(2026, 3, 5, 8, 0)
    with pytest.raises(ValueError, match="HH:MM"):
        parse_wait_target("soon", evening)
