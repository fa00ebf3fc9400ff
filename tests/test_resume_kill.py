"""Kill -9 a scripted run at many random points; the resumed run must end exactly like an uninterrupted one."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from engine.transcript import read_events

ROOT = Path(__file__).resolve().parent.parent


def _setup(folder: Path) -> Path:
    shutil.copytree(ROOT / "benchmarks" / "demo", folder / "benchmarks" / "demo")
    config = {
        "models": {"slow-persona": {"model": "scripted/persona", "latency": 0.05}},
        "persona": {"model": "slow-persona"},
        "runs": {"demo": {"benchmark": "demo", "agent": "chatbot", "model": "scripted/recall"}},
    }
    (folder / "config.jsonc").write_text(json.dumps(config))
    return folder / "config.jsonc"


def _command(config: Path) -> list[str]:
    return [sys.executable, "-m", "mmb_tui.cli", "--config", str(config), "run", "demo", "--headless"]


def _comparable(report: str) -> list[str]:
    """The report entry without what legitimately differs: its date, the wall-clock run time, its id."""
    lines = report.strip().splitlines()
    assert sum(1 for line in lines if line.startswith("## ")) == 1, report
    # transcript positions shift by the extra "resumed" events; dates and wall time differ legitimately
    return [
        re.sub(r" \[transcript #\d+\]", "", re.sub(r"^## \S+ \S+", "##", line))
        for line in lines
        if not line.startswith(("📊 Run time", "📊 Entry:"))
    ]


def _outcome(config: Path) -> tuple[list[tuple[str, float, int, str]], list[str]]:
    results = config.parent / "results"
    state = json.loads((results / "demo" / "state.json").read_text())
    evaluations = sorted(
        (e["check_id"], e["score"], e["attempt"], e["answer"]) for e in state["evaluations"].values()
    )
    return evaluations, _comparable((results / "report.md").read_text())


def test_killed_run_resumes_to_the_same_result(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    reference = _setup(tmp_path / "reference")
    subprocess.run(
        _command(reference), cwd=reference.parent, env=env, check=True, capture_output=True, timeout=120
    )

    killed = _setup(tmp_path / "killed")
    rng = random.Random(20261130)
    kills = 0
    for attempt in range(13):
        process = subprocess.Popen(
            _command(killed), cwd=killed.parent, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        try:
            # random kill points; the last attempt runs to the end (a loaded machine starts slowly)
            process.wait(timeout=rng.uniform(0.4, 1.4 + 0.2 * attempt) if attempt < 12 else 300)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
            process.wait()
            kills += 1
            continue
        assert process.returncode == 0, process.stderr.read().decode() if process.stderr else ""
        break
    else:
        raise AssertionError("the run never finished")
    assert kills >= 3, "the kills should land mid-run"
    assert _outcome(killed) == _outcome(reference)
    events = list(read_events(killed.parent / "results" / "demo" / "transcript.jsonl"))
    assert [e.n for e in events] == list(range(len(events)))  # rolled back cleanly, no gaps or repeats
    resumed = sum(1 for e in events if e.kind == "run_started" and e.resumed)
    assert 3 <= resumed <= kills  # a kill during start-up, before the first save, leaves nothing to resume
