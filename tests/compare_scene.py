"""A fixed results folder for the comparison screen: the demo benchmark repeated three times (``demo``), a
single run (``solo``) and a run never played (``fresh``), with grades and tokens chosen by hand and written as
``state.json`` files — deterministic, so the screen's snapshot never moves; ``hold_as_playing`` makes one of
them a run still playing."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

from engine_helpers import ROOT
from tui_fakes import FakeEngine

from engine.api import RunView
from engine.events import EvaluationLogged
from engine.run.lock import RunLock
from engine.state import RunState, atomic_write, checkpoint_json
from mmb_tui.app import MmbApp, make_app

CHECKS = {"3.1": "RECALL", "3.2": "HIST", "3.3": "AGG", "3.4": "NEG", "3.5": "VOID", "3.6": "SERIES"}
SCORES = {  # run -> the effective score of each check of the demo, in order
    "demo.r1": [10, 10, 0, 5, 10, 0],
    "demo.r2": [10, 10, 10, 5, 0, 0],
    "demo.r3": [10, 5, 10, 10, 10, 10],
    "solo": [10, 0, 0, 0, 10, 5],
}
USAGE = {"persona": {"prompt_tokens": 50_000, "completion_tokens": 1_000}, "agent": {"prompt_tokens": 8_000}}


def write_state(results: Path, run_id: str, scores: list[int], finished: bool = True) -> None:
    evaluations = {
        check: EvaluationLogged(
            check_id=check, score=score, attempt=1, effective=score, types=[kind], n=10 + i
        )
        for i, ((check, kind), score) in enumerate(zip(CHECKS.items(), scores, strict=True))
    }
    state = RunState(
        run_id=run_id,
        benchmark="demo",
        agent="chatbot",
        start_date=date(2026, 8, 19),
        finished=finished,
        status="finished" if finished else "running",
        evaluations=evaluations,
        usage=USAGE,
    )
    atomic_write(results / run_id / "state.json", checkpoint_json(state))


def compare_folder(folder: Path) -> Path:
    """The config (with prices for the persona and agent models) and the results; returns the config path."""
    shutil.copytree(ROOT / "benchmarks" / "demo", folder / "benchmarks" / "demo")
    models = {
        "persona-m": {"model": "scripted/persona", "price": {"input": 1.0, "output": 4.0}},
        "agent-m": {"model": "scripted/recall", "price": {"input": 0.5, "output": 2.0}},
    }
    run = {"benchmark": "demo", "agent": "chatbot", "model": "agent-m"}
    runs = {"demo": {**run, "repeats": 3}, "solo": run, "fresh": run}
    raw = {"models": models, "persona": {"model": "persona-m"}, "runs": runs}
    (folder / "config.jsonc").write_text(json.dumps(raw), encoding="utf-8")
    for run_id, scores in SCORES.items():
        write_state(folder / "results", run_id, scores)
    return folder / "config.jsonc"


def hold_as_playing(results: Path, run_id: str) -> RunLock:
    """``run_id`` still playing: its state unfinished (its grades so far) and its lock held, as by the app that
    plays it; release the lock at the end of the test."""
    write_state(results, run_id, SCORES[run_id], finished=False)
    lock = RunLock(results / run_id, "tui")
    lock.acquire()
    return lock


def compare_app(folder: Path) -> MmbApp:
    config_path = compare_folder(folder)
    views = [RunView(run_id=r, benchmark="demo", agent="chatbot", status="finished") for r in SCORES]
    engine = FakeEngine(
        folder / "results", [*views, RunView(run_id="fresh", benchmark="demo", agent="chatbot")]
    )
    engine.write_files = False
    return make_app(engine, config_path, clock_frozen=True, watch=False)
