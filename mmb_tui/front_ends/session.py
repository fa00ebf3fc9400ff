"""The app's process: runs outlive the terminal.

The engine is embedded in the app (one asyncio loop). When the terminal goes away (SIGHUP: an SSH drop, a
closed tmux pane) the screen is let go and the process keeps playing its runs headless until they end,
logging to ``results/mmb-tui.log``; another ``mmb-tui`` over the same ``results/`` attaches to them (the run
lock names this process, relabelled ``headless after a hang-up``; ``engine/placement/remote.py`` serves each
run). ``d`` in the app hands its runs over to a background process (stopped at their last checkpoint, resumed
there at once) and gives the prompt back.
``mmb-tui run RUN… --detach`` starts runs in a background process of their own from the start.

A hang-up is seen with or without its SIGHUP (a terminal whose other side closed reports it: polled twice a
second), so an app playing nothing leaves at once instead of outliving its terminal. SIGTERM stops the runs
at their last checkpoint and ends the process (exit 130, as a headless run stopped by a signal), in the app as
after a hang-up.

Letting go of the screen never waits on the terminal: once it hung up, the screen's writer thread takes what it
can without blocking and its stop waits a moment at most (a stalled or killed terminal left it stuck in a write,
and the app's exit waited on it forever, deaf to SIGTERM: the loop was blocked). A watchdog thread, which needs no
loop, is the last resort: a hand-over not done in ``HAND_OVER_SECONDS``, or a SIGTERM not obeyed in
``SIGTERM_SECONDS``, ends the process at once; the runs resume from their last checkpoint, as after a kill.
"""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from engine.config import Config
from engine.placement.scheduler import Scheduler
from engine.run.lock import owner_of

DETACH_START_SECONDS = 30  # for the background process to take its runs' locks
TERMINAL_CHECK_SECONDS = 0.5  # how often the app looks whether its terminal is still there
STOPPED_EXIT = 130  # SIGTERM: as a headless run stopped by a signal (``mmb_tui/front_ends/headless.py``)
HEADLESS_LABEL = "headless after a hang-up"  # the front end the run locks name once the terminal is gone
HUNG_UP = select.POLLHUP | select.POLLERR | select.POLLNVAL
WRITER_STOP_SECONDS = 1.0  # the longest the screen's writer thread is waited for once the terminal is gone
HAND_OVER_SECONDS = 30.0  # from a hang-up to playing headless; beyond it the watchdog ends the process
SIGTERM_SECONDS = 60.0  # from a SIGTERM to the process gone; beyond it the watchdog ends the process

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


def terminal_fds() -> list[int]:
    """Standard input and output when they are a terminal (asked while it is there: a hung-up one is not)."""
    return [fd for fd in (0, 1) if os.isatty(fd)]


def terminal_gone(fds: list[int]) -> bool:
    """Whether the terminal on ``fds`` has hung up: its other side closed (a killed tmux pane, an SSH drop),
    whether or not a SIGHUP came with it."""
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)  # a hang-up, an error, a closed fd are reported whatever is asked
    return any(mask & HUNG_UP for _fd, mask in poller.poll(0))


def _release_the_writer(app: object) -> None:
    """The screen's writer thread (Textual's, pinned) never holds the exit once the terminal is gone: a write
    that would wait for room is dropped, and its stop waits ``WRITER_STOP_SECONDS`` at most."""
    writer = getattr(getattr(app, "_driver", None), "_writer_thread", None)
    pending = getattr(writer, "_queue", None)
    if writer is None or not isinstance(pending, queue.Queue):
        return

    def write(text: str) -> None:
        try:
            pending.put_nowait(text)
        except queue.Full:
            pass  # nobody reads a gone terminal

    def stop() -> None:
        try:
            pending.put(None, timeout=WRITER_STOP_SECONDS)
        except queue.Full:
            pass
        writer.join(WRITER_STOP_SECONDS)

    writer.write, writer.stop = write, stop


class _Watchdog:
    """The last resort, in a thread of its own (the loop may be the thing that is stuck): once armed by a
    hang-up, a hand-over that is not done in ``HAND_OVER_SECONDS`` ends the process; a SIGTERM not obeyed in
    ``SIGTERM_SECONDS`` too. The runs' state on disk is their last checkpoint, which a resume takes up."""

    def __init__(self) -> None:
        self.handed_over = threading.Event()
        self._armed_at: float | None = None
        self._sigterm_at: float | None = None
        self._thread = threading.Thread(target=self._watch, name="mmb-watchdog", daemon=True)
        self._lock = threading.Lock()

    def arm(self) -> None:
        """A hang-up: the hand-over to headless starts now."""
        with self._lock:
            self._armed_at = self._armed_at or time.monotonic()
            self._start()

    def sigterm(self, *_args: object) -> None:
        """A SIGTERM came (called from the Python-level handler, which runs even while the loop is blocked)."""
        self._sigterm_at = self._sigterm_at or time.monotonic()
        with self._lock:
            self._start()

    def _start(self) -> None:
        if not self._thread.is_alive() and self._thread.ident is None:
            self._thread.start()

    def _watch(self) -> None:
        while True:
            time.sleep(0.2)
            now = time.monotonic()
            if self._sigterm_at is not None and now - self._sigterm_at > SIGTERM_SECONDS:
                self._end(f"a SIGTERM was not obeyed in {SIGTERM_SECONDS:.0f} s", STOPPED_EXIT)
            stuck = self._armed_at is not None and not self.handed_over.is_set()
            if stuck and now - (self._armed_at or now) > HAND_OVER_SECONDS:
                self._end(
                    f"the hand-over to headless did not finish in {HAND_OVER_SECONDS:.0f} s", STOPPED_EXIT
                )

    @staticmethod
    def _end(why: str, code: int) -> None:
        log.error("%s: the process ends; the runs resume from their last checkpoint", why)
        logging.shutdown()
        os._exit(code)


