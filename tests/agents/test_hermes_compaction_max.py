"""The seed's "Hermes with compaction" experiment played offline (issue 34): real Hermes on the whole ``max`` with the
seed's keys (``tests/agents/test_hermes.py`` ``SEED_COMPACTION``; the context cleared by compaction only), on
``scripted/agent?reply_tokens=…``, whose replies of a real model's length make the context grow to the seed's
scale. Hermes cuts once, in the seed's window (chapters 11-16, at ~100K tokens), and the entry says so.

Measured (Hermes 0.19.0, reply_tokens 900): one cut in phase 26 (chapter 14), 102,451 → 27,283 tokens as Hermes
counts them; ~128K tokens lived through by this project's count (o200k: the messages and replies plus Hermes' ~6.6K
first context), ~147K by Hermes'. Marked ``agents``: one whole ``max`` run on Hermes, about 2 minutes on a 2-core
machine. It is as cheap as it can be: the persona and the judge are scripted, nothing is played twice, and the
whole run is needed (the entry is written at its end).
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from agent_helpers import scaled
from engine_helpers import ROOT, make_config
from test_hermes import SEED_COMPACTION

from adapters.local.install import install_hermes
from engine.events import AgentCompacted, PhaseStarted, TerminationReason
from engine.run.build import build_run
from engine.run.parts import RunSettings
from engine.transcript import read_events

pytestmark = pytest.mark.agents

REPLY_TOKENS = 900  # ~130K tokens lived through on max (README, scripted/agent)
WINDOW = range(11, 17)  # the seed's chapters 11-16


def _quick(settings: RunSettings) -> None:
    settings.fault_backoff = 0.5


async def test_hermes_cuts_once_in_the_seeds_window_on_max(tmp_path: Path) -> None:
    install_hermes()
    run_keys = {
        "benchmark": "max",
        "agent": "hermes",
        "model": f"scripted/agent?reply_tokens={REPLY_TOKENS}",
        "ignore_session_break": True,
        **SEED_COMPACTION,
    }
    config = make_config(tmp_path, {"seed": run_keys}, ROOT / "benchmarks")
    run = build_run(config, "seed", tune=_quick)
    assert await asyncio.wait_for(run.run(), scaled(1800)) is TerminationReason.FINISHED

    run_dir = config.results_path() / "seed"
    events = list(read_events(run_dir / "transcript.jsonl"))
    cuts = [e for e in events if isinstance(e, AgentCompacted)]
    assert len(cuts) == 1, cuts
    chapters = {e.index: e.chapter for e in events if isinstance(e, PhaseStarted)}  # chapter7.md
    chapter = int(re.sub(r"\D", "", chapters[cuts[0].phase_index]))
    assert chapter in WINDOW, (chapter, cuts[0])
    before, after = cuts[0].tokens_before, cuts[0].tokens_after
    assert before is not None and 90_000 <= before <= 115_000, before  # 0.125 × (819200 − 4096) ≈ 101.9K
    assert after is not None and after <= 50_000, after

    entry = (config.results_path() / "report.md").read_text(encoding="utf-8")
    line = next(line for line in entry.splitlines() if "Agent compactions:" in line)
    assert re.search(rf"Agent compactions: 1 — phase {cuts[0].phase_index + 1} \(\d+ → \d+ tokens\)", line), (
        line
    )
