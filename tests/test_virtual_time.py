"""Virtual time: the clock, wait, the Time Master's jumps and the time gate (SPEC §7)."""

from __future__ import annotations

import asyncio
from datetime import date, datetime, time
from pathlib import Path

import pytest
from engine_helpers import ROOT, events, kinds, make_config
from fixture_agents import ClockAgent

from engine.config import BuildError
from engine.events import ClockJumped, TerminationReason
from engine.persona.context import build_system_prompt, drop_section
from engine.persona.notebook import ToolError
from engine.persona.tools import TOOL_NAMES, tool_schemas
from engine.run.build import build_run
from engine.run.parts import RunSettings
from engine.run.phases import WaitTarget, now_line, parse_wait_target


def quick(settings: RunSettings) -> None:
    settings.time_master_min_sleep = 5
    settings.time_master_pre_wake = 0.05
    settings.time_master_poll = 0.01
    settings.agent_quiet_seconds = 0.05
    settings.agent_poll_seconds = 0.001
    settings.fault_backoff = 0.01


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
    config = make_config(tmp_path, {"d": {"benchmark": "days", "agent": "fixture_agents:ClockAgent"}})
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
    config = make_config(tmp_path, {"d": {"benchmark": "days", "agent": "fixture_agents:ClockAgent"}})
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
    config = make_config(tmp_path, {"d": {"benchmark": "days", "agent": "fixture_agents:NoStatusAgent"}})
    run = build_run(config, "d", tune=quick)
    await run._initialise()
    result = await run.tool_wait("2026-03-02 07:30")
    assert "It is now Monday 2 March 2026, 07:3" in result
    assert kinds(events(config, "d"), "clock_jumped")
    await run.adapter.close()


async def test_short_sleeps_are_not_skipped(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"d": {"benchmark": "days", "agent": "fixture_agents:ClockAgent"}})

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
    config = make_config(
        tmp_path,
        {
            "d": {"benchmark": "days", "agent": "fixture_agents:ForgetfulAgent"},
            "ok": {"benchmark": "days", "agent": "fixture_agents:ForgetfulAgent", "allow_real_time": True},
        },
    )
    with pytest.raises(BuildError, match='runs.d: .*cannot follow it; set "allow_real_time": true'):
        build_run(config, "d")
    assert build_run(config, "ok").bench.time_master


def test_a_real_agents_clock_is_moved_only_when_its_benchmark_runs_on_virtual_time(tmp_path: Path) -> None:
    config = make_config(
        tmp_path,
        {
            "days": {"benchmark": "days", "agent": "hermes"},
            "real": {"benchmark": "full", "agent": "hermes"},
            "asked": {"benchmark": "full", "agent": "hermes", "virtual_time": True},
        },
    )
    assert [build_run(config, run).adapter.virtual_time for run in ("days", "real", "asked")] == [
        True,
        False,
        True,
    ]  # type: ignore[attr-defined]


