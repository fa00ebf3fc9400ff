"""The report entry lists the operator's interventions and the waits over a minute (issue 25): read from the
transcript, once each across a kill and a resume; a hung persona call aborted from the app; long waits timed on
a manual clock (no test sleeps a real minute), short ones left out."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import FORGETFUL, events, fast, kinds, make_config, play, scaled
from tui_fakes import wait_until

from engine.clock import ManualClock
from engine.commands import AbortCall, Pause, PersonaNote, Resume
from engine.config import Config
from engine.events import (
    ErrorOccurred,
    Event,
    ModelRetried,
    OperatorActed,
    RunEnded,
    RunStarted,
    StatusChanged,
    TerminationReason,
)
from engine.placement.scheduler import Scheduler
from engine.report import interventions
from engine.report.interventions import Tick, collect, intervention_lines, read_interventions
from engine.report.parse import parse_report_entries
from engine.report.writer import format_entry
from engine.run.build import build_run
from mmb_tui.app import make_app

NOON = datetime(2026, 8, 19, 12, 0)


def _t(hour: int, minute: int, second: int = 0) -> str:
    return f"2026-08-19T{hour:02d}:{minute:02d}:{second:02d}"


def _lines(found: interventions.InterventionLog, virtual: bool = False, now: datetime = NOON) -> list[str]:
    return intervention_lines(found, virtual, now)


def _entry(config: Config) -> str:
    """The run's one report entry (asserted one)."""
    text = (config.results_path() / "report.md").read_text(encoding="utf-8")
    assert text.count("\n## ") + text.startswith("## ") == 1, text
    return text


def _line(entry: str, prefix: str) -> str:
    return next(line for line in entry.splitlines() if line.startswith("📊 " + prefix)).removeprefix("📊 ")


