"""The app's process: runs outlive the terminal.

The engine is embedded in the app (one asyncio loop). When the terminal goes away (SIGHUP: an SSH drop, a
closed tmux pane) the screen is let go and the process keeps playing its runs headless until they end,
logging to ``results/mmb-tui.log``; another ``mmb-tui`` over the same ``results/`` attaches to them (the run
lock names this process, ``engine/placement/remote.py`` serves each run). ``d`` in the app hands its runs over to a
background process (stopped at their last checkpoint, resumed there at once) and gives the prompt back.
``mmb-tui run RUN… --detach`` starts runs in a background process of their own from the start.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from engine.config import Config
from engine.placement.scheduler import Scheduler
from engine.run.lock import owner_of

DETACH_START_SECONDS = 30  # for the background process to take its runs' locks

log = logging.getLogger(__name__)


def _let_go_of_the_terminal() -> None:
    """Point stdin, stdout and stderr at /dev/null: a dead terminal must never be written to or read."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        try:
            os.dup2(null, fd)
        except OSError:
            pass
    os.close(null)


async def play_app(scheduler: Scheduler, config_path: Path, start: list[str]) -> int:
    """Run the app over ``scheduler``; when it is left by a hang-up or a detach, play on headless."""
    from mmb_tui.app import make_app

    app = make_app(scheduler, config_path, start=start)
    loop = asyncio.get_running_loop()

    def hang_up() -> None:
        log.warning("the terminal went away (SIGHUP): the runs go on headless")
        app.detached = "hang-up"
        _let_go_of_the_terminal()
        app.exit()

    loop.add_signal_handler(signal.SIGHUP, hang_up)
    try:
        await app.run_async()
    finally:
        loop.remove_signal_handler(signal.SIGHUP)
    if not app.detached:
        return 0
    playing = [run_id for run_id in scheduler.run_ids() if scheduler.running(run_id)]
    if app.detached == "key":
        return await _hand_over(scheduler, config_path, playing)
    log.info("playing on headless after a hang-up: %s", ", ".join(playing) or "nothing")
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # the terminal may go later too
    ended = await scheduler.wait(playing) if playing else {}
    log.info("headless runs ended: %s", ended)
    # every run has ended and saved; leave now: a reader thread of the old screen may still block on the
    # (gone) terminal, and waiting for it at interpreter exit would keep this process alive
    logging.shutdown()
    os._exit(0)


async def _hand_over(scheduler: Scheduler, config_path: Path, playing: list[str]) -> int:
    """``d``: the runs stop at their last checkpoint (no report entry) and a background process of their own
    resumes them at once, so the terminal gets its prompt back; ``mmb-tui`` attaches to them there."""
    if not playing:
        print("mmb-tui: detached; no run was playing, nothing goes on in the background.")
        return 0
    handed = await scheduler.hand_over(playing)
    log.info("handing over to a background process: %s", ", ".join(handed))
    return await asyncio.to_thread(detach_runs, scheduler.config, config_path, handed)


def detach_runs(config: Config, config_path: Path, run_ids: list[str]) -> int:
    """``mmb-tui run RUN… --detach``: play the runs headless in a new background process (its own session,
    no terminal), output to ``results/mmb-tui.log``; say so only once it holds every run's lock."""
    results = config.results_path()
    for run_id in run_ids:
        owner = owner_of(results / run_id)
        if owner:
            print(f"mmb-tui: run {run_id} is being played by {owner}: nothing started", file=sys.stderr)
            return 2
    results.mkdir(parents=True, exist_ok=True)
    log_path = results / "mmb-tui.log"
    command = [
        sys.executable,
        "-m",
        "mmb_tui.cli",
        "--config",
        str(config_path),
        "run",
        *run_ids,
        "--headless",
    ]
    with open(log_path, "ab") as out:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True
        )
    deadline = time.monotonic() + DETACH_START_SECONDS
    waiting = list(run_ids)
    while waiting and time.monotonic() < deadline and process.poll() is None:
        waiting = [r for r in waiting if f"pid {process.pid} " not in owner_of(results / r)]
        time.sleep(0.1)
    if process.poll() is not None and process.returncode != 0:
        print(
            f"mmb-tui: the background process ended at once (exit {process.returncode}); see {log_path}",
            file=sys.stderr,
        )
        return 2
    if waiting:
        print(
            f"mmb-tui: pid {process.pid} started but has not taken {', '.join(waiting)} yet; see {log_path}"
        )
        return 0
    print(
        f"mmb-tui: {', '.join(run_ids)} playing in the background (pid {process.pid}); "
        f"output in {log_path}; `mmb-tui` watches and steers them."
    )
    return 0