async def test_wait_is_refused_in_real_time_scenarios(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": "chatbot"}})
    run = build_run(config, "r", tune=quick)
    with pytest.raises(ToolError, match="only available in virtual-time scenarios"):
        await run.tool_wait("07:30")


# ---- the shipped multiday's values: start 20:00, first action at 20:00 -------------------------------


async def test_a_wait_to_the_start_minute_called_just_after_it_is_now(tmp_path: Path) -> None:
    """``benchmarks/multiday`` starts at 20:00 and its first action is at 20:00: the persona's first
    ``wait("20:00")`` comes a few milliseconds after 20:00 and must not mean 20:00 tomorrow."""
    config = make_config(
        tmp_path,
        {"md": {"benchmark": "multiday", "agent": "fixture_agents:ClockAgent"}},
        benchmarks=ROOT / "benchmarks",
    )
    run = build_run(config, "md", tune=quick)
    await run._initialise()
    assert run.bench.start_time == datetime(2026, 3, 1, 20, 0)
    assert run.current_phase().anchors[0] == time(20, 0)  # the first action is at the start time
    assert run.clock.now() > datetime(2026, 3, 1, 20, 0)  # microseconds after, as in a real run
    result = await run.tool_wait("20:00")
    assert (
        result
        == f"Nothing to wait for: 20:00 has already come. {now_line(run.clock.now())} Carry on with your phase."
    )
    assert "Sunday 1 March 2026, 20:00" in result
    assert run.clock.now() < datetime(2026, 3, 1, 20, 1)
    assert not kinds(events(config, "md"), "clock_jumped")
    await run.adapter.close()


async def test_a_wait_to_a_past_datetime_says_so_and_sleeps_nothing(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"d": {"benchmark": "days", "agent": "fixture_agents:ClockAgent"}})
    run = build_run(config, "d", tune=quick)
    await run._initialise()
    before = run.clock.now()
    result = await run.tool_wait("2026-02-28 09:00")
    assert result.startswith(
        "Nothing to wait for: 2026-02-28 09:00 has already come. It is now Sunday 1 March 2026, 20:00."
    )
    assert (run.clock.now() - before).total_seconds() < 0.5 and not kinds(events(config, "d"), "clock_jumped")
    with pytest.raises(ToolError, match=r"HH:MM.*YYYY-MM-DD HH:MM.*YYYY-MM-DDTHH:MM\[:SS\]"):
        await run.tool_wait("tomorrow morning")
    await run.adapter.close()


def test_now_line_names_the_weekday_date_and_time() -> None:
    assert now_line(datetime(2026, 3, 1, 20, 0, 0, 4000)) == "It is now Sunday 1 March 2026, 20:00."
    assert now_line(datetime(2026, 3, 14, 9, 5)) == "It is now Saturday 14 March 2026, 09:05."


# ---- parse_wait_target, every branch -------------------------------------------------------------

JUST_AFTER_EIGHT = datetime(2026, 3, 1, 20, 0, 0, 3000)  # 3 ms after the start time
SUN, MON = date(2026, 3, 1), date(2026, 3, 2)


def _ahead(until: str, now: datetime, phase_day: date | None = None) -> datetime:
    target = parse_wait_target(until, now, phase_day)
    assert target.ahead and target.until > now
    return target.until


def _now(until: str, now: datetime, phase_day: date | None = None) -> WaitTarget:
    target = parse_wait_target(until, now, phase_day)
    assert not target.ahead and target.until == now
    return target


def test_the_current_minute_means_now() -> None:
    assert _now("20:00", JUST_AFTER_EIGHT, SUN).asked == "20:00"  # the shipped multiday's first action
    assert _now("20:00", JUST_AFTER_EIGHT).asked == "20:00"  # no date line: not tomorrow either
    assert _now("20:00", datetime(2026, 3, 1, 20, 0, 59), SUN)
    assert _now("8:00", datetime(2026, 3, 1, 8, 0), SUN).asked == "08:00"  # exactly on the minute


def test_earlier_on_the_phases_day_means_now() -> None:
    evening = datetime(2026, 3, 2, 21, 0)
    assert _now("07:30", evening, MON).asked == "07:30"  # the phase's day has already reached 07:30
    assert _now("20:59", evening, MON)


def test_a_later_time_on_the_phases_day_is_today() -> None:
    assert _ahead("21:30", datetime(2026, 3, 2, 21, 0), MON) == datetime(2026, 3, 2, 21, 30)
    assert _ahead("20:01", JUST_AFTER_EIGHT, SUN) == datetime(2026, 3, 1, 20, 1)


def test_a_phase_dated_ahead_means_that_time_on_its_day() -> None:
    assert _ahead("07:30", JUST_AFTER_EIGHT, MON) == datetime(2026, 3, 2, 7, 30)
    assert _ahead("21:30", datetime(2026, 3, 2, 21, 0), date(2026, 3, 3)) == datetime(2026, 3, 3, 21, 30)
    assert _ahead("20:00", JUST_AFTER_EIGHT, MON) == datetime(2026, 3, 2, 20, 0)  # that day's 20:00, not now
    assert _ahead("09:00", JUST_AFTER_EIGHT, date(2026, 3, 8)) == datetime(2026, 3, 8, 9, 0)  # days ahead


