"""Every stop of a headless run is clean (issue 23): SIGHUP (a closed tmux session) and SIGTERM stop it as
Ctrl-C does, and a log file that cannot be written (a full disk) never prints a traceback into the terminal."""

from __future__ import annotations

import errno
import io
import json
import logging
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from engine_helpers import FORGETFUL, make_config, slow_demo_config
from tui_fakes import Scene

import engine.state as state_module
from engine.run.lock import owner_info, owner_of
from mmb_tui.front_ends.headless import STOPPED_EXIT, Output, run_headless
from mmb_tui.front_ends.tui_logging import SafeFileHandler, watch_log_failures

ROOT = Path(__file__).resolve().parents[1]
PATIENCE = 180.0  # seconds: polled, so a quiet machine never waits for it; a loaded one may need it


def _wait_for(predicate: Callable[[], object], what: str, timeout: float = PATIENCE) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _events(run_dir: Path) -> list[dict[str, object]]:
    path = run_dir / "transcript.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


def _headless(config: Path, tmp_path: Path, name: str) -> tuple[subprocess.Popen[bytes], Path, Path]:
    """``mmb-tui run demo --headless`` in a process of its own, its output in files (a full pipe would stall
    it); returns the process and the files of its stdout and stderr."""
    out, err = tmp_path / f"{name}.out", tmp_path / f"{name}.err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mmb_tui.front_ends.cli",
                "--config",
                str(config),
                "run",
                "demo",
                "--headless",
            ],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
    return process, out, err


def _playing_socket(run_dir: Path) -> Path:
    """The control socket the playing process names in the run's lock, once the run has got going."""
    _wait_for(lambda: len(_events(run_dir)) > 8, "the run to get going")
    _wait_for(lambda: (owner_info(run_dir) or {}).get("socket"), "the control socket")
    socket = Path(str((owner_info(run_dir) or {})["socket"]))
    assert socket.exists()
    return socket


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM], ids=["SIGHUP", "SIGTERM"])
def test_a_signal_stops_a_headless_run_as_ctrl_c_does(tmp_path: Path, sig: signal.Signals) -> None:
    config = slow_demo_config(tmp_path, benchmark="max")
    run_dir = tmp_path / "results" / "demo"
    process, out, err = _headless(config, tmp_path, "first")
    try:
        socket = _playing_socket(run_dir)
        process.send_signal(sig)  # `tmux kill-session` sends SIGHUP; `kill` SIGTERM
        assert process.wait(timeout=PATIENCE) == STOPPED_EXIT
    finally:
        process.kill()
        process.wait()
    output = out.read_text()
    assert output.rstrip().endswith("stopping: state saved, run again to resume")
    assert "run ended: stopped" in output
    assert "Traceback" not in err.read_text() + output
    state = json.loads((run_dir / "state.json").read_text())
    assert (state["status"], state["reason"], state["finished"]) == ("idle", "stopped", False)
    assert not socket.exists() and owner_of(run_dir) == ""  # nothing left behind for a viewer to trip on
    assert sig.name in (tmp_path / "results" / "mmb-tui.log").read_text()


def test_a_run_stopped_by_a_hang_up_resumes_to_its_end(tmp_path: Path) -> None:
    config = slow_demo_config(tmp_path)
    run_dir = tmp_path / "results" / "demo"
    process, _out, _err = _headless(config, tmp_path, "first")
    try:
        _playing_socket(run_dir)
        process.send_signal(signal.SIGHUP)
        assert process.wait(timeout=PATIENCE) == STOPPED_EXIT
    finally:
        process.kill()
        process.wait()
    again, out, err = _headless(config, tmp_path, "again")
    try:
        assert again.wait(timeout=PATIENCE * 2) == 0, err.read_text()
    finally:
        again.kill()
        again.wait()
    numbers = [event["n"] for event in _events(run_dir)]
    assert numbers == list(range(len(numbers)))  # resumed from the saved state: nothing lost or doubled
    assert json.loads((run_dir / "state.json").read_text())["status"] == "finished"
    assert "run ended: finished" in out.read_text()


class _Refusing(io.StringIO):
    """An output whose next writes fail with ``errors``, in order."""

    def __init__(self, *errors: OSError) -> None:
        super().__init__()
        self.refusals = list(errors)

    def write(self, text: str) -> int:
        if self.refusals:
            raise self.refusals.pop(0)
        return super().write(text)


def test_the_headless_output_drops_a_refused_line_and_stops_once_its_terminal_is_gone() -> None:
    full = _Refusing(OSError(errno.ENOSPC, "No space left on device"))  # `run --detach`: a file
    out = Output(full)
    out.write("a\n")
    out.write("b\n")
    assert (full.getvalue(), out.gone, out.dropped) == ("b\n", False, 1)
    hung_up = _Refusing(OSError(errno.EIO, "Input/output error"))
    out = Output(hung_up)
    out.write("a\n")
    out.write("b\n")
    assert (hung_up.getvalue(), out.gone, out.dropped) == ("", True, 2)


