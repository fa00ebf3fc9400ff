"""Kill -9 a scripted run at many random points; the resumed run must end exactly like an uninterrupted one."""

from __future__ import annotations

import difflib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from engine.state import load_state
from engine.transcript import read_events

ROOT = Path(__file__).resolve().parent.parent


def _setup(folder: Path, benchmark: str, latency: float) -> Path:
    shutil.copytree(ROOT / "benchmarks" / benchmark, folder / "benchmarks" / benchmark)
    config = {
        "models": {"slow-persona": {"model": "scripted/persona", "latency": latency}},
        "persona": {"model": "slow-persona"},
        "runs": {"r": {"benchmark": benchmark, "agent": "chatbot", "model": "scripted/recall"}},
    }
    (folder / "config.jsonc").write_text(json.dumps(config))
    return folder / "config.jsonc"


def _command(config: Path) -> list[str]:
    return [sys.executable, "-m", "mmb_tui.front_ends.cli", "--config", str(config), "run", "r", "--headless"]


def _comparable(report: str) -> list[str]:
    """The report entry without what legitimately differs: its date, the wall-clock run time, its id, and
    how much of the input a prefix cache served (a resumed scripted persona starts with an empty cache, as a
    restarted provider may: the input tokens themselves are the same)."""
    lines = report.strip().splitlines()
    assert sum(1 for line in lines if line.startswith("## ")) == 1, report
    # transcript positions shift by the extra "resumed" events; dates and wall time differ legitimately
    return [
        re.sub(
            r" \(\d+ cached\)", "", re.sub(r" \[transcript #\d+\]", "", re.sub(r"^## \S+ \S+", "##", line))
        )
        for line in lines
        if not line.startswith(("📊 Run time", "📊 Entry:"))
    ]


def _outcome(config: Path) -> tuple[list[tuple[str, float, int, str]], list[str]]:
    results = config.parent / "results"
    state = load_state(results / "r" / "state.json")
    assert state is not None
    evaluations = sorted((e.check_id, e.score, e.attempt, e.answer) for e in state.evaluations.values())
    return evaluations, _comparable((results / "report.md").read_text())


Killer = Callable[["subprocess.Popen[bytes]", Path], bool]
"""Waits, then kills the process (True), or sees it end by itself (False)."""


def _after(seconds: float) -> Killer:
    def kill(process: subprocess.Popen[bytes], transcript: Path) -> bool:
        try:
            process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
            process.wait()
            return True
        return False

    return kill


def _after_start(seconds: float) -> Killer:
    """Kills ``seconds`` after this attempt's first event reached the transcript (its start-up, as slow as the
    machine is, not counted), or sees the run end by itself."""

    def lines(transcript: Path) -> int:
        return transcript.read_bytes().count(b"\n") if transcript.exists() else 0

    def kill(process: subprocess.Popen[bytes], transcript: Path) -> bool:
        target, deadline = lines(transcript) + 1, time.monotonic() + 120
        while process.poll() is None and lines(transcript) < target and time.monotonic() < deadline:
            time.sleep(0.01)
        try:
            process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
            process.wait()
            return True
        return False

    return kill


def _after_events(count: int) -> Killer:
    """Kills once the transcript holds ``count`` more events (whatever the machine's speed), a poll later."""

    def lines(transcript: Path) -> int:
        return transcript.read_bytes().count(b"\n") if transcript.exists() else 0

    def kill(process: subprocess.Popen[bytes], transcript: Path) -> bool:
        target, deadline = lines(transcript) + count, time.monotonic() + 120
        while process.poll() is None and time.monotonic() < deadline:
            if lines(transcript) >= target:
                process.send_signal(signal.SIGKILL)
                process.wait()
                return True
            time.sleep(0.01)
        return False

    return kill


def _kill_and_resume(tmp_path: Path, benchmark: str, latency: float, killers: list[Killer]) -> None:
    """Plays ``benchmark`` once uninterrupted, then again killed with SIGKILL by each of ``killers`` (a
    resume each time), then to its end: both must end alike, the transcript without gaps or repeats."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    reference = _setup(tmp_path / "reference", benchmark, latency)
    subprocess.run(
        _command(reference), cwd=reference.parent, env=env, check=True, capture_output=True, timeout=300
    )

    killed = _setup(tmp_path / "killed", benchmark, latency)
    transcript = killed.parent / "results" / "r" / "transcript.jsonl"
    kills = 0
    for killer in [
        *killers,
        _after(300),
    ]:  # the last attempt runs to the end (a loaded machine starts slowly)
        process = subprocess.Popen(
            _command(killed), cwd=killed.parent, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        if killer(process, transcript):
            kills += 1
            continue
        assert process.returncode == 0, process.stderr.read().decode() if process.stderr else ""
        break
    assert kills >= 3, "the kills should land mid-run"
    (grades, report), (expected_grades, expected_report) = _outcome(killed), _outcome(reference)
    assert grades == expected_grades
    assert report == expected_report, "\n".join(difflib.unified_diff(expected_report, report, lineterm=""))
    events = list(read_events(transcript))
    assert [e.n for e in events] == list(range(len(events)))  # rolled back cleanly, no gaps or repeats
    resumed = sum(1 for e in events if e.kind == "run_started" and e.resumed)
    assert 3 <= resumed <= kills  # a kill during start-up, before the first save, leaves nothing to resume
    # one journal is left, the one the last checkpoint names (older generations removed once it was on disk)
    journals = sorted(p.name for p in transcript.parent.glob("journal.*.jsonl"))
    assert len(journals) == 1, journals


def test_killed_run_resumes_to_the_same_result(tmp_path: Path) -> None:
    rng = random.Random(20261130)
    # at random moments of the run, counted from each attempt's first event: a loaded machine's slow start-up
    # would otherwise take the kills (one at a random moment from the start stays, start-up included)
    killers = [_after_start(rng.uniform(0.05, 0.6 + 0.1 * i)) for i in range(11)]
    _kill_and_resume(tmp_path, "demo", 0.05, [*killers, _after(rng.uniform(0.4, 1.4))])


def test_a_long_run_killed_at_random_points_ends_like_an_uninterrupted_one(tmp_path: Path) -> None:
    """``max`` (761 events: 36 checks, a persona compaction, a session switch), killed seven times after a
    random number of events, spread over its length, and once at a random moment: the same evaluations and
    report as one uninterrupted run."""
    rng = random.Random(20261201)
    killers = [_after_events(rng.randint(10, 160)) for _ in range(7)]
    _kill_and_resume(tmp_path, "max", 0.01, [*killers, _after(rng.uniform(0.5, 4.0))])