async def _until(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    async with asyncio.timeout(scaled(timeout)):
        while not predicate():
            await asyncio.sleep(0.005)


# ---- from the events: what is listed, how ----------------------------------------------------------------


DAY: list[Event | Tick] = [
    RunStarted(t=_t(10, 0), run_id="r", benchmark="b", agent="a"),
    Tick(_t(10, 1), "message_sent"),
    OperatorActed(t=_t(10, 42), action="pause"),
    StatusChanged(t=_t(10, 42), status="paused", reason="paused by the operator"),
    OperatorActed(t=_t(10, 50), action="persona_note", detail="ask about the pets"),
    OperatorActed(t=_t(10, 54), action="resume"),
    StatusChanged(t=_t(10, 54), status="running"),
    Tick(_t(11, 2, 50), "tool_called"),  # the persona's call begins after it
    *(
        ModelRetried(t=_t(11, 3 + i), attempt=2 + i, of=4, delay=60, reason="HTTP 429: rate limited")
        for i in range(3)
    ),
    Tick(_t(11, 5), "persona_thinking"),  # answered
    Tick(_t(11, 20), "message_sent"),
    OperatorActed(
        t=_t(11, 20, 50),
        action="abort_call",
        detail="the wait for the agent's reply was cut short",
        cut="agent reply",
    ),
    Tick(_t(11, 21, 1), "message_sent"),
    Tick(_t(11, 30), "message_sent"),
    ErrorOccurred(
        t=_t(11, 40), where="agent", message="no reply from the agent within 600 s (attempt 1/4; …)"
    ),
    StatusChanged(t=_t(11, 40), status="waiting", reason="agent: no reply"),
    StatusChanged(t=_t(11, 40, 30), status="running"),  # the back-off over, the agent started again
    Tick(_t(11, 40, 31), "message_sent"),
    Tick(_t(11, 50), "message_sent"),
    ModelRetried(t=_t(11, 50, 20), attempt=2, of=4, delay=20, reason="HTTP 500"),  # 30 s in all: not listed
    Tick(_t(11, 50, 30), "tool_called"),
]


def test_interventions_and_the_waits_over_a_minute_with_what_when_and_how_long() -> None:
    assert _lines(collect(DAY)) == [
        "Operator: 3 interventions (local time) — pause 10:42 (paused 12m), note 10:50,"
        " abort_call 11:20 (the wait for the agent's reply)",
        "Waits over a minute: 2 (local time) — persona model 11:02–11:05 (2m10s, 3 retries after HTTP 429:"
        " rate limited), agent 11:30–11:40 (10m31s, failed: no reply from the agent within 600 s, revived)",
    ]


def test_a_wait_under_a_minute_is_not_listed_and_none_says_none() -> None:
    short = [
        Tick(_t(11, 0), "tool_called"),
        ModelRetried(t=_t(11, 0, 20), attempt=2, of=4, delay=20, reason="HTTP 429"),
        ErrorOccurred(
            t=_t(11, 0, 40), where="persona model", message="HTTP 429 (attempt 1/4; retrying in 5 s)"
        ),
        StatusChanged(t=_t(11, 0, 40), status="waiting", reason="persona model: HTTP 429"),
        StatusChanged(t=_t(11, 0, 45), status="running"),
        Tick(_t(11, 0, 59), "message_sent"),  # 59 s after the call began
    ]
    assert _lines(collect(short)) == ["Operator: none", "Waits over a minute: none"]
    assert _lines(collect([])) == ["Operator: none", "Waits over a minute: none"]


def test_a_wait_for_the_operator_is_listed_across_the_restart_however_long() -> None:
    stuck: list[Event | Tick] = [
        Tick(_t(11, 0), "tool_called"),
        StatusChanged(t=_t(11, 0), status="waiting", reason="persona stuck (41 turns in phase 3)"),
        RunEnded(t=_t(11, 0), reason=TerminationReason.WAITING),
    ]
    # the entry written as the run ends waiting, then the final one after the resume
    assert _lines(collect(stuck), now=datetime(2026, 8, 19, 11, 0))[1] == (
        "Waits over a minute: 1 (local time) — for the operator from 11:00 (0s so far, persona stuck (41 turns in"
        " phase 3))"
    )
    resumed: list[Event | Tick] = [
        *stuck,
        RunStarted(t=_t(11, 0, 30), run_id="r", benchmark="b", agent="a", resumed=True),
        StatusChanged(t=_t(11, 0, 30), status="running"),
        Tick(_t(11, 0, 40), "tool_called"),
    ]
    assert _lines(collect(resumed), virtual=True)[1] == (
        "Waits over a minute: 1 (virtual clock) — for the operator 11:00–11:00 (40s, persona stuck (41 turns in"
        " phase 3), resumed 11:00 (the virtual clock stood still while the run was down))"
    )


def test_a_pause_ends_the_wait_it_comes_in() -> None:
    paused: list[Event | Tick] = [
        Tick(_t(11, 0), "message_sent"),
        ErrorOccurred(t=_t(11, 10), where="agent", message="no reply from the agent within 600 s"),
        StatusChanged(t=_t(11, 10), status="waiting", reason="agent: no reply"),
        StatusChanged(t=_t(11, 10, 30), status="running"),
        OperatorActed(t=_t(11, 11), action="pause"),  # applied before the message goes again
        OperatorActed(t=_t(11, 41), action="resume"),
        Tick(_t(11, 41, 1), "message_sent"),
    ]
    assert _lines(collect(paused)) == [
        "Operator: 1 intervention (local time) — pause 11:11 (paused 30m)",
        "Waits over a minute: 1 (local time) — agent 11:00–11:11 (11m, failed: no reply from the agent within 600"
        " s, revived, cut short by the operator (pause))",
    ]


def test_a_kill_ends_a_pause_at_the_restart_and_a_wait_at_the_last_event_before_it() -> None:
    killed: list[Event | Tick] = [
        Tick(_t(9, 0), "tool_called"),
        ModelRetried(t=_t(9, 1), attempt=2, of=4, delay=60, reason="HTTP 503"),
        Tick(_t(9, 2), "persona_thinking"),
        OperatorActed(t=_t(10, 0), action="pause"),
        StatusChanged(t=_t(10, 0), status="paused"),
        # killed while paused; played again the next day
        RunStarted(t="2026-08-20T08:30:00", run_id="r", benchmark="b", agent="a", resumed=True),
        Tick("2026-08-20T08:31:00", "tool_called"),
        ModelRetried(t="2026-08-20T08:32:00", attempt=2, of=4, delay=60, reason="HTTP 503"),
        ModelRetried(t="2026-08-20T08:33:00", attempt=3, of=4, delay=60, reason="HTTP 503"),
        RunStarted(t="2026-08-20T09:00:00", run_id="r", benchmark="b", agent="a", resumed=True),  # killed
    ]
    assert _lines(collect(killed), now=datetime(2026, 8, 20, 9)) == [
        "Operator: 1 intervention (local time) — pause 08-19 10:00 (paused 22h30m, until the restart)",
        "Waits over a minute: 2 (local time) — persona model 08-19 09:00–09:02 (2m, 1 retry after HTTP 503),"
        " persona model 08-20 08:31–08:33 (2m, 2 retries after HTTP 503, until the run stopped)",
    ]


def test_a_long_list_is_cut_after_the_first_ones() -> None:
    notes = [OperatorActed(t=_t(10, i), action="persona_note", detail=f"note {i}") for i in range(11)]
    operator = _lines(collect(notes))[0]
    assert operator.startswith("Operator: 11 interventions (local time) — note 10:00, note 10:01,")
    assert operator.endswith(", note 10:07, … and 3 more") and operator.count("note 10:") == 8


def test_the_transcript_is_streamed_and_only_the_events_that_matter_are_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "transcript.jsonl"
    whole = [e for e in DAY if not isinstance(e, Tick)]
    with path.open("w", encoding="utf-8") as handle:
        for n, event in enumerate(DAY):
            if isinstance(event, Tick):  # an event the reader only times: a long reply of the agent
                text = json.dumps(
                    {"t": event.t, "n": n, "kind": event.kind, "text": "x" * 5000}, separators=(",", ":")
                )
                handle.write(text + "\n")
            else:
                event.n = n
                handle.write(event.model_dump_json() + "\n")
        handle.write('{"t":"2026-08-19T11:51:00","n":99,"kind":"operator","act')  # torn by a kill
    parsed: list[bytes] = []
    adapter = interventions.EVENT_ADAPTER

    class Counting:
        def validate_json(self, line: bytes) -> Any:
            parsed.append(line)
            return adapter.validate_json(line)

    monkeypatch.setattr(interventions, "EVENT_ADAPTER", Counting())
    assert read_interventions(path) == collect(DAY)
    assert len(parsed) == len(whole) + 1  # and the torn line, skipped
    assert read_interventions(tmp_path / "none.jsonl") == interventions.InterventionLog()


def test_the_lines_are_read_back_from_the_report(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    run = build_run(config, "r", tune=fast)
    run.recorder.transcript.close()
    if run.lock is not None:
        run.lock.release()
    summary = run.summary()
    text = format_entry(replace(summary, interventions=collect(DAY)))
    (entry,) = parse_report_entries(text)
    assert (entry.interventions, entry.long_waits) == (3, 2)
    assert entry.text().split("\n", 1)[1] == text.split("\n", 1)[1]  # the 📊 lines as written
    (quiet,) = parse_report_entries(format_entry(summary))
    assert (quiet.interventions, quiet.long_waits) == (0, 0)
    assert "Operator" not in format_entry(replace(summary, interventions=None))


# ---- whole runs -------------------------------------------------------------------------------------------

HUNG_PERSONA = "scripted/persona?faults=1:hang"


def _files(folder: Path) -> dict[Path, bytes]:
    """A run folder's files as a kill -9 would leave them now (a file being replaced is read whole, old or new)."""
    found = {}
    for path in folder.rglob("*"):
        try:
            found[path] = path.read_bytes()
        except (IsADirectoryError, FileNotFoundError):
            continue
    return found


def _restore(folder: Path, files: dict[Path, bytes]) -> None:
    for path in folder.rglob("*"):
        if path.is_file() and path not in files:
            path.unlink()
    for path, data in files.items():
        path.write_bytes(data)


async def test_a_pause_a_note_and_an_abort_are_listed_once_across_a_kill_and_a_resume(tmp_path: Path) -> None:
    models: dict[str, dict[str, Any]] = {"p": {"model": HUNG_PERSONA, "latency": 0.01}}
    config = make_config(
        tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL, "persona": "p"}}, models=models
    )
    run = build_run(config, "r", tune=fast)
    folder, send = config.results_path() / "r", run.adapter.send_message
    armed, left = [False], [dict[Path, bytes]()]  # the files a kill -9 left

    async def killed_at_the_first_send_after_the_resume(text: str) -> None:
        if armed[0]:
            left[0] = _files(folder)  # the moment of the kill -9
            raise asyncio.CancelledError
        await send(text)

    run.adapter.send_message = killed_at_the_first_send_after_the_resume  # type: ignore[method-assign]
    task = asyncio.create_task(run.run())
    await _until(lambda: run.liveness.activity.waiting_for == "persona model")  # its first call hangs
    assert (await run.command(AbortCall())).ok
    await _until(lambda: bool(kinds(events(config, "r"), "message_sent")))
    pause = run.command(Pause())
    await _until(lambda: run.state.status == "paused")
    assert (await pause).ok and (await run.command(PersonaNote(text="ask about the pets"))).ok
    armed[0] = True
    assert (await run.command(Resume())).ok
    with pytest.raises(asyncio.CancelledError):
        await task
    assert left[0], "killed at a send after the resume"
    _restore(folder, left[0])

    models["p"]["model"] = "scripted/persona"  # a fault plan counts from the first call of each session
    config = make_config(
        tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL, "persona": "p"}}, models=models
    )
    async with asyncio.timeout(scaled(30)):
        resumed = await play(config, "r")
    assert resumed.termination is TerminationReason.FINISHED
    evts = events(config, "r")
    assert [e.action for e in kinds(evts, "operator")] == ["abort_call", "pause", "persona_note", "resume"]
    assert sum(1 for e in kinds(evts, "run_started") if e.resumed) == 1
    operator = _line(_entry(config), "Operator:")
    assert operator.startswith("Operator: 3 interventions (local time) — abort_call ")
    assert "(the persona model call), pause " in operator and "(paused " in operator
    assert operator.count("abort_call") == operator.count("pause ") == operator.count("note ") == 1
    assert _line(_entry(config), "Waits over a minute:") == "Waits over a minute: none"


