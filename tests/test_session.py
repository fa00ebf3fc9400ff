"""Runs outlive the terminal: a hang-up of the app's terminal, and `run --detach`, leave the runs playing."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tui_fakes import Scene

ROOT = Path(__file__).resolve().parents[1]


def _config(tmp_path: Path, latency: float) -> Path:
    config = {
        "models": {"slow-persona": {"model": "scripted/persona", "latency": latency}},
        "persona": {"model": "slow-persona"},
        "runs": {"demo": {"benchmark": "demo", "agent": "chatbot", "model": "scripted/recall"}},
        "benchmarks_dir": str(ROOT / "benchmarks"),
        "results_dir": str(tmp_path / "results"),
    }
    path = tmp_path / "config.jsonc"
    path.write_text(json.dumps(config))
    return path


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


def _app_in_a_terminal(config: Path) -> tuple[subprocess.Popen[bytes], int]:
    """``mmb-tui run demo`` in a pseudo-terminal of its own; returns the process and the terminal's side."""
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
    app = subprocess.Popen(
        [sys.executable, "-m", "mmb_tui.cli", "--config", str(config), "run", "demo"],
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
    config = _config(tmp_path, latency=0.05)
    app, master = _app_in_a_terminal(config)
    try:
        _wait_for(lambda: _events(tmp_path) > 10, 60, "the run to get going in the app")
        assert app.poll() is None
        os.close(master)  # the terminal goes away, as in an SSH drop
        app.send_signal(signal.SIGHUP)
        seen = _events(tmp_path)
        _wait_for(lambda: _events(tmp_path) > seen, 30, "the transcript to grow after the hang-up")
        assert app.wait(timeout=120) == 0  # it played the run to its end, then left
    finally:
        app.kill()
    report = _report(tmp_path)
    assert report.count("demo @ chatbot") == 1 and "Incomplete" not in report
    log = (tmp_path / "results" / "mmb-tui.log").read_text()
    assert "SIGHUP" in log and "headless runs ended" in log


def test_d_hands_the_runs_to_a_background_process_and_gives_the_prompt_back(tmp_path: Path) -> None:
    config = _config(tmp_path, latency=0.05)
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
    config = _config(tmp_path, latency=0.1)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "mmb_tui.cli", "--config", str(config), "run", "demo", "--detach"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 20
    assert "playing in the background (pid" in done.stdout  # said once the background process holds it
    again = subprocess.run(
        [sys.executable, "-m", "mmb_tui.cli", "--config", str(config), "run", "demo", "--detach"],
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
