"""The shipped benchmarks play to the end offline: scripted persona, chatbot control, full coverage.

Their content invariants are in ``test_shipped_benchmarks.py``."""

from __future__ import annotations

from pathlib import Path

from engine_helpers import ROOT, fast, make_config

from engine.events import TerminationReason
from engine.placement.scheduler import Scheduler


async def test_max_and_multiday_play_to_the_end_with_full_coverage(tmp_path: Path) -> None:
    config = make_config(
        tmp_path,
        {
            "max": {"benchmark": "max", "agent": "chatbot"},
            "md": {"benchmark": "multiday", "agent": "chatbot"},
        },
        benchmarks=ROOT / "benchmarks",
        time_master={"min_sleep_to_skip": 5, "pre_wake_delay": 0.05, "poll_interval": 0.01},
    )
    scheduler = Scheduler(config, tune=fast)
    await scheduler.start("max")
    await scheduler.start("md")
    assert await scheduler.wait() == {"max": TerminationReason.FINISHED, "md": TerminationReason.FINISHED}
    report = (config.results_path() / "report.md").read_text()
    assert "max: max @ chatbot" in report and "Check coverage: 36/36" in report
    assert "md: multiday @ chatbot" in report and "Check coverage: 13/13" in report
    assert "Virtual time: 2026-03-01 20:00 → 2026-03-15" in report  # two weeks on its virtual clock
    # the persona's edits reached its live sheets
    max_run = scheduler.slots["max"].run
    assert max_run is not None
    assert "50 g" in max_run.state.sheets["family"].find("2.3").text  # type: ignore[union-attr]
    assert not any("wine fridge, 45 cm" in f.text for f in max_run.state.sheets["kitchen"].live_facts())
