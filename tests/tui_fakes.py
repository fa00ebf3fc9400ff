"""What the TUI tests share: a fixed mid-run scene over the fake engine (``tests/fake_engine.py``), and Pilot
helpers. ``Scene`` is what the ``scene`` fixture (``tests/conftest.py``) hands a test; ``settle`` and
``wait_until`` let the app run without sleeping.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine_helpers import scaled
from fake_engine import FakeEngine
from textual.pilot import Pilot

from engine.api import CheckView, RunView
from engine.benchmark.model import Check, Fact
from engine.events import (
    AgentCompacted,
    AgentReplied,
    ClockJumped,
    ErrorOccurred,
    EvaluationLogged,
    Event,
    MessageSent,
    PersonaThinking,
    PhaseStarted,
    RunStarted,
    ToolCalled,
)
from mmb_tui.app import MmbApp, make_app
from mmb_tui.widgets.transcript_view import TranscriptView

# ---- a fixed, mid-run scene for snapshots ------------------------------------------------------------

_PHASE_TEXT = (
    "Tell the assistant about your family over a relaxed chat. Start with Lena (1.1, 1.2), then the kids.\n"
    "Mention the car only in passing. Before moving on, make sure every family fact is told."
)


def _view(
    run_id: str,
    agent: str,
    status: str,
    phase: int,
    evaluations: int,
    average: float | None,
    clock: str,
    reason: str = "",
    compactions: int = 0,
    jumps: int = 0,
) -> RunView:
    checks = [
        CheckView(
            check=Check(id="3.1", types=["RECALL"], question="When is Lena's birthday?", answer="March 14"),
            graded=True,
            score=10.0,
        ),
        CheckView(
            check=Check(id="3.2", types=["AGG"], question="How old are the kids together?", answer="11"),
            graded=True,
            score=5.0,
        ),
        CheckView(
            check=Check(
                id="3.3", types=["VOID"], question="What is Lena's maiden name?", answer="you didn't tell me"
            )
        ),
    ]
    untold = {
        "family": [
            Fact(id="2.3", text="Mia takes piano lessons on Thursdays"),
            Fact(id="2.4", text="Tom is allergic to peanuts"),
        ],
        "car": [Fact(id="1.2", text="The car is a 2019 Skoda Octavia estate, dark blue")],
    }
    return RunView(
        run_id=run_id,
        benchmark="demo",
        agent=agent,
        status=status,
        reason=reason,  # type: ignore[arg-type]
        phase_index=phase,
        total_phases=12,
        chapter="chapter1.md",
        phase_title="Family dinner",
        phase_text=_PHASE_TEXT,
        checks=checks,
        untold=untold,
        loaded_sheets=["family", "car"],
        facts={
            "family": [Fact(id="2.1", text="Lena's birthday is March 14"), *untold["family"]],
            "car": [Fact(id="1.1", text="The car is insured with Aviva"), *untold["car"]],
        },
        gates=["untold facts of family: 2.3, 2.4"] if status == "running" else [],
        evaluations=evaluations,
        average=average,
        agent_compactions=compactions,
        clock=clock,
        clock_jumps=jumps,
        virtual_time=True,
    )


def scene_events(run_id: str, variant: int) -> list[Event]:
    """A fixed stretch of transcript: a phase plan, thinking, tools, messages, evaluations, an error."""
    base = 10 + variant
    events: list[Event] = [
        RunStarted(run_id=run_id, benchmark="demo", agent="chatbot", t=f"2026-08-19T{base:02d}:00:00"),
        PhaseStarted(
            index=2,
            total=12,
            chapter="chapter1.md",
            title="Family dinner",
            text=_PHASE_TEXT,
            t=f"2026-08-19T{base:02d}:00:05",
        ),
        PersonaThinking(
            text="I should start with Lena and keep the car for later.\nThen the kids.",
            t=f"2026-08-19T{base:02d}:01:00",
        ),
        ToolCalled(
            name="facts_read",
            arguments={"sheet": "family"},
            result="# Family\n## 1. Lena\n1.1 Lena is 31, a UX designer",
            t=f"2026-08-19T{base:02d}:01:10",
        ),
        MessageSent(
            text="Hi! Quick thing to remember: my wife Lena's birthday is March 14.",
            t=f"2026-08-19T{base:02d}:02:00",
        ),
        AgentReplied(
            text="Got it — Lena's birthday is March 14. I'll remember that.\nAnything else?",
            t=f"2026-08-19T{base:02d}:02:03",
        ),
        ToolCalled(
            name="facts_mark_told",
            arguments={"sheet": "family", "ids": ["1.1", "1.2"]},
            result="ok",
            t=f"2026-08-19T{base:02d}:02:10",
        ),
        AgentCompacted(
            phase_index=2,
            tokens_before=31000,
            tokens_after=9000,
            detail="summary",
            t=f"2026-08-19T{base:02d}:03:00",
        ),
        MessageSent(text="By the way, when is Lena's birthday again?", t=f"2026-08-19T{base:02d}:04:00"),
        AgentReplied(text="Lena's birthday is March 14.", t=f"2026-08-19T{base:02d}:04:02"),
        EvaluationLogged(
            check_id="3.1",
            score=10,
            attempt=1,
            effective=10,
            question="When is Lena's birthday?",
            expected="March 14",
            answer="March 14",
            comment="exact",
            t=f"2026-08-19T{base:02d}:04:05",
        ),
        EvaluationLogged(
            check_id="3.2",
            score=5,
            attempt=1,
            effective=5,
            question="How old are the kids together?",
            expected="11",
            answer="9",
            comment="forgot Tom's birthday",
            t=f"2026-08-19T{base:02d}:05:00",
        ),
        ClockJumped(
            from_time=f"2026-08-19T{base:02d}:05:00",
            to_time=f"2026-08-20T{base:02d}:00:00",
            t=f"2026-08-20T{base:02d}:00:00",
        ),
        ErrorOccurred(
            message="agent timed out after 120 s; retrying", where="agent", t=f"2026-08-20T{base:02d}:00:30"
        ),
        MessageSent(text="Morning! Tom turns 6 next week, by the way.", t=f"2026-08-20T{base:02d}:01:00"),
    ]
    return events


def scene_engine(results_dir: Path) -> FakeEngine:
    """Three runs mid-run with prepared transcripts (deterministic: fixed times, no timers)."""
    engine = FakeEngine(
        results_dir,
        [
            _view(
                "chatbot-1", "chatbot", "running", 2, 2, 7.5, "2026-08-20T10:01:00", compactions=1, jumps=1
            ),
            _view(
                "hermes-1",
                "hermes",
                "waiting",
                2,
                2,
                7.5,
                "2026-08-20T11:01:00",
                reason="429 from model; retry in 8 s",
                jumps=1,
            ),
            _view(
                "openclaw-1",
                "openclaw",
                "paused",
                2,
                2,
                7.5,
                "2026-08-20T12:01:00",
                reason="operator",
                jumps=1,
            ),
        ],
    )
    for variant, run_id in enumerate(engine.run_ids()):
        for event in scene_events(run_id, variant):
            engine.emit(run_id, event)
    return engine


REPORT_MD = """# MarathonMemBench report

