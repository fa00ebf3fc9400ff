"""Detach and attach (issue 12): a run played by another process is watched and steered through the same
``EngineApi`` — its view, its events and commands travel over the owner's control socket."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from engine_helpers import ROOT, headless_command
from tui_fakes import wait_until

from engine.api import RunView
from engine.commands import Command, CommandResult, EditFact, Pause, Resume
from engine.config import load_config
from engine.events import Event, PersonaThinking
from engine.placement import remote
from engine.placement.remote import MAX_SOCKET_PATH, ControlServer, RemoteRun, socket_path
from engine.placement.scheduler import Scheduler
from engine.report.writer import REPORT_NAME
from engine.run.lock import LOCK_NAME, owner_socket
from engine.transcript import read_events
from mmb_tui.app import make_app
from mmb_tui.widgets.run_column import RunColumn


class Collector:
    def __init__(self) -> None:
        self.events: list[tuple[str, Event]] = []

    def on_event(self, run_id: str, event: Event) -> None:
        self.events.append((run_id, event))

    def numbers(self) -> list[int]:
        return [event.n for _, event in self.events]


def _config(tmp_path: Path, latency: float = 0.05) -> Path:
    raw = {
        # latency per persona call: the run is still playing while the test watches it
        "models": {"slow-persona": {"model": "scripted/persona", "latency": latency}},
        "persona": {"model": "slow-persona"},
        "runs": {"r": {"benchmark": "demo", "agent": "chatbot", "model": "scripted/recall"}},
        "benchmarks_dir": str(ROOT / "benchmarks"),
        "results_dir": str(tmp_path / "results"),
    }
    path = tmp_path / "config.jsonc"
    path.write_text(json.dumps(raw, indent=2), encoding="utf-8")
    return path


@contextmanager
def played_elsewhere(config_path: Path) -> Iterator[subprocess.Popen[str]]:
    """``mmb-tui run r --headless`` in another process, once its control socket is named in the run's lock."""
    command = headless_command(config_path)
    owner = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lock = config_path.parent / "results" / "r" / LOCK_NAME
    deadline = time.monotonic() + 30
    while owner_socket(lock.parent) is None:
        assert owner.poll() is None and time.monotonic() < deadline, "the owner did not start"
        time.sleep(0.02)
    try:
        yield owner
    finally:
        if owner.poll() is None:
            owner.kill()
        owner.wait()


