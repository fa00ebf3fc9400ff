"""Helpers for whole-run engine tests: configs in a temp folder, playing a run to its end."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.config import Config, parse_config
from engine.events import Event
from engine.run.build import build_run
from engine.run.loop import Run
from engine.run.parts import RunSettings
from engine.transcript import read_events

ROOT = Path(__file__).resolve().parent.parent
TEST_BENCHMARKS = ROOT / "tests" / "benchmarks"
FORGETFUL = "fixture_agents:ForgetfulAgent"
"""The in-process test agent (``tests/fixture_agents.py``) as a config names it."""
TIME_FACTOR_ENV = "MMB_TEST_TIME_FACTOR"


def scaled(seconds: float) -> float:
    """A test's wait of ``seconds`` on a quiet machine, as long as a loaded one may need: times
    ``$MMB_TEST_TIME_FACTOR`` (default 3; CI runs on the developer's machine, not always a quiet one)."""
    raw = os.environ.get(TIME_FACTOR_ENV, "").strip()
    try:
        factor = float(raw) if raw else 3.0
    except ValueError:
        raise ValueError(f"{TIME_FACTOR_ENV}: must be a number, got {raw!r}") from None
    return seconds * max(factor, 1.0)


def make_config(
    tmp_path: Path, runs: dict[str, dict[str, Any]], benchmarks: Path = TEST_BENCHMARKS, **extra: Any
) -> Config:
    raw: dict[str, Any] = {
        "persona": {"model": "scripted/persona"},
        "runs": runs,
        "benchmarks_dir": str(benchmarks),
        "results_dir": str(tmp_path / "results"),
    }
    raw.update(extra)
    (tmp_path / "config.jsonc").write_text(json.dumps(raw, indent=2))
    return parse_config(json.dumps(raw), str(tmp_path / "config.jsonc"), tmp_path)


def fast(settings: RunSettings) -> None:
    """Short waits for tests."""
    settings.fault_backoff = 0.01
    settings.agent_quiet_seconds = 0.05
    settings.agent_poll_seconds = 0.001


async def play(
    config: Config, run_id: str, tune: Callable[[RunSettings], None] | None = fast, **kwargs: Any
) -> Run:
    run = build_run(config, run_id, tune=tune, **kwargs)
    await run.run()
    return run


def events(config: Config, run_id: str) -> list[Event]:
    return list(read_events(config.results_path() / run_id / "transcript.jsonl"))


def kinds(evts: list[Event], kind: str) -> list[Any]:
    return [e for e in evts if e.kind == kind]


def slow_demo_config(tmp_path: Path, latency: float = 0.2, benchmark: str = "demo") -> Path:
    """``config.jsonc`` in ``tmp_path`` playing run ``demo`` (the demo benchmark, or ``benchmark``: ``max`` for a
    run that cannot end while a test waits on a loaded machine) with a persona slow enough (``latency`` per call)
    to be caught playing by a signal or a second process; its path."""
    config = {
        "models": {"slow-persona": {"model": "scripted/persona", "latency": latency}},
        "persona": {"model": "slow-persona"},
        "runs": {"demo": {"benchmark": benchmark, "agent": "chatbot", "model": "scripted/recall"}},
        "benchmarks_dir": str(ROOT / "benchmarks"),
        "results_dir": str(tmp_path / "results"),
    }
    path = tmp_path / "config.jsonc"
    path.write_text(json.dumps(config))
    return path


def headless_command(config: Path, run_id: str = "r") -> list[str]:
    """``mmb-tui --config CONFIG run RUN --headless`` as a command for a process of its own (this interpreter)."""
    return [
        sys.executable,
        "-m",
        "mmb_tui.front_ends.cli",
        "--config",
        str(config),
        "run",
        run_id,
        "--headless",
    ]