## 2026-08-18 09:12 — chatbot-1: demo @ chatbot
📊 Evaluations: 12, average 10.00/10
📊 Scores: 10: 12
📊 Check coverage: 12/12
📊 Run time: 11.2 min

## 2026-08-19 16:10 — openclaw-1: demo @ openclaw
📊 Evaluations: 36, average 9.24/10
📊 Scores: 10: 33, 2.5: 1, 0: 2
📊 Check coverage: 36/36
📊 Imperfect answers (3):
📊 [2.5/10, 2nd attempt] (3.2) How old are the kids together? | expected: 11 | got: 9, I think — Mia 5 and
  Tom 4 — forgot Tom's birthday; found it only after a search
📊 [0/10] (20.8) What is Lena's maiden name? | expected: you didn't tell me | got: Novak — invented a name
📊 [0/10] (20.9) How much was the car repair in total? | expected: 740 EUR | got: 520 EUR — missed the second invoice
📊 Agent compactions: phase 3 (31000 → 9000 tokens)
📊 Run time: 68.6 min
"""


def write_config(folder: Path, run_ids: list[str]) -> Path:
    runs = ",\n".join(f'    "{run_id}": {{"benchmark": "demo", "agent": "chatbot"}}' for run_id in run_ids)
    path = folder / "config.jsonc"
    path.write_text(
        '{\n  // test config\n  "persona": {"model": "scripted/persona"},\n  "runs": {\n'
        + runs
        + "\n  },\n}\n",
        encoding="utf-8",
    )
    return path


# ---- the scene a test gets, and running the app without sleeping -------------------------------------


@dataclass
class Scene:
    """Three runs mid-run on a ``FakeEngine``, with their config file and results folder."""

    folder: Path
    engine: FakeEngine
    config_path: Path

    @property
    def results(self) -> Path:
        return self.folder / "results"

    def app(self, *, watch: bool = False) -> MmbApp:
        return make_app(self.engine, self.config_path, clock_frozen=True, watch=watch)


async def settle(pilot: Pilot[None]) -> None:
    """Flush coalesced transcript repaints and let messages run (no sleeping)."""
    await pilot.pause()
    for view in pilot.app.query(TranscriptView):
        view.flush()
    for screen in pilot.app.screen_stack:
        for view in screen.query(TranscriptView):
            view.flush()
    await pilot.pause()


async def wait_until(pilot: Pilot[None], predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Let the app run until ``predicate`` holds (for the real engine's asynchronous runs); ``timeout`` is a
    quiet machine's, scaled for a loaded one (``engine_helpers.scaled``)."""
    async with asyncio.timeout(scaled(timeout)):
        while not predicate():
            await pilot.pause(0.01)
