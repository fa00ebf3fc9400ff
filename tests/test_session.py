"""Runs outlive the terminal: a hang-up of the app's terminal, and `run --detach`, leave the runs playing; an
app playing nothing leaves at once when its terminal goes (with a SIGHUP or without); SIGTERM stops its runs."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from engine_helpers import slow_demo_config
from tui_fakes import Scene

ROOT = Path(__file__).resolve().parents[1]


def _wait_for(predicate, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 65536):
            pass
    except OSError:
        pass


def _events(tmp_path: Path) -> int:
    path = tmp_path / "results" / "demo" / "transcript.jsonl"
    return len(path.read_text().splitlines()) if path.exists() else 0


def _report(tmp_path: Path) -> str:
    path = tmp_path / "results" / "report.md"
    return path.read_text() if path.exists() else ""


def _app_in_a_terminal(
    config: Path, command: tuple[str, ...] = ("run", "demo")
) -> tuple[subprocess.Popen[bytes], int]:
    """``mmb-tui run demo`` (or ``command``) in a pseudo-terminal of its own; returns the process and the
    terminal's side."""
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
    app = subprocess.Popen(
        [sys.executable, "-m", "mmb_tui.front_ends.cli", "--config", str(config), *command],
        cwd=ROOT,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    return app, master


def test_a_hang_up_of_the_apps_terminal_leaves_the_run_playing_to_its_report(tmp_path: Path) -> None:
    config = slow_demo_config(tmp_path, latency=0.2)
    app, master = _app_in_a_terminal(config)
    try:
        _wait_for(lambda: _events(tmp_path) > 10, 60, "the run to get going in the app")
        assert app.poll() is None
        os.close(master)  # the terminal goes away, as in an SSH drop
        app.send_signal(signal.SIGHUP)
        seen = _events(tmp_path)
        _wait_for(lambda: _events(tmp_path) > seen, 30, "the transcript to grow after the hang-up")
        owner = json.loads((tmp_path / "results" / "demo" / "run.lock").read_text())
        assert (owner["pid"], owner["front_end"]) == (app.pid, "headless after a hang-up")  # no more "tui"
        assert app.wait(timeout=120) == 0  # it played the run to its end, then left
    finally:
        app.kill()
    report = _report(tmp_path)
    assert report.count("demo @ chatbot") == 1 and "Incomplete" not in report
    log = (tmp_path / "results" / "mmb-tui.log").read_text()
    assert "SIGHUP" in log and "headless runs ended" in log


def test_d_hands_the_runs_to_a_background_process_and_gives_the_prompt_back(tmp_path: Path) -> None:
    config = slow_demo_config(tmp_path, latency=0.2)
    app, master = _app_in_a_terminal(config)
    threading.Thread(target=_drain, args=(master,), daemon=True).start()  # a terminal reads what it is sent
    try:
        _wait_for(lambda: _events(tmp_path) > 10, 60, "the run to get going in the app")
        os.write(master, b"d")
        assert app.wait(timeout=60) == 0  # the app's process is gone: the shell has its prompt back
        owner = (tmp_path / "results" / "demo" / "run.lock").read_text()
        assert f"pid {app.pid}" not in owner  # another process plays it now
        seen = _events(tmp_path)
        _wait_for(lambda: _events(tmp_path) > seen, 30, "the transcript to grow in the background")
        _wait_for(lambda: "demo @ chatbot" in _report(tmp_path), 120, "the handed-over run's report entry")
    finally:
        app.kill()
    report = _report(tmp_path)
    assert report.count("demo @ chatbot") == 1 and "Incomplete" not in report  # no entry for the hand-over
    lines = [json.loads(line) for line in (tmp_path / "results" / "demo" / "transcript.jsonl").open()]
    assert [e["n"] for e in lines] == list(range(len(lines)))  # resumed, nothing duplicated


def test_run_detach_plays_in_the_background_and_returns_at_once(tmp_path: Path) -> None:
    config = slow_demo_config(tmp_path, latency=0.1)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "mmb_tui.front_ends.cli", "--config", str(config), "run", "demo", "--detach"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 20
    assert "playing in the background (pid" in done.stdout  # said once the background process holds it
    again = subprocess.run(
        [sys.executable, "-m", "mmb_tui.front_ends.cli", "--config", str(config), "run", "demo", "--detach"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 2 and "is being played by pid" in again.stderr  # not a false success
    _wait_for(lambda: "demo @ chatbot" in _report(tmp_path), 120, "the detached run's report entry")


async def test_d_lets_go_of_the_screen_without_stopping_the_runs(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("d")
        await pilot.pause()
    assert app.detached == "key" and not app.is_running
    assert scene.engine.stop_all_calls == 0  # the runs play on in this process


PATIENCE = 180  # seconds, polled: a quiet machine never waits for it
AT_ONCE = 60  # seconds: "at once" on a loaded machine; what it replaces was minutes, or never


class _Terminal:
    """The terminal's side of the app's pty, read as a terminal reads (a full pty would stall the app's
    screen), until it is closed: then the app's terminal has hung up."""

    def __init__(self, master: int) -> None:
        self.master = master
        self.received = 0
        self._closing = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while not self._closing.is_set():
            if select.select([self.master], [], [], 0.1)[0]:
                try:
                    data = os.read(self.master, 65536)
                except OSError:
                    return
                if not data:
                    return
                self.received += len(data)

    def stall(self) -> None:
        """The terminal stops reading (a tmux server starved of CPU): the app's writes fill the pty."""
        self._closing.set()
        self._reader.join()

    def close(self) -> None:
        """The terminal goes away (a killed tmux pane): closed once nothing reads it any more."""
        self.stall()
        os.close(self.master)


def _log(tmp_path: Path) -> str:
    path = tmp_path / "results" / "mmb-tui.log"
    return path.read_text() if path.exists() else ""


@pytest.mark.parametrize("sighup", [True, False], ids=["with a SIGHUP", "without a SIGHUP"])
def test_an_app_playing_nothing_leaves_at_once_when_its_terminal_goes(tmp_path: Path, sighup: bool) -> None:
    config = slow_demo_config(tmp_path, latency=0.05)
    app, master = _app_in_a_terminal(config, command=())  # the app, no run started
    terminal = _Terminal(master)
    try:
        _wait_for(lambda: terminal.received > 4000, PATIENCE, "the app to draw its screen")
        terminal.close()
        if sighup:
            app.send_signal(signal.SIGHUP)  # without it: a terminal whose process is not its session leader
        assert app.wait(timeout=AT_ONCE) == 0
    finally:
        app.kill()
        app.wait()
    log = _log(tmp_path)
    assert ("(SIGHUP)" if sighup else "no SIGHUP came") in log
    assert "playing on headless after a hang-up: nothing" in log
    assert not (tmp_path / "results" / "demo").exists()  # nothing was played


def test_sigterm_stops_the_apps_runs_at_their_checkpoint_and_ends_it(tmp_path: Path) -> None:
    from engine.run.lock import owner_info, owner_of

    config = slow_demo_config(tmp_path, latency=0.2, benchmark="max")
    run_dir = tmp_path / "results" / "demo"
    app, master = _app_in_a_terminal(config)
    terminal = _Terminal(master)
    try:
        _wait_for(lambda: _events(tmp_path) > 8, PATIENCE, "the run to get going in the app")
        _wait_for(lambda: (owner_info(run_dir) or {}).get("socket"), PATIENCE, "its control socket")
        socket = Path(str((owner_info(run_dir) or {})["socket"]))
        app.send_signal(signal.SIGTERM)
        assert app.wait(timeout=PATIENCE) == 130  # as a headless run stopped by a signal
    finally:
        app.kill()
        app.wait()
        terminal.close()
    state = json.loads((run_dir / "state.json").read_text())
    assert (state["status"], state["reason"], state["finished"]) == ("idle", "stopped", False)
    assert not socket.exists() and owner_of(run_dir) == ""
    assert "SIGTERM" in _log(tmp_path)


@pytest.mark.parametrize("sighup", [False, True], ids=["hang-up polled", "SIGHUP, then SIGTERM at once"])
def test_runs_played_on_after_the_terminal_went_stop_cleanly_on_sigterm(tmp_path: Path, sighup: bool) -> None:
    """After a hang-up (seen by polling, or its SIGHUP) the runs play on headless; a SIGTERM stops them at their
    checkpoint, also one that comes while the app is still letting go of its screen (``kill -HUP`` then ``kill``,
    as a shutting-down machine does): it was lost there, and the runs played on to their end."""
    from engine.run.lock import owner_info, owner_of

    config = slow_demo_config(tmp_path, latency=0.2, benchmark="max")  # a run far longer than the test waits
    run_dir = tmp_path / "results" / "demo"
    app, master = _app_in_a_terminal(config)
    terminal = _Terminal(master)
    try:
        _wait_for(lambda: _events(tmp_path) > 8, PATIENCE, "the run to get going in the app")
        terminal.close()
        if sighup:
            app.send_signal(signal.SIGHUP)
        _wait_for(lambda: "the runs go on headless" in _log(tmp_path), PATIENCE, "the app to let go")
        socket = Path(str((owner_info(run_dir) or {})["socket"]))
        if not sighup:
            seen = _events(tmp_path)
            _wait_for(lambda: _events(tmp_path) > seen, PATIENCE, "the run to play on")
        app.send_signal(signal.SIGTERM)
        assert app.wait(timeout=PATIENCE) == 130
    finally:
        app.kill()
        app.wait()
    state = json.loads((run_dir / "state.json").read_text())
    assert (state["status"], state["reason"], state["finished"]) == ("idle", "stopped", False)
    assert not socket.exists() and owner_of(run_dir) == ""
    assert "SIGTERM: the headless runs stop" in _log(tmp_path)


def test_a_headless_run_whose_terminal_is_killed_stops_cleanly(tmp_path: Path) -> None:
    """``tmux kill-session`` over ``mmb-tui run demo --headless``: its terminal closes and it gets a SIGHUP; the
    lines it prints from then on go nowhere, and it stops as for Ctrl-C."""
    from engine.run.lock import owner_info, owner_of

    config = slow_demo_config(tmp_path, latency=0.2, benchmark="max")
    run_dir = tmp_path / "results" / "demo"
    app, master = _app_in_a_terminal(config, command=("run", "demo", "--headless"))
    terminal = _Terminal(master)
    try:
        _wait_for(lambda: _events(tmp_path) > 8, PATIENCE, "the run to get going")
        _wait_for(lambda: (owner_info(run_dir) or {}).get("socket"), PATIENCE, "its control socket")
        socket = Path(str((owner_info(run_dir) or {})["socket"]))
        terminal.close()
        app.send_signal(signal.SIGHUP)
        assert app.wait(timeout=PATIENCE) == 130  # as for Ctrl-C
    finally:
        app.kill()
        app.wait()
    state = json.loads((run_dir / "state.json").read_text())
    assert (state["status"], state["reason"]) == ("idle", "stopped")
    assert not socket.exists() and owner_of(run_dir) == ""
    log = _log(tmp_path)
    assert "SIGHUP: stopping the runs" in log and "printing stops, the runs go on" in log


class _CpuHog:
    """Two busy loops beside the test, one per core of these machines: the load a deadlock needed."""

    def __init__(self) -> None:
        self.loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]

    def stop(self) -> None:
        for loop in self.loops:
            loop.kill()
            loop.wait()


@pytest.mark.parametrize("moment", ["drawing", "stalled"], ids=["while it draws", "its pty full"])
def test_a_hang_up_under_load_never_waits_on_the_terminal(tmp_path: Path, moment: str) -> None:
    """The terminal killed while the app draws, or after it stopped reading so that the app's writes filled the
    pty (a tmux starved at load 23): the app lets go of its screen without waiting on it, the run plays on
    headless, and a SIGTERM ends the process at its checkpoint. It deadlocked: the exit waited on the screen's
    writer thread for ever and the blocked loop never saw the SIGTERM."""
    config = slow_demo_config(tmp_path, latency=0.2, benchmark="max")
    run_dir = tmp_path / "results" / "demo"
    hog = _CpuHog()
    app, master = _app_in_a_terminal(config)
    terminal = _Terminal(master)
    try:
        _wait_for(lambda: _events(tmp_path) > 8, PATIENCE, "the run to get going in the app")
        if moment == "stalled":
            terminal.stall()
            time.sleep(8)  # the screen repaints as the run plays: the pty fills, the writer blocks in a write
        terminal.close()
        app.send_signal(signal.SIGHUP)
        _wait_for(lambda: "the runs go on headless" in _log(tmp_path), PATIENCE, "the app to let go")
        _wait_for(lambda: "playing on headless" in _log(tmp_path), AT_ONCE, "the hand-over to headless")
        seen = _events(tmp_path)
        _wait_for(lambda: _events(tmp_path) > seen, PATIENCE, "the run to play on headless")
        app.send_signal(signal.SIGTERM)
        assert app.wait(timeout=PATIENCE) == 130
    finally:
        hog.stop()
        app.kill()
        app.wait()
    state = json.loads((run_dir / "state.json").read_text())
    assert (state["status"], state["reason"], state["finished"]) == ("idle", "stopped", False)
