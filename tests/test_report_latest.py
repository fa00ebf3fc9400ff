"""A run's report entries (issue 24): a run that stops on its own writes an ``Incomplete`` entry, its next entry
says it supersedes it, and ``mmb-tui report`` (and the report browser) shows the latest of each run unless
``--all``."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import make_config, play

from engine.events import TerminationReason
from engine.report.entries import index_report, latest_per_run, parse_report_entries, reprint
from engine.state import load_state
from mmb_tui.front_ends.cli import main

CRASH_ONCE = "fixture_agents:CrashOnceAgent"


async def test_a_run_crashed_resumed_and_finished_has_two_entries_the_second_superseding_the_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": CRASH_ONCE}})
    assert (await play(config, "r")).termination is TerminationReason.CRASHED
    assert (await play(config, "r")).termination is TerminationReason.FINISHED
    path = config.results_path() / "report.md"
    first, second = parse_report_entries(path.read_text(encoding="utf-8"))
    assert first.incomplete == "crashed" and not first.supersedes and first.entry_id
    assert not second.incomplete and second.supersedes == first.entry_id != second.entry_id
    assert f"📊 Supersedes: {first.entry_id}\n📊 Entry: {second.entry_id}\n" in path.read_text(
        encoding="utf-8"
    )
    saved = load_state(config.results_path() / "r" / "state.json")  # the ids are journaled with the run
    assert saved is not None and saved.report_entries == [first.entry_id, second.entry_id]

    assert main(["--config", str(tmp_path / "config.jsonc"), "report"]) == 0
    shown = capsys.readouterr().out
    assert shown.count("## ") == 1 and f"Entry: {second.entry_id}" in shown and "Incomplete" not in shown
    assert main(["--config", str(tmp_path / "config.jsonc"), "report", "r", "--all"]) == 0
    every = capsys.readouterr().out
    assert every.count("## ") == 2 and every.index(first.entry_id) < every.index(f"Entry: {second.entry_id}")


def _entry(date: str, run: str, entry_id: str, regrade: str = "", incomplete: bool = False) -> str:
    tail = f" · regrade by {regrade} of the entry of 2026-08-19 10:00 UTC" if regrade else ""
    lines = [f"## 2026-08-19 {date} UTC — {run}: full @ forgetful{tail}", "📊 Score: 5.00/10"]
    if incomplete:
        lines.append("📊 Incomplete: waiting — persona model: 429 · phases started 1/3")
    return "\n".join([*lines, f"📊 Entry: {entry_id}"]) + "\n"


def test_the_latest_entry_of_each_run_a_regrade_apart_from_the_runs_own(tmp_path: Path) -> None:
    entries = [
        _entry("10:00", "r", "a1", incomplete=True),
        _entry("10:01", "s", "b1"),
        _entry("10:02", "r", "a2", incomplete=True),
        _entry("10:03", "r", "a3"),
        _entry("10:04", "r", "g1", regrade="judge-x"),
        _entry("10:05", "r", "g2", regrade="judge-x"),
        _entry("10:06", "r", "h1", regrade="judge-y"),
    ]
    path = tmp_path / "report.md"
    path.write_text("\n".join(entries), encoding="utf-8")
    latest = [lazy.entry.entry_id for lazy in latest_per_run(index_report(path))]
    assert latest == ["b1", "a3", "g2", "h1"]
    ids = [e.entry_id for e in parse_report_entries(reprint(path, latest=True).decode())]
    assert ids == latest
    assert [e.entry_id for e in parse_report_entries(reprint(path, "r", latest=True).decode())] == latest[1:]
    every = parse_report_entries(reprint(path).decode())
    assert [e.entry_id for e in every] == ["a1", "b1", "a2", "a3", "g1", "g2", "h1"]