# ---- a log that cannot be written (item 7) --------------------------------------------------------------


class _FullDisk(io.StringIO):
    """A log file on a full disk: every write fails as the kernel says it."""

    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")


def _fill_disk(handler: SafeFileHandler, monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on every write of ``handler`` fails as on a full disk (the file it opened, and any it opens
    again, refuse every byte)."""
    if handler.stream is not None:
        handler.stream.close()
    handler.stream = _FullDisk()
    monkeypatch.setattr(handler, "_open", lambda: _FullDisk())


@pytest.fixture
def full_disk_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SafeFileHandler]:
    """The root logger writes to a ``mmb-tui.log`` whose every write fails (ENOSPC)."""
    (tmp_path / "results").mkdir(exist_ok=True)
    handler = SafeFileHandler(tmp_path / "results" / "mmb-tui.log")
    assert not handler.told  # it could be opened
    _fill_disk(handler, monkeypatch)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        handler.close()


def test_a_log_write_that_fails_is_counted_and_told_once_never_printed(
    full_disk_log: SafeFileHandler, capsys: pytest.CaptureFixture[str]
) -> None:
    told: list[str] = []
    stop = watch_log_failures(told.append)
    try:
        for n in range(3):
            logging.getLogger("engine.test").error("cannot save state (%d)", n)
        try:
            raise ValueError("boom")
        except ValueError:
            logging.getLogger("engine.test").exception("with a traceback of its own")
    finally:
        stop()
    assert full_disk_log.lost == 4
    assert len(told) == 1 and "No space left on device" in told[0] and "mmb-tui.log" in told[0]
    assert capsys.readouterr().err == ""  # no `--- Logging error ---`, no traceback
    late: list[str] = []
    watch_log_failures(late.append)()  # one who watches later is told too, at once
    assert len(late) == 1


def test_the_lost_lines_are_counted_in_the_log_once_it_can_be_written_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "mmb-tui.log"
    handler = SafeFileHandler(path)
    logger = logging.getLogger("test_signals.recovery")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("before")
        _fill_disk(handler, monkeypatch)
        logger.warning("lost one")
        logger.warning("lost two")
        monkeypatch.undo()  # space again: the file is opened again
        logger.warning("written")
    finally:
        logger.removeHandler(handler)
        handler.close()
    text = path.read_text()
    assert "before" in text and "lost one" not in text
    assert "(2 earlier lines of this log could not be written: No space left on device)" in text
    assert text.rstrip().endswith("written") and handler.lost == 0 and handler.lost_total == 2


async def test_a_full_disk_says_cannot_save_state_and_the_log_failure_once_with_no_traceback(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    full_disk_log: SafeFileHandler,
) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    real_write = state_module.atomic_write
    writes = {"n": 0}

    def failing_write(path: Path, data: str) -> None:  # the disk fills after the first checkpoint
        writes["n"] += 1
        if writes["n"] > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write(path, data)

    monkeypatch.setattr(state_module, "atomic_write", failing_write)
    out = io.StringIO()
    assert await run_headless(config, ["r"], out) == 1
    printed = out.getvalue()
    assert "waiting — cannot save state" in printed
    assert full_disk_log.lost >= 1  # the engine logged the failed save, and that line was lost
    assert printed.count("cannot write the log") == 1
    err = capsys.readouterr().err
    assert "Logging error" not in err and "Traceback" not in err


async def test_the_app_tells_a_log_that_cannot_be_written_once(
    scene: Scene, full_disk_log: SafeFileHandler, capsys: pytest.CaptureFixture[str]
) -> None:
    app = scene.app()
    async with app.run_test(size=(100, 30)) as pilot:
        for n in range(3):
            logging.getLogger("engine.test").error("cannot save state (%d)", n)
            await pilot.pause()
        told = [note for note in app._notifications if note.title == "Log not written"]
        assert len(told) == 1 and "No space left on device" in told[0].message
    assert full_disk_log.lost >= 3
    assert "Logging error" not in capsys.readouterr().err


def test_a_log_that_cannot_even_be_opened_is_told_once_and_never_raises(tmp_path: Path) -> None:
    handler = SafeFileHandler(tmp_path / "gone" / "mmb-tui.log")  # no such folder
    told: list[str] = []
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        stop = watch_log_failures(told.append)
        logging.getLogger("engine.test").error("one line")
        stop()
    finally:
        root.removeHandler(handler)
        handler.close()
    assert len(told) == 1 and "No such file or directory" in told[0] and handler.lost_total == 1


def test_a_log_call_with_wrong_arguments_is_written_as_it_came(tmp_path: Path) -> None:
    handler = SafeFileHandler(tmp_path / "mmb-tui.log")
    logger = logging.getLogger("test_signals.arguments")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("two values: %s %s", "only one")
    finally:
        logger.removeHandler(handler)
        handler.close()
    assert "two values: %s %s" in (tmp_path / "mmb-tui.log").read_text() and handler.lost_total == 0
