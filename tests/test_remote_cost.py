"""What watching a run played by another process costs (issue 25, point 2), counted, not timed: a stream of
events costs a view an interval, not a view a burst; a backlog reaches the observers in slices with the loop
running between them; a run whose own view is not at hand is not read again from its files at every
checkpoint. The CPU itself is ``bench/viewer_cpu.py``'s."""

from __future__ import annotations

import asyncio
import itertools
import os
from pathlib import Path

import pytest
from engine_helpers import ROOT, make_config, play
from test_remote import until

from engine.api import RunView
from engine.commands import Command, CommandResult
from engine.events import Event, PersonaThinking
from engine.placement import scheduler as scheduler_module
from engine.placement.remote import ControlServer, RemoteRun
from engine.placement.scheduler import Scheduler
from engine.run.lock import RunLock
from engine.state import load_state


async def _done(_: Command) -> CommandResult:
    return CommandResult(ok=True, message="done")


def _event(n: int) -> PersonaThinking:
    return PersonaThinking(text=f"thought {n}", t="2026-08-19T10:00:00", n=n)


async def test_a_stream_of_events_costs_one_view_an_interval_not_one_a_burst(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(RemoteRun, "VIEW_EVERY", 3600.0)  # an interval longer than the test
    monkeypatch.setattr(RemoteRun, "POLL", 3600.0)
    asked: list[int] = []

    def view() -> RunView:
        asked.append(len(asked))
        return RunView(run_id="r", benchmark="b", agent="a", status="running")

    server = ControlServer(tmp_path / "control.sock", view, _done)
    await server.start()
    seen: list[Event] = []
    reader = RemoteRun("r", server.path, tmp_path / "transcript.jsonl", lambda _r, e: seen.append(e))
    await until(lambda: reader.view is not None and len(server._subscribers) == 1)
    for n in range(300):
        server.on_event("r", _event(n))
        if n % 7 == 0:
            await asyncio.sleep(0)  # bursts of every size
    await until(lambda: len(seen) == 300)
    await asyncio.sleep(0.3)  # room for a view asked per burst, had it been
    assert [e.n for e in seen] == list(range(300)) and len(asked) == 1
    await reader.aclose()
    await server.close()


async def test_a_backlog_reaches_the_observers_in_slices_the_loop_running_between(tmp_path: Path) -> None:
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text("".join(_event(n).model_dump_json() + "\n" for n in range(1000)), encoding="utf-8")
    view = RunView(run_id="r", benchmark="b", agent="a")
    server = ControlServer(tmp_path / "control.sock", lambda: view, _done, transcript)
    await server.start()
    turns = itertools.count()
    turn = 0

    async def loop_turns() -> None:
        nonlocal turn
        while True:
            turn = next(turns)
            await asyncio.sleep(0)

    ticking = asyncio.create_task(loop_turns())
    handed: list[int] = []  # the loop's turn at which each event was handed over
    reader = RemoteRun("r", server.path, transcript, lambda _r, _e: handed.append(turn), since=0)
    await until(lambda: len(handed) == 1000)  # the whole file, sent at once as a subscriber's backlog
    longest = max(len(list(run)) for _turn, run in itertools.groupby(handed))
    assert longest <= RemoteRun.SLICE
    ticking.cancel()
    await reader.aclose()
    await server.close()


async def test_a_run_played_elsewhere_out_of_reach_is_not_read_again_at_every_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = make_config(
        tmp_path,
        {"r": {"benchmark": "demo", "agent": "chatbot", "model": "scripted/recall"}},
        benchmarks=ROOT / "benchmarks",
    )
    await play(config, "r")
    state = config.results_path() / "r" / "state.json"
    reads: list[Path] = []

    def counted(path: Path) -> object:
        reads.append(path)
        return load_state(path)

    monkeypatch.setattr(scheduler_module, "load_state", counted)
    scheduler = Scheduler(config, front_end="tui")

    def saved_again() -> None:  # as the owner's checkpoint at the end of a turn
        stamp = state.stat().st_mtime_ns + 1_000_000_000
        os.utime(state, ns=(stamp, stamp))

    lock = RunLock(state.parent, "headless")  # another engine (no control socket: out of reach)
    lock.acquire()
    try:
        for _ in range(5):
            saved_again()
            view = scheduler.view("r")
            assert view.owner and view.status == "running" and view.evaluations > 0
        assert len(reads) == 1
        monkeypatch.setattr(scheduler_module, "OWNED_KEEP", 0.0)  # the one read is as old as it may be
        saved_again()
        scheduler.view("r")
        assert len(reads) == 2
    finally:
        lock.release()
    saved_again()  # nobody plays it: read again as soon as it changed
    assert scheduler.view("r").status == "finished" and len(reads) == 3