async def _watch_terminal(fds: list[int], hang_up: Callable[[str], None]) -> None:
    """Call ``hang_up`` once the terminal is gone (checked every ``TERMINAL_CHECK_SECONDS``)."""
    while not terminal_gone(fds):
        await asyncio.sleep(TERMINAL_CHECK_SECONDS)
    hang_up("it hung up; no SIGHUP came")


async def play_app(scheduler: Scheduler, config_path: Path, start: list[str]) -> int:
    """Run the app over ``scheduler``; when it is left by a hang-up or a detach, play on headless; SIGTERM
    stops its runs cleanly and ends it, whenever it comes (also while the screen is being let go)."""
    from mmb_tui.app import make_app

    app = make_app(scheduler, config_path, start=start)
    loop = asyncio.get_running_loop()
    sigterm = asyncio.Event()
    terminated: list[asyncio.Task[None]] = []
    watchdog = _Watchdog()

    def hang_up(why: str = "SIGHUP") -> None:
        if app.detached or sigterm.is_set():
            return
        log.warning("the terminal went away (%s): the runs go on headless", why)
        watchdog.arm()
        app.detached = "hang-up"
        scheduler.relabel(HEADLESS_LABEL)  # their locks no longer say "tui": nobody sees them here now
        _release_the_writer(app)
        _let_go_of_the_terminal()
        app.exit()

    def terminate() -> None:
        if sigterm.is_set():
            return
        sigterm.set()  # after a hang-up the headless phase stops the runs, however far the screen has got
        if not app.detached:
            log.warning("SIGTERM: the runs stop at their last checkpoint, the app ends")
            terminated.append(asyncio.ensure_future(app.stop_and_exit()))

    loop.add_signal_handler(signal.SIGHUP, hang_up)
    loop.add_signal_handler(signal.SIGTERM, terminate)
    # the loop learns of the signal through its wakeup fd whatever the Python-level handler is; this one runs
    # even while the loop is blocked, so the watchdog knows of a SIGTERM the loop cannot take
    signal.signal(signal.SIGTERM, watchdog.sigterm)
    watcher = asyncio.ensure_future(_watch_terminal(terminal_fds(), hang_up))
    try:
        await app.run_async()
    finally:
        watcher.cancel()
        if app.detached != "hang-up":  # after a hang-up both stay: no moment without them
            loop.remove_signal_handler(signal.SIGHUP)
            loop.remove_signal_handler(signal.SIGTERM)
    if terminated:
        await asyncio.gather(*terminated, return_exceptions=True)
        return STOPPED_EXIT
    if not app.detached:
        return 0
    playing = [run_id for run_id in scheduler.run_ids() if scheduler.running(run_id)]
    if app.detached == "key":
        return await _hand_over(scheduler, config_path, playing)
    watchdog.handed_over.set()
    return await _play_on_headless(scheduler, playing, sigterm)


async def _play_on_headless(scheduler: Scheduler, playing: list[str], sigterm: asyncio.Event) -> int:
    """After a hang-up: the runs play to their ends, or stop at their last checkpoint once ``sigterm`` is set
    (also if it was set before we got here), then the process leaves at once."""
    log.info("playing on headless after a hang-up: %s", ", ".join(playing) or "nothing")

    async def stop_on_sigterm() -> None:
        await sigterm.wait()
        log.warning("SIGTERM: the headless runs stop at their last checkpoint")
        await scheduler.stop_all()

    stopper = asyncio.ensure_future(stop_on_sigterm())
    ended = await scheduler.wait(playing) if playing else {}
    if sigterm.is_set():
        await asyncio.gather(stopper, return_exceptions=True)
    else:
        stopper.cancel()
    log.info("headless runs ended: %s", ended)
    # every run has ended and saved; leave now: a reader thread of the old screen may still block on the
    # (gone) terminal, and waiting for it at interpreter exit would keep this process alive
    logging.shutdown()
    os._exit(STOPPED_EXIT if sigterm.is_set() else 0)


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
        "mmb_tui.front_ends.cli",
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
