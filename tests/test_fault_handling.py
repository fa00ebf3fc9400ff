"""Failures are loud and lose nothing: state-save failures, agents that do not start, memory outside the
run folder, a missing state.json, stale temporary files, bad config values, the report and the checkpoint."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import ClassVar

import pytest
from engine_helpers import FORGETFUL, events, fast, kinds, make_config, play
from fixture_agents import ForgetfulAgent

from engine import state as state_module
from engine.agents import AdapterError
from engine.config import BuildError, ConfigError, parse_config
from engine.events import TerminationReason
from engine.run.build import build_run


class NoStartAgent(ForgetfulAgent):
    """An agent whose process never comes up."""

    async def create_session(self, name: str) -> None:
        raise AdapterError("gateway exited with code 78: another gateway instance is already running")


class SharedMemoryAgent(ForgetfulAgent):
    """Keeps its memory outside the run folder (like a stateful endpoint or a third-party service)."""

    STORE: ClassVar[list[str]] = []
    seen_at_first_message: ClassVar[list[int]] = []

    async def send_message(self, text: str) -> None:
        if self.received == 0:
            SharedMemoryAgent.seen_at_first_message.append(len(SharedMemoryAgent.STORE))
        SharedMemoryAgent.STORE.append(text)
        await super().send_message(text)

    async def destroy_session(self) -> None:
        SharedMemoryAgent.STORE.clear()
        await super().destroy_session()


async def test_an_agent_that_does_not_start_leaves_the_run_waiting_with_the_reason(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": "test_fault_handling:NoStartAgent"}})
    run = await play(config, "r")
    assert run.termination is TerminationReason.WAITING
    assert run.state.status == "waiting" and "agent did not start" in run.state.reason
    assert "another gateway instance" in run.state.reason
    assert "Incomplete: waiting" in (config.results_path() / "report.md").read_text()


async def test_a_fresh_run_starts_from_an_empty_memory_wherever_it_lives(tmp_path: Path) -> None:
    SharedMemoryAgent.STORE.clear()
    SharedMemoryAgent.seen_at_first_message.clear()
    config = make_config(
        tmp_path, {"r": {"benchmark": "full", "agent": "test_fault_handling:SharedMemoryAgent"}}
    )
    await play(config, "r")
    assert SharedMemoryAgent.STORE  # the previous run's memory is still out there
    shutil.rmtree(config.results_path() / "r")
    await play(config, "r")
    assert SharedMemoryAgent.seen_at_first_message == [0, 0]


async def test_a_failed_state_write_stops_the_run_waiting_and_never_reports_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    real_write = state_module.atomic_write
    writes = {"n": 0}

    def failing_write(path: Path, data: str) -> None:
        writes["n"] += 1
        if writes["n"] > 1:  # the first checkpoint is written, every later one fails
            raise OSError(28, "No space left on device")
        real_write(path, data)

    monkeypatch.setattr(state_module, "atomic_write", failing_write)
    run = await play(config, "r")
    assert run.termination is TerminationReason.WAITING
    assert (
        run.state.reason.startswith("cannot save state: ")
        and "state.json: No space left on device" in run.state.reason
    )
    assert not run.state.finished
    report = config.results_path() / "report.md"
    assert not report.exists() or "Incomplete" in report.read_text()
    assert any("cannot save state" in e.message for e in kinds(events(config, "r"), "error"))


async def test_a_missing_state_json_never_overwrites_a_played_transcript(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    await play(config, "r")
    folder = config.results_path() / "r"
    (folder / "state.json").unlink()
    before = (folder / "transcript.jsonl").read_bytes()
    with pytest.raises(
        BuildError, match=r"state\.json is missing but .*transcript\.jsonl holds a played run"
    ):
        build_run(config, "r")
    assert (folder / "transcript.jsonl").read_bytes() == before


async def test_stale_temporary_state_files_are_removed_on_start(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    folder = config.results_path() / "r"
    folder.mkdir(parents=True)
    (folder / ".state.json.abc123").write_text("half a checkpoint")
    run = build_run(config, "r", tune=fast)
    assert not (folder / ".state.json.abc123").exists()
    await run.run()


def test_a_corrupt_state_names_the_file(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    folder = config.results_path() / "r"
    folder.mkdir(parents=True)
    (folder / "state.json").write_text("{not json")
    with pytest.raises(BuildError, match=r"state\.json: unreadable run state"):
        build_run(config, "r")


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('{"models": {"m": {"model": "x", "max_retries": -1}}}', "models.m.max_retries"),
        ('{"models": {"m": {"model": "x", "timeout": 0}}}', "models.m.timeout"),
        ('{"time_master": {"poll_interval": 0}}', "time_master.poll_interval"),
        ('{"persona": {"stuck_after": 0}}', "persona.stuck_after"),
        ('{"runs": {"r": {"benchmark": "b", "agent": "a", "max_reply_chars": 5}}}', "runs.r.max_reply_chars"),
    ],
)
def test_bad_config_values_are_one_line_errors_naming_the_key(text: str, key: str) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        parse_config(text)


async def test_a_kill_between_the_checkpoint_and_the_report_append_neither_loses_nor_doubles_the_entry(
    tmp_path: Path,
) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    run = build_run(config, "r", tune=fast)
    run._append_pending_report = lambda: None  # type: ignore[method-assign]  # the kill comes right here
    await run.run()
    report = config.results_path() / "report.md"
    assert not report.exists()  # the entry is only in the checkpoint
    resumed = build_run(config, "r", tune=fast)
    await resumed.run()
    assert report.read_text().count("## ") == 1  # appended once on resume, not again at the end
    again = build_run(config, "r", tune=fast)
    await again.run()
    assert report.read_text().count("## ") == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"phase_index": -3}, r"state\.json: unreadable run state.*phase_index"),
        ({"agent_seq": -1}, r"state\.json: unreadable run state.*agent_seq"),
        ({"phases_started": 999}, r"state\.json: phases_started 999 is beyond the benchmark's 3 phases"),
    ],
)
async def test_out_of_range_state_values_are_refused_naming_the_file(
    tmp_path: Path, change: dict[str, int], message: str
) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    await play(config, "r")
    path = config.results_path() / "r" / "state.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **change}))
    with pytest.raises(BuildError, match=message):
        build_run(config, "r")