async def test_a_hung_persona_call_aborted_from_the_app_is_in_the_entry_of_the_finished_run(
    tmp_path: Path,
) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL, "persona": HUNG_PERSONA}})
    scheduler = Scheduler(config, tune=fast)
    app = make_app(scheduler, tmp_path / "config.jsonc", clock_frozen=True, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("s")
        await wait_until(pilot, lambda: scheduler.view("r").activity.waiting_for == "persona model")
        await pilot.press("a")
        await wait_until(pilot, lambda: scheduler.view("r").status == "finished", timeout=20)
    (abort,) = kinds(events(config, "r"), "operator")
    assert abort.action == "abort_call" and "persona model call was cut short" in abort.detail
    operator = _line(_entry(config), "Operator:")
    assert operator.startswith("Operator: 1 intervention (local time) — abort_call ")
    assert operator.endswith(" (the persona model call)")


async def test_a_hung_call_cut_short_after_two_minutes_is_a_long_wait_on_the_runs_clock(
    tmp_path: Path,
) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL, "persona": HUNG_PERSONA}})
    clock = ManualClock()  # 2026-08-19 10:00, moved only by the test
    run = build_run(config, "r", clock_factory=lambda: clock, tune=fast)
    task = asyncio.create_task(run.run())
    await _until(lambda: run.liveness.activity.waiting_for == "persona model")
    clock.advance(125)
    assert (await run.command(AbortCall())).ok
    async with asyncio.timeout(scaled(20)):
        assert await task is TerminationReason.FINISHED
    entry = _entry(config)
    assert _line(entry, "Operator:") == (
        "Operator: 1 intervention (local time) — abort_call 10:02 (the persona model call)"
    )
    assert _line(entry, "Waits over a minute:") == (
        "Waits over a minute: 1 (local time) — persona model 10:00–10:02 (2m05s, cut short by the operator"
        " (abort_call))"
    )


async def test_back_offs_over_a_minute_are_listed_and_shorter_ones_not(tmp_path: Path) -> None:
    persona = "scripted/persona?faults=2:500,4:500"
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL, "persona": persona}})
    clock = ManualClock()
    run = build_run(config, "r", clock_factory=lambda: clock, tune=fast)
    backed_off = [90.0, 20.0]  # what each back-off lasts on the run's clock

    async def back_off(seconds: float) -> None:
        clock.advance(backed_off.pop(0))

    run.operator.back_off = back_off  # type: ignore[method-assign]
    async with asyncio.timeout(scaled(20)):
        assert await run.run() is TerminationReason.FINISHED
    assert not backed_off
    entry = _entry(config)
    assert _line(entry, "Waits over a minute:") == (
        "Waits over a minute: 1 (local time) — persona model 10:00–10:01 (1m30s, failed: HTTP 500: scripted"
        " server error (call 2))"
    )
    assert _line(entry, "Operator:") == "Operator: none"