async def until(condition: Callable[[], object], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


async def test_a_run_played_by_another_process_is_watched_and_steered(tmp_path: Path) -> None:
    config_path = _config(tmp_path)
    with played_elsewhere(config_path) as owner:
        scheduler = Scheduler(load_config(config_path), front_end="tui")
        seen = Collector()
        scheduler.add_observer(seen)
        view = scheduler.view("r")
        assert view.status == "running" and f"pid {owner.pid}" in view.owner and "(headless" in view.owner
        await scheduler.start("r")  # watched, not started, and said so
        assert not scheduler.running("r")
        _, said = seen.events.pop()
        assert said.kind == "error" and said.message.endswith("watched from here, not started")
        await until(lambda: len(seen.events) >= 3)
        assert all(run_id == "r" for run_id, _ in seen.events)

        paused = await scheduler.command("r", Pause())
        assert paused.ok, paused.message
        await until(lambda: scheduler.view("r").status == "paused")
        assert scheduler.view("r").owner and scheduler.view("r").reason == "paused by the operator"
        refused = await scheduler.command("r", EditFact(sheet="garden", fact_id="9.9", text="x"))
        assert not refused.ok and refused.message == (
            "sheet 'garden' has no fact 9.9; use facts_add for a new one"
        )
        resumed = await scheduler.command("r", Resume())
        assert resumed.ok and resumed.message == "resumed"

        await until(lambda: owner.poll() is not None, timeout=120)
        assert owner.returncode == 0, owner.stderr.read() if owner.stderr else ""
        await until(lambda: scheduler.view("r").status == "finished")
    view = scheduler.view("r")
    assert view.owner == "" and view.evaluations > 0
    transcript = list(read_events(tmp_path / "results" / "r" / "transcript.jsonl"))
    await until(lambda: seen.events and seen.events[-1][1].kind == "run_ended")
    assert seen.numbers() == [e.n for e in transcript[seen.numbers()[0] :]]  # every event, in order, once
    actions = [
        e.detail if e.action == "edit_fact" else e.action for _, e in seen.events if e.kind == "operator"
    ]
    assert actions == [
        "pause",
        "refused: sheet 'garden' has no fact 9.9; use facts_add for a new one",
        "resume",
    ]
    assert "r" in (tmp_path / "results" / REPORT_NAME).read_text()
    assert not (tmp_path / "results" / "r" / "control.sock").exists()  # removed by its owner
    await scheduler.stop_all()


async def test_two_viewers_at_once_and_one_that_goes_away(tmp_path: Path) -> None:
    config_path = _config(tmp_path, latency=0.02)
    with played_elsewhere(config_path) as owner:
        first, second = (Scheduler(load_config(config_path), front_end="tui") for _ in range(2))
        seen_first, seen_second = Collector(), Collector()
        first.add_observer(seen_first)
        second.add_observer(seen_second)
        for scheduler in (first, second):
            scheduler.view("r")  # attaches
        run_dir = tmp_path / "results" / "r"
        path = owner_socket(run_dir)
        assert path is not None
        quitter = RemoteRun("r", path, run_dir / "transcript.jsonl", lambda *_: None)
        await until(lambda: len(seen_first.events) >= 2 and len(seen_second.events) >= 2)
        await quitter.aclose()  # a viewer that goes away
        await until(lambda: owner.poll() is not None, timeout=120)
        assert owner.returncode == 0
        await until(lambda: first.view("r").status == "finished" and second.view("r").status == "finished")
    transcript = list(read_events(tmp_path / "results" / "r" / "transcript.jsonl"))
    assert transcript[-1].kind == "run_ended" and transcript[-1].reason == "finished"
    both = (seen_first, seen_second)
    await until(lambda: all(seen.events[-1][1].kind == "run_ended" for seen in both))
    for seen in both:
        assert seen.numbers() == [e.n for e in transcript[seen.numbers()[0] :]]
    await first.stop_all()
    await second.stop_all()


async def test_a_viewer_that_never_reads_is_dropped_and_the_others_get_everything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(remote, "BEHIND_EVENTS", 20)
    view = RunView(run_id="r", benchmark="b", agent="a")

    async def command(_: Command) -> CommandResult:
        return CommandResult(ok=True, message="done")

    server = ControlServer(tmp_path / "control.sock", lambda: view, command)
    await server.start()
    seen = Collector()
    reader = RemoteRun("r", server.path, tmp_path / "transcript.jsonl", seen.on_event)
    _, stuck = await asyncio.open_unix_connection(str(server.path))
    stuck.write(b'{"op": "subscribe"}\n')  # and never reads
    await until(lambda: len(server._subscribers) == 2)
    for n in range(300):  # 30 MB: more than any socket buffer holds
        server.on_event("r", PersonaThinking(text="x" * 100_000, n=n))
        await asyncio.sleep(0)
    await until(lambda: len(seen.events) == 300)
    assert seen.numbers() == list(range(300)) and len(server._subscribers) == 1
    assert reader.alive and (await reader.command(Pause())).message == "done"
    await server.close()
    await until(lambda: not reader.alive)
    assert not server.path.exists()
    stuck.close()


async def test_the_protocol_refuses_what_it_does_not_know_and_a_dead_owner_leaves_the_stored_run(
    tmp_path: Path,
) -> None:
    config_path = _config(tmp_path, latency=0.2)
    with played_elsewhere(config_path) as owner:
        path = owner_socket(tmp_path / "results" / "r")
        assert path is not None
        reader, writer = await asyncio.open_unix_connection(str(path))

        async def ask(line: bytes) -> dict[str, object]:
            writer.write(line + b"\n")
            await writer.drain()
            answer: dict[str, object] = json.loads(await reader.readline())
            return answer

        assert (await ask(b"{nonsense"))["error"]
        assert "unknown op" in str((await ask(b'{"op": "shutdown"}'))["error"])
        refused = await ask(b'{"op": "command", "command": {"kind": "self_destruct"}}')
        assert refused["ok"] is False and str(refused["message"]).startswith("not a command")
        assert (await ask(b'{"op": "view"}'))["run_id"] == "r"
        writer.close()

        scheduler = Scheduler(load_config(config_path), front_end="tui")
        scheduler.view("r")
        remote_run = scheduler.slots["r"].remote
        assert remote_run is not None
        await until(lambda: remote_run.view is not None)
        owner.kill()  # kill -9: the lock dies with it
        owner.wait()
        await until(lambda: scheduler.view("r").owner == "" and not remote_run.alive)
        assert scheduler.view("r").status == "idle"
        await scheduler.stop_all()


async def test_the_socket_is_in_the_run_folder_else_in_a_private_folder_of_its_own(tmp_path: Path) -> None:
    """A path too long for ``AF_UNIX``: a new 0700 folder of a random name, removed with the socket (the rest
    of it, and a viewer's checks: ``tests/test_permissions.py``)."""
    assert socket_path(tmp_path / "r") == tmp_path.resolve() / "r" / "control.sock"
    view = RunView(run_id="r", benchmark="b", agent="a")

    async def command(_: Command) -> CommandResult:
        return CommandResult(ok=True, message="done")

    deep = tmp_path / ("d" * 120)
    deep.mkdir(mode=0o700)
    servers = [ControlServer(socket_path(deep), lambda: view, command) for _ in range(2)]
    for server in servers:
        await server.start()
    first, second = (server.path for server in servers)
    assert first != second and len(os.fsencode(first)) <= MAX_SOCKET_PATH
    assert first.parent.name.startswith("mmb-") and stat.S_IMODE(first.parent.stat().st_mode) == 0o700
    for server in servers:
        await server.close()
    assert not first.parent.exists() and not second.parent.exists()


async def test_the_app_shows_the_events_of_a_run_played_elsewhere(tmp_path: Path) -> None:
    config_path = _config(tmp_path)
    with played_elsewhere(config_path) as owner:
        scheduler = Scheduler(load_config(config_path), front_end="tui")
        seen = Collector()
        scheduler.add_observer(seen)
        app = make_app(scheduler, config_path, clock_frozen=True, watch=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: scheduler.view("r").owner != "" and len(seen.events) >= 2)
            column = next(c for c in app.screen.query(RunColumn) if c.run_id == "r")
            await pilot.press("p")  # the app's own pause, sent to the owner
            await wait_until(pilot, lambda: scheduler.view("r").status == "paused")
            await pilot.press("p")
            await wait_until(pilot, lambda: owner.poll() is not None, timeout=120)
            assert owner.returncode == 0
            await wait_until(pilot, lambda: any(e.kind == "run_ended" for e in column.transcript.events))
            numbers = [e.n for e in column.transcript.events]
            assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))  # live ones after the file's
            assert seen.numbers()[0] > numbers[0]  # some came from the file, the rest from the owner
        await scheduler.stop_all()
