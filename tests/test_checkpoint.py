"""The checkpoint: ``state.json`` stays bounded, the journal takes what only grows (appended, one generation
per session), a save appends only what changed, and states written before the journal still load and resume."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import FORGETFUL, fast, make_config, play

from engine.config import Config
from engine.events import EvaluationLogged, ToolCalled
from engine.grading.premises import log_sent
from engine.run.build import build_run
from engine.run.loop import Run
from engine.state import JOURNALED, RunState, StateError, load_state

CHATBOT = {"r": {"benchmark": "full", "agent": "chatbot", "model": "scripted/recall"}}
"""An agent whose memory is resumed with the run (its conversation in its own file)."""


def _journals(run_dir: Path) -> list[str]:
    return sorted(p.name for p in run_dir.glob("journal.*.jsonl"))


def _same(loaded: RunState | None, state: RunState) -> None:
    assert loaded is not None
    for name in sorted(JOURNALED):
        assert getattr(loaded, name) == getattr(state, name), name


async def _stopped_after(config: Config, steps: int) -> Run:
    """A run stopped (as by the operator) after ``steps`` persona turns: its checkpoint is on disk."""
    run = build_run(config, "r", tune=fast)
    step, done = run._step, [0]  # noqa: SLF001 - the unit being counted

    async def counted() -> None:
        await step()
        done[0] += 1
        if done[0] >= steps:
            raise asyncio.CancelledError

    run._step = counted  # type: ignore[method-assign]  # noqa: SLF001
    with pytest.raises(asyncio.CancelledError):
        await run.run()
    return run


async def test_state_json_holds_no_growing_field_and_the_journal_gives_them_back(tmp_path: Path) -> None:
    config = make_config(
        tmp_path,
        {"r": {"benchmark": "full", "agent": FORGETFUL, "compact_every": 5}},
        compaction={"max_tokens": 2500, "trim_to_tokens": 800},
    )
    run = await play(config, "r")
    run_dir = config.results_path() / "r"
    raw = json.loads((run_dir / "state.json").read_text())
    assert not JOURNALED & raw.keys() and raw["journal"] == 1
    assert run.state.persona_compactions and run.state.agent_observations and len(run.state.evaluations) == 5
    assert b'{"reset":true}' in (run_dir / "journal.1.jsonl").read_bytes()  # a compaction: the new context
    _same(load_state(run_dir / "state.json"), run.state)


async def test_bytes_after_the_checkpoint_are_ignored(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    run = await play(config, "r")
    run_dir = config.results_path() / "r"
    with open(run_dir / "journal.1.jsonl", "ab") as handle:  # written after it when a kill landed
        handle.write(b'{"m": {"role": "user", "content": "after the checkpoint"}}\n{"grade": "1.1", "at')
    _same(load_state(run_dir / "state.json"), run.state)


async def test_a_state_written_before_the_journal_loads_and_resumes_to_the_same_end(tmp_path: Path) -> None:
    (tmp_path / "reference").mkdir()
    reference = await play(make_config(tmp_path / "reference", CHATBOT), "r")
    config = make_config(tmp_path, CHATBOT)
    stopped = await _stopped_after(config, 14)
    assert stopped.state.evaluations and not stopped.state.finished
    run_dir = config.results_path() / "r"
    saved = load_state(run_dir / "state.json")  # the checkpoint (the stop's last events come after it)
    assert saved is not None
    # written before the journal: version 1, without the keys added since (version 2 must hold every key)
    old: dict[str, Any] = json.loads(
        saved.model_dump_json(exclude={"journal", "journal_bytes", "sent_log_from"})
    )
    old["version"] = 1
    for record in old["evaluations"].values():  # and the older field name the upgrade reads
        record["transcript_n"] = record.pop("n")
    (run_dir / "state.json").write_text(json.dumps(old))
    for name in _journals(run_dir):
        (run_dir / name).unlink()
    _same(load_state(run_dir / "state.json"), stopped.state)

    resumed = await play(config, "r")
    assert resumed.state.finished
    scores = {c: (e.score, e.attempt, e.answer) for c, e in resumed.state.evaluations.items()}
    assert scores == {c: (e.score, e.attempt, e.answer) for c, e in reference.state.evaluations.items()}
    raw = json.loads((run_dir / "state.json").read_text())
    assert not JOURNALED & raw.keys() and _journals(run_dir) == ["journal.1.jsonl"]
    _same(load_state(run_dir / "state.json"), resumed.state)


async def test_each_session_starts_a_generation_and_the_named_one_alone_stays(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    run_dir = config.results_path() / "r"
    await _stopped_after(config, 10)
    assert _journals(run_dir) == ["journal.1.jsonl"]
    (run_dir / "journal.7.jsonl").write_text("left by a kill before its checkpoint\n")
    run = await play(config, "r")
    assert json.loads((run_dir / "state.json").read_text())["journal"] == 2
    assert _journals(run_dir) == ["journal.2.jsonl"]
    _same(load_state(run_dir / "state.json"), run.state)


def test_a_save_appends_only_what_changed(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    run = build_run(config, "r")  # no loop: every save is written at once
    run_dir, state = config.results_path() / "r", run.state
    run.save()
    first = state.journal_bytes
    run.save()
    assert (state.journal, state.journal_bytes) == (1, first)  # nothing changed, nothing appended
    run.append_message({"role": "user", "content": "hello"})
    run.save()
    assert state.journal_bytes - first == len(b'{"m":{"role":"user","content":"hello"}}\n')
    event = EvaluationLogged(check_id="1.1", score=10, attempt=1, effective=10, question="q", expected="a")
    run.emit(event)
    state.evaluations["1.1"], state.graded_at["1.1"] = event, 1
    grown = state.journal_bytes
    run.save()
    assert state.journal == 1 and state.journal_bytes > grown
    run.notebook.edit("pets", "1.2", "Rex eats 240 g a day")
    run.save()
    run.notebook.edit("pets", "1.2", "Rex eats 260 g a day")  # the same change stamp: its event tells
    run.emit(ToolCalled(name="facts_edit", arguments={"sheet": "pets", "id": "1.2"}, result="…"))
    state.messages_sent += 1  # a message that told 1.1, logged as the agent channel logs it
    log_sent(state, 99, "Rex is a five-year-old collie", state.start_date)
    run.notebook.mark_told("pets", ["1.1"])
    run.save()
    _same(load_state(run_dir / "state.json"), state)
    assert load_state(run_dir / "state.json").sent_log == state.sent_log != []
    state.evaluations = dict(state.evaluations)  # replaced wholesale: a new generation holds what is live
    run.save()
    assert state.journal == 2 and _journals(run_dir) == ["journal.2.jsonl"]
    run.recorder.close_files()
    _same(load_state(run_dir / "state.json"), state)


def test_a_failed_append_stops_the_run_and_the_next_save_starts_afresh(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    run = build_run(config, "r")
    run_dir, journal = config.results_path() / "r", run.recorder.journal
    run.save()
    handle = journal._handle  # noqa: SLF001 - the file a full disk refuses
    assert handle is not None
    real_write = handle.write

    def full(data: bytes) -> int:
        real_write(data[:7])  # half a line reaches the file
        raise OSError(28, "No space left on device")

    handle.write = full  # type: ignore[method-assign]
    run.append_message({"role": "user", "content": "lost?"})
    run.save()
    assert run.recorder.writer.failure == f"{run_dir / 'journal.1.jsonl'}: No space left on device"
    run.save()  # space again: a new generation, whole
    assert run.state.journal == 2 and not run.recorder.writer.failure
    run.recorder.close_files()
    loaded = load_state(run_dir / "state.json")
    assert loaded is not None and loaded.persona_messages[-1]["content"] == "lost?"


async def test_a_missing_journal_is_named(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    await play(config, "r")
    run_dir = config.results_path() / "r"
    (run_dir / "journal.1.jsonl").unlink()
    with pytest.raises(
        StateError,
        match=r"state\.json: unreadable run state \(journal\.1\.jsonl: missing, and state\.json names",
    ):
        load_state(run_dir / "state.json")
