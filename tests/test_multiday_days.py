"""The shipped ``benchmarks/multiday`` played offline delivers every dated message on its day (issue 9).

One play with the scripted persona, the ``chatbot`` control (``scripted/recall``) and the shipped time
settings of ``config.jsonc`` (min_sleep_to_skip 5, pre_wake_delay 1, poll_interval 1). The clock is real
time plus an offset, as in a real run (so the persona's first ``wait("20:00")`` comes a few microseconds
after the 20:00 start), except that its sleeps fast-forward the offset instead of passing in real time:
the same waits, jumps and stamps, in a few seconds instead of ~25. The expected days come from
``benchmarks/multiday/KEY.md``.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

import pytest
from engine_helpers import ROOT, events, fast, make_config

from engine.benchmark.model import Benchmark
from engine.clock import Clock
from engine.events import Event, MessageSent, PhaseStarted, TerminationReason, ToolCalled
from engine.run.build import build_run

MULTIDAY = ROOT / "benchmarks" / "multiday"
SHIPPED_TIME = {"min_sleep_to_skip": 5, "pre_wake_delay": 1, "poll_interval": 1}  # config.jsonc "time_master"


class FastForwardClock(Clock):
    """Real time plus an offset; a sleep moves the offset on at once instead of passing in real time."""

    async def sleep(self, seconds: float) -> None:
        self.offset += max(0.0, seconds)
        await asyncio.sleep(0)


@dataclass
class Played:
    bench: Benchmark
    reason: TerminationReason
    events: list[Event]
    evaluated: set[str]
    key: str

    def sent(self) -> list[tuple[int, MessageSent]]:
        """Every message sent to the agent, with the index of the phase it was sent in."""
        phase, sent = -1, []
        for event in self.events:
            if isinstance(event, PhaseStarted):
                phase = event.index
            elif isinstance(event, MessageSent):
                sent.append((phase, event))
        return sent


def _day(event: Event) -> date:
    return datetime.fromisoformat(event.t).date()


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    tmp_path: Path = tmp_path_factory.mktemp("multiday")
    config = make_config(
        tmp_path,
        {"md": {"benchmark": "multiday", "agent": "chatbot"}},
        benchmarks=ROOT / "benchmarks",
        time_master=SHIPPED_TIME,
    )
    run = build_run(config, "md", clock_factory=FastForwardClock, tune=fast)
    assert (
        run.settings.time_master_min_sleep,
        run.settings.time_master_pre_wake,
        run.settings.time_master_poll,
    ) == (5, 1, 1)
    reason = asyncio.run(run.run())
    return Played(
        run.bench,
        reason,
        events(config, "md"),
        set(run.state.evaluations),
        (MULTIDAY / "KEY.md").read_text(encoding="utf-8"),
    )


def test_it_plays_to_the_end_with_full_check_coverage(played: Played) -> None:
    assert played.reason is TerminationReason.FINISHED
    checks = {c.id for phase in played.bench.phases for c in phase.checks}
    assert len(checks) == 13 and played.evaluated == checks
    assert played.events[0].t.startswith("2026-03-01T20:00")  # the benchmark's start_time


def test_the_first_wait_at_the_start_minute_sleeps_nothing(played: Played) -> None:
    first = next(e for e in played.events if isinstance(e, ToolCalled) and e.name == "wait")
    assert first.arguments == {"until": "20:00"} and not first.error
    assert first.result.startswith(
        "Nothing to wait for: 20:00 has already come. It is now Sunday 1 March 2026, 20:00."
    )


def test_the_weigh_in_of_1_march_reaches_the_agent_on_1_march(played: Played) -> None:
    assert re.search(r"weigh-ins \(three, Sundays\):\s+1 March 68\.2 kg", played.key)  # KEY.md
    weigh_in = next(m for _, m in played.sent() if "68.2 kg" in m.text)
    assert _day(weigh_in) == date(2026, 3, 1), weigh_in.t
    assert weigh_in.t >= "2026-03-01T20:00"


def test_the_first_parkrun_reaches_the_agent_on_saturday_7_march(played: Played) -> None:
    assert re.search(r"Sat 7 — parkrun 5 km,\s+27:40", played.key)  # KEY.md
    parkrun = next(m for _, m in played.sent() if "parkrun" in m.text.lower() and "27:40" in m.text)
    assert _day(parkrun) == date(2026, 3, 7) and _day(parkrun).strftime("%A") == "Saturday", parkrun.t


def test_every_message_of_a_dated_phase_is_sent_on_that_phases_date(played: Played) -> None:
    sent = played.sent()
    assert len(sent) > 30
    wrong = [
        (played.bench.phases[i].title, str(played.bench.phases[i].date), m.t, m.text[:40])
        for i, m in sent
        if played.bench.phases[i].date is not None and _day(m) != played.bench.phases[i].date
    ]
    assert not wrong
    assert {played.bench.phases[i].date for i, _ in sent} >= {
        date(2026, 3, d) for d in (1, 2, 3, 4, 5, 6, 7, 9, 15)
    }


def test_the_silent_day_sends_nothing(played: Played) -> None:
    # Day 8 (Sun 8 March, chapter2.md) is the day without signal: the persona sends nothing at all.
    # NOTE: fails until benchmarks/multiday/chapter2.md is fixed (issue 9, content helper): there, a wrapped
    # line of Day 8 starts "tell the assistant tomorrow…", which the scripted persona reads as a Tell
    # directive and sends. Not a time bug; the other tests of this file do not depend on it.
    silent = next(p for p in played.bench.phases if p.date == date(2026, 3, 8))
    assert "no signal" in silent.body
    spoken = [m.text for i, m in played.sent() if i == silent.index or _day(m) == silent.date]
    assert spoken == []