def test_a_phase_whose_day_is_over_has_nothing_to_wait_for() -> None:
    past_midnight = datetime(2026, 3, 3, 0, 30)
    assert _now("21:00", past_midnight, MON)
    assert _now("07:30", past_midnight, MON)


def test_without_a_date_line_a_time_of_day_is_its_next_occurrence() -> None:
    evening = datetime(2026, 3, 2, 21, 0)
    assert _ahead("21:30", evening) == datetime(2026, 3, 2, 21, 30)  # tonight
    assert _ahead("07:30", evening) == datetime(2026, 3, 3, 7, 30)  # tomorrow morning
    assert _ahead("20:59", evening) == datetime(2026, 3, 3, 20, 59)  # a minute ago: tomorrow


def test_a_date_and_time_in_every_form() -> None:
    evening = datetime(2026, 3, 2, 21, 0)
    for text in ("2026-03-05 08:00", "2026-03-05T08:00", "2026-03-05T08:00:00", "  2026-03-05 8:00 "):
        assert _ahead(text, evening, MON) == datetime(2026, 3, 5, 8, 0), text
    assert _ahead("2026-03-02T21:00:30", evening) == datetime(2026, 3, 2, 21, 0, 30)
    assert parse_wait_target("2026-03-05T08:00", evening).asked == "2026-03-05 08:00"


def test_a_date_and_time_not_ahead_means_now() -> None:
    assert _now("2026-03-01 20:00", JUST_AFTER_EIGHT, SUN).asked == "2026-03-01 20:00"  # microseconds past
    assert _now("2026-02-28T09:00:00", JUST_AFTER_EIGHT).asked == "2026-02-28 09:00"


@pytest.mark.parametrize(
    "text", ["soon", "", "25:00", "20:60", "2026-03-05", "2026-13-05 08:00", "8pm", "2026-03-05T08:00Z"]
)
def test_unreadable_targets_name_every_form(text: str) -> None:
    with pytest.raises(ValueError, match=r"HH:MM.*YYYY-MM-DD HH:MM.*YYYY-MM-DDTHH:MM\[:SS\]"):
        parse_wait_target(text, JUST_AFTER_EIGHT, SUN)


# ---- time only where there is time ----------------------------------------------------------------


def test_wait_and_the_time_section_only_in_virtual_time() -> None:
    names = [t["function"]["name"] for t in tool_schemas(True)]
    assert names == TOOL_NAMES and "wait" in names  # the full list stays for existing imports
    assert [t["function"]["name"] for t in tool_schemas(False)] == [n for n in TOOL_NAMES if n != "wait"]
    real = build_system_prompt("Be Ola.", "1.1 Ola", ["profile", "runs"], virtual_time=False)
    virtual = build_system_prompt("Be Ola.", "1.1 Ola", ["profile", "runs"], virtual_time=True)
    assert "# Time" in virtual and "`wait`" in virtual
    assert "# Time" not in real and "`wait`" not in real and "virtual clock" not in real
    for kept in (
        "# Who you are",
        "# Style",
        "# Your scenario",
        "Be Ola.",
        "# Your profile",
        "# Fact sheets",
        "`runs`",
    ):
        assert kept in real, kept
    assert drop_section("# A\na\n# Time\nt\n## sub\nt2\n# B\nb\n", "Time") == "# A\na\n# B\nb\n"
    assert drop_section("# A\na\n# Time\nt\n", "Time") == "# A\na\n"


def test_the_wait_tool_and_the_prompt_list_every_form() -> None:
    wait = next(t for t in tool_schemas(True) if t["function"]["name"] == "wait")["function"]
    virtual = build_system_prompt("", "", ["profile"], virtual_time=True)
    for form in ("HH:MM", "YYYY-MM-DD HH:MM", "YYYY-MM-DDTHH:MM", "YYYY-MM-DDTHH:MM:SS"):
        assert form in wait["description"] and form in virtual, form
    assert "already" in wait["description"]
