"""A damaged run state is refused, never used (issue 23, items 1 and 2).

A run of ``demo`` (5 phases) is killed with SIGKILL in phase 2, as ``tests/test_resume_kill.py`` kills runs;
each test damages a copy of its real files one way and resumes it: the resume is refused with one line naming
``state.json``, the file at fault and what is wrong, then the way out, and no file is changed. An undamaged
copy, and one rewritten as an older version of the code wrote it, resume to the end.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import fast

from engine.config import BuildError, load_config
from engine.run.build import build_run
from engine.state import STATE_VERSION, VERSION_KEYS, RunState, load_state
from engine.transcript import read_events

ROOT = Path(__file__).resolve().parent.parent
CONFIG = {
    "models": {"slow-persona": {"model": "scripted/persona", "latency": 0.05}},
    "persona": {"model": "slow-persona"},
    "runs": {"r": {"benchmark": "demo", "agent": "chatbot", "model": "scripted/recall"}},
}
_KILLED: dict[str, Path] = {}


def _command(config: Path) -> list[str]:
    return [sys.executable, "-m", "mmb_tui.front_ends.cli", "--config", str(config), "run", "r", "--headless"]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _killed_in_phase_2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder (config.jsonc, benchmarks/demo, results/r) of a run killed in phase 2, made once per module."""
    if "folder" not in _KILLED:
        folder = tmp_path_factory.mktemp("killed")
        shutil.copytree(ROOT / "benchmarks" / "demo", folder / "benchmarks" / "demo")
        (folder / "config.jsonc").write_text(json.dumps(CONFIG))
        state = folder / "results" / "r" / "state.json"
        process = subprocess.Popen(
            _command(folder / "config.jsonc"),
            cwd=folder,
            env=_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        try:
            while process.poll() is None and time.monotonic() < deadline:
                saved = json.loads(state.read_text()) if state.exists() else {}
                # in phase 2, with a message sent in it (its sent log and told marks on disk)
                if saved.get("phase_index") == 1 and saved["messages_sent"] > saved["phase_first_message"]:
                    break
                time.sleep(0.005)
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait()
        saved = json.loads(state.read_text())
        assert saved["phase_index"] == 1 and not saved["finished"], "the kill should land in phase 2"
        _KILLED["folder"] = folder
    return _KILLED["folder"]


def _copy(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    """A copy of the killed run's folder (its stale control socket aside); its results/r."""
    shutil.copytree(
        _killed_in_phase_2(tmp_path_factory), tmp_path / "run", ignore=shutil.ignore_patterns("*.sock")
    )
    return tmp_path / "run" / "results" / "r"


def _files(run_dir: Path) -> dict[str, bytes]:
    """Every file of the run's folder (its lock aside), to see that nothing was changed."""
    return {
        str(p.relative_to(run_dir)): p.read_bytes()
        for p in sorted(run_dir.rglob("*"))
        if p.is_file() and p.name != "run.lock"
    }


def _edit_state(run_dir: Path, change: Callable[[dict[str, Any]], object]) -> None:
    """``state.json`` read, changed by ``change`` and written back (as JSON)."""
    path = run_dir / "state.json"
    raw = json.loads(path.read_text())
    change(raw)
    path.write_text(json.dumps(raw))


def _hash_keys(run_dir: Path) -> None:
    """30 bytes of the names ``finished``, ``phase_index``, ``phases_started`` overwritten with ``#``: the file
    is still valid JSON (the issue's second way)."""
    path = run_dir / "state.json"
    data = bytearray(path.read_bytes())
    left = 30
    for key in (b"finished", b"phase_index", b"phases_started"):
        at = data.index(b'"' + key + b'":') + 1
        count = min(left, len(key))
        data[at : at + count] = b"#" * count
        left -= count
    path.write_bytes(bytes(data))
    json.loads(data)  # still valid


def _journal_line(run_dir: Path, kind: str) -> tuple[Path, bytes, int]:
    """The journal the checkpoint names, and the offset of its last ``kind`` record within the checkpoint (the
    latest record of a sheet or check wins)."""
    state = load_state(run_dir / "state.json")
    assert state is not None
    path = run_dir / f"journal.{state.journal}.jsonl"
    data = path.read_bytes()[: state.journal_bytes]
    at = data.rindex(b'{"' + kind.encode() + b'":')
    return path, data, at


def _told_mark_of_a_missing_fact(run_dir: Path) -> None:
    """A told mark renamed (same length, so the journal's length still holds) to a fact no sheet has."""
    path, data, at = _journal_line(run_dir, "told")
    line = data[at : data.index(b"\n", at)]
    record = json.loads(line)
    assert record["ids"], record
    damaged = line.replace(json.dumps(record["ids"][0]).encode(), b'"9.9"', 1)
    assert len(damaged) == len(line)
    whole = path.read_bytes()
    path.write_bytes(whole[:at] + damaged + whole[at + len(line) :])


def _journal_key_overwritten(run_dir: Path, kind: str, key: bytes) -> None:
    """The first letter of ``key`` in the journal's last ``kind`` record overwritten with ``#``."""
    path, data, at = _journal_line(run_dir, kind)
    where = data.index(b'"' + key + b'"', at) + 1
    raw = bytearray(path.read_bytes())
    raw[where : where + 1] = b"#"
    path.write_bytes(bytes(raw))


def _transcript_cut(run_dir: Path) -> None:
    """The transcript cut 40 bytes short of the length the checkpoint names (the issue's item 2)."""
    covered = json.loads((run_dir / "state.json").read_text())["transcript_bytes"]
    with open(run_dir / "transcript.jsonl", "r+b") as handle:
        handle.truncate(covered - 40)


def _last_checkpointed_event(run_dir: Path, damage: Callable[[bytes], bytes]) -> None:
    """The last event the checkpoint covers (the line ending at its length) damaged in place, same length."""
    covered = json.loads((run_dir / "state.json").read_text())["transcript_bytes"]
    data = (run_dir / "transcript.jsonl").read_bytes()
    start = data.rindex(b"\n", 0, covered - 1) + 1
    line = damage(data[start : covered - 1])
    assert len(line) == covered - 1 - start
    (run_dir / "transcript.jsonl").write_bytes(data[:start] + line + data[covered - 1 :])


def _overwritten_inside(run_dir: Path, where: float) -> None:
    """Bytes inside the checkpointed part (a fraction ``where`` into it) overwritten in place, same length and
    still JSON: a figure of an event changed, as an edit by hand or a flipped disk block would."""
    covered = json.loads((run_dir / "state.json").read_text())["transcript_bytes"]
    data = bytearray((run_dir / "transcript.jsonl").read_bytes())
    at = next(i for i in range(int(covered * where), covered) if chr(data[i]).isdigit())
    data[at] = ord("7") if data[at] != ord("7") else ord("3")
    (run_dir / "transcript.jsonl").write_bytes(bytes(data))


def _renumbered(line: bytes) -> bytes:
    n = json.loads(line)["n"]
    return re.sub(rb'"n":%d\b' % n, b'"n":%d' % (n - 1 if n % 10 else n + 1), line, count=1)


DAMAGES: dict[str, tuple[Callable[[Path], object], str, str]] = {
    # name: the damage, the file named, what the message says (a pattern)
    "keys deleted": (
        lambda d: _edit_state(d, lambda s: [s.pop(k) for k in ("finished", "phase_index", "phases_started")]),
        "state.json",
        r"missing finished, phase_index, phases_started\)",
    ),
    "key names overwritten with #": (
        _hash_keys,
        "state.json",
        r"missing finished, phase_index, phases_started and unknown keys '#{8}', '#{11}', '#{11}ted'\)",
    ),
    "an unknown key": (
        lambda d: _edit_state(d, lambda s: s.update(resume_from_phase=1)),
        "state.json",
        r"unknown key 'resume_from_phase'\)",
    ),
    "a key twice": (
        lambda d: (d / "state.json").write_text((d / "state.json").read_text()[:-1] + ',"phase_index":0}'),
        "state.json",
        r"key 'phase_index' twice\)",
    ),
    "an unknown key inside": (
        lambda d: _edit_state(d, lambda s: s["persona_record"].update(refusd={})),
        "state.json",
        r"unknown key persona_record\.refusd\)",
    ),
    "a wrong type": (
        lambda d: _edit_state(d, lambda s: s.update(finished="no")),
        "state.json",
        r"finished: Input should be a valid boolean\)",
    ),
    "a number as text": (
        lambda d: _edit_state(d, lambda s: s.update(phase_index="1")),
        "state.json",
        r"phase_index: Input should be a valid integer\)",
    ),
    "a phase index past the benchmark": (
        lambda d: _edit_state(d, lambda s: s.update(phase_index=6, phases_started=7)),
        "state.json",
        r"phases_started 7 is beyond the benchmark's 5 phases: was a chapter removed\?\); restore it, or",
    ),
    "a phase index past the phases started": (
        lambda d: _edit_state(d, lambda s: s.update(phase_index=3)),
        "state.json",
        r"phase_index 3 is not one of the 2 phases started\)",
    ),
    "a count of messages sent the log contradicts": (
        lambda d: _edit_state(d, lambda s: s.update(messages_sent=s["messages_sent"] + 1)),
        "state.json + journal.1.jsonl",
        r"sent_log holds \d+ messages, but messages_sent is \d+ \(0 of them before the log began\)\)",
    ),
    "a cursor past the transcript": (
        lambda d: _edit_state(d, lambda s: s.update(transcript_events=3)),
        "state.json + journal.1.jsonl",
        r"sent_log\[\d+\] names event #\d+, beyond the transcript's 3 events\)",
    ),
    "a told mark naming a missing fact": (
        _told_mark_of_a_missing_fact,
        "state.json + journal.1.jsonl",
        r"told marks \w+ 9\.9: no such fact in the live sheet\)",
    ),
    "a journal record of no known kind": (
        lambda d: _journal_key_overwritten(d, "m", b"m"),
        "journal.1.jsonl",
        r"line \d+: unknown record b'\{\"#\":",
    ),
    "a key of a journaled sheet overwritten": (
        lambda d: _journal_key_overwritten(d, "sheet", b"title"),
        "journal.1.jsonl",
        r"line \d+: unknown key value\.#itle\)",
    ),
    "the transcript cut 40 bytes short": (
        _transcript_cut,
        "transcript.jsonl",
        r"\d+ bytes, shorter than the \d+ bytes the checkpoint covers\)",
    ),
    "the last checkpointed event overwritten with #": (
        lambda d: _last_checkpointed_event(d, lambda line: line[:-30] + b"#" * 30),
        "transcript.jsonl",
        r"the last checkpointed event, the line ending at byte \d+, is not JSON",
    ),
    "a digit near the start of the transcript changed, same length": (
        lambda d: _overwritten_inside(d, 0.05),
        "transcript.jsonl",
        r"its first \d+ bytes, which the checkpoint covers, differ from what was written \(SHA-256 mismatch\)",
    ),
    "a digit in the middle of the transcript changed, same length": (
        lambda d: _overwritten_inside(d, 0.5),
        "transcript.jsonl",
        r"differ from what was written \(SHA-256 mismatch\): changed after it was saved",
    ),
    "the last checkpointed event renumbered": (
        lambda d: _last_checkpointed_event(d, _renumbered),
        "transcript.jsonl",
        r"the last checkpointed event, the line ending at byte \d+, is #\d+, not #\d+\)",
    ),
}


def test_the_current_version_writes_every_field() -> None:
    """A field added to ``RunState`` is a new ``STATE_VERSION`` with its keys in ``VERSION_KEYS``: the states
    written before lack it, and a state missing a key its version writes is refused."""
    assert VERSION_KEYS[STATE_VERSION] == set(RunState.model_fields)


@pytest.mark.parametrize("name", list(DAMAGES))
def test_a_damaged_run_state_is_refused_naming_the_file_and_nothing_changes(
    name: str, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    damage, file, what = DAMAGES[name]
    run_dir = _copy(tmp_path_factory, tmp_path)
    damage(run_dir)
    before = _files(run_dir)
    config = load_config(run_dir.parent.parent / "config.jsonc")
    with pytest.raises(BuildError) as refused:
        build_run(config, "r", tune=fast)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"{run_dir / 'state.json'}: unreadable run state ({file}: "), message
    assert re.search(what, message), message
    assert message.endswith("(nothing was changed)"), message
    assert _files(run_dir) == before  # nothing lost, nothing cut


def test_the_headless_command_line_says_the_one_line_and_fails(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    run_dir = _copy(tmp_path_factory, tmp_path)
    _transcript_cut(run_dir)
    before = _files(run_dir)
    done = subprocess.run(
        _command(run_dir.parent.parent / "config.jsonc"),
        cwd=run_dir.parent.parent,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    said = [line for line in (done.stdout + done.stderr).splitlines() if "unreadable run state" in line]
    assert said and all("transcript.jsonl: " in line and "shorter than the" in line for line in said), said
    assert _files(run_dir) == before


@pytest.mark.parametrize("older", [False, True])
async def test_an_undamaged_kill_and_a_state_older_versions_wrote_resume_to_the_end(
    older: bool, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """The kill itself resumes; so does its state as version 1 wrote it: without the keys added since
    (``sent_log_from`` the last), with the retired ``inflight_message``."""
    run_dir = _copy(tmp_path_factory, tmp_path)
    if older:
        _edit_state(run_dir, _as_version_1)
    config = load_config(run_dir.parent.parent / "config.jsonc")
    run = build_run(config, "r", tune=fast)
    await run.run()
    assert run.state.finished and len(run.state.evaluations) == 6
    saved = json.loads((run_dir / "state.json").read_text())
    assert saved["version"] == STATE_VERSION and saved["sent_log_from"] == 0  # written back whole
    events = list(read_events(run_dir / "transcript.jsonl"))
    assert [e.n for e in events] == list(range(len(events)))  # cut back cleanly: no gap, no repeat


def _as_version_1(state: dict[str, Any]) -> None:
    """``state.json`` as version 1 wrote it: no ``sent_log_from`` (added since), the retired key kept."""
    del state["sent_log_from"]
    state.update(version=1, inflight_message=None)
