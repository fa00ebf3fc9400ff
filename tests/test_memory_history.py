"""The agent's memory history (issue 33): content-addressed blobs stored as line deltas, the snapshot index,
any file's text at any moment read back, diffs, ``mmb-tui memory``, whole runs of in-process agents whose
memory is files, and a kill -9 anywhere followed by a resume leaving one consistent history."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from engine_helpers import headless_command, make_config, play

from engine.autopsy.blobs import MAX_CHAIN, PACK, BlobError, BlobStore, apply_delta, blob_name, encode_delta
from engine.autopsy.history import MemoryHistory
from engine.autopsy.memory_command import main_memory
from engine.events import TerminationReason
from engine.transcript import read_events

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = "memory_agents:NotebookAgent"
WORKSPACE = "memory_agents:WorkspaceAgent"

# --- blobs ------------------------------------------------------------------------------------------

BASE = b"".join(b"- fact number %d: the tile costs $%d per m2\n" % (i, 40 + i) for i in range(60))
EDITS = {
    "a line appended": BASE + b"- a wine fridge, $330\n",
    "a line inserted": BASE[:200] + b"- inserted here\n" + BASE[200:],
    "a line removed": BASE.replace(b"- fact number 7: the tile costs $47 per m2\n", b""),
    "a value changed": BASE.replace(b"$47", b"$55"),
    "no final newline": BASE.rstrip(b"\n"),
    "emptied": b"",
    "windows line ends": BASE.replace(b"\n", b"\r\n"),
    "unicode": BASE + "- 25 m² à 42 € — naïve café\n".encode(),
    "not utf-8": BASE + b"\xff\xfe\x00 bytes\n",
    "rewritten": b"\n".join(b"completely different %d" % i for i in range(80)),
}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_a_version_is_read_back_exactly_whatever_the_edit(tmp_path: Path, name: str) -> None:
    new = EDITS[name]
    assert apply_delta(BASE, encode_delta(BASE, new)) == new
    store = BlobStore(tmp_path)
    base, _ = store.put(BASE)
    blob, _ = store.put(new, base=base)
    assert blob == blob_name(new)
    assert BlobStore(tmp_path).get(blob) == new  # a fresh store: nothing cached


def test_a_small_change_to_a_big_file_costs_bytes_of_the_change(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    base, whole = store.put(BASE)
    changed = EDITS["a value changed"]
    _, delta = store.put(changed, base=base)
    assert delta < whole / 3 and delta < len(changed) / 25


def test_a_long_series_of_versions_keeps_its_chains_short_and_every_version_readable(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    versions, previous = [], None
    for i in range(3 * MAX_CHAIN + 5):
        text = BASE + b"".join(b"- added %d\n" % j for j in range(i))
        previous, _ = store.put(text, base=previous)
        versions.append((previous, text))
    fresh = BlobStore(tmp_path)
    for name, text in versions:
        assert fresh.get(name) == text
        assert fresh._depth[name] <= MAX_CHAIN


def test_storing_a_version_twice_writes_nothing_the_second_time(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    name, written = store.put(BASE)
    assert written > 0
    assert BlobStore(tmp_path).put(BASE) == (name, 0)


def test_each_process_appends_its_own_stream_and_every_version_reads_back(tmp_path: Path) -> None:
    names = []
    for i in range(4):  # four processes in turn (a run resumed three times)
        store = BlobStore(tmp_path)
        base = names[-1][0] if names else None
        text = BASE + b"- resumed %d\n" % i
        names.append((store.put(text, base=base)[0], text))
    assert all(BlobStore(tmp_path).get(name) == text for name, text in names)


def test_a_frame_torn_by_a_kill_is_ignored_and_cut_before_the_next_write(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    first, _ = store.put(BASE)
    second, _ = store.put(EDITS["a line appended"], base=first)
    pack = tmp_path / PACK
    pack.write_bytes(pack.read_bytes()[:-3])  # killed in the middle of the second version's frame
    after_kill = BlobStore(tmp_path)
    assert after_kill.get(first) == BASE and not after_kill.has(second)
    third, _ = after_kill.put(EDITS["a value changed"], base=first)
    again = BlobStore(tmp_path)
    assert again.get(first) == BASE and again.get(third) == EDITS["a value changed"] and not again.has(second)


@pytest.mark.parametrize("damage", ["missing pack", "flipped byte", "not a pack"])
def test_a_damaged_pack_is_an_error_naming_it(tmp_path: Path, damage: str) -> None:
    store = BlobStore(tmp_path)
    first, _ = store.put(BASE)
    name, _ = store.put(EDITS["a value changed"], base=first)
    pack = tmp_path / PACK
    data = bytearray(pack.read_bytes())
    if damage == "missing pack":
        pack.unlink()
    elif damage == "flipped byte":
        data[-4] ^= 0xFF  # inside the last version's compressed bytes
        pack.write_bytes(bytes(data))
    else:
        pack.write_bytes(b"plain bytes, no frames at all")
    with pytest.raises(BlobError, match=re.escape(str(pack))):
        BlobStore(tmp_path).get(name)


def test_a_version_whose_text_is_not_its_name_is_refused(tmp_path: Path) -> None:
    stream = zlib.compressobj(6, zlib.DEFLATED, -15)
    record = b"%s F - 5\nhello" % blob_name(b"other").encode()
    chunk = stream.compress(record) + stream.flush(zlib.Z_SYNC_FLUSH)
    (tmp_path / PACK).write_bytes(b"S" + bytes(4) + b"R" + len(chunk).to_bytes(4, "big") + chunk)
    with pytest.raises(BlobError, match="its text is not the one its name says"):
        BlobStore(tmp_path).get(blob_name(b"other"))


# --- the index --------------------------------------------------------------------------------------


def _record(history: MemoryHistory, n: int, phase: int, kind: str, **files: str) -> None:
    encoded = {name.replace("__", "/").replace("_md", ".md"): text.encode() for name, text in files.items()}
    history.record(encoded, n, phase, kind, f"2026-03-01T10:{n:02d}:00", kind != "message")  # type: ignore[arg-type]


def test_any_file_is_read_back_at_any_moment(tmp_path: Path) -> None:
    history = MemoryHistory(tmp_path)
    _record(history, 0, 0, "start")
    _record(history, 5, 0, "message", MEMORY_md="- locker 4417\n")
    _record(history, 9, 0, "message", MEMORY_md="- locker 4417\n")  # nothing changed: no line
    _record(history, 12, 0, "phase", MEMORY_md="- locker 4417\n", memory__notes_md="# Notes\n")
    _record(history, 20, 1, "message", MEMORY_md="- locker 5820\n", memory__notes_md="# Notes\n")
    _record(history, 30, 1, "end", MEMORY_md="- locker 5820\n")
    read = MemoryHistory(tmp_path)
    kinds = [s.kind for s in read.snapshots()]
    assert kinds == ["start", "message", "phase", "message", "end"]
    first = read.at_phase(1)
    assert first is not None and first.kind == "phase"
    assert read.text(first, "MEMORY.md") == "- locker 4417\n"
    assert read.text(first, "memory/notes.md") == "# Notes\n"
    end = read.snapshots()[-1]
    assert read.text(end, "MEMORY.md") == "- locker 5820\n" and "memory/notes.md" not in end.files
    assert end.removed == ("memory/notes.md",)
    at_event = read.before(19)
    assert at_event is not None and read.text(at_event, "MEMORY.md") == "- locker 4417\n"
    assert read.before(-1) is None
    diff = "".join(read.diff(first, end))
    assert "-- locker 4417" in diff and "+- locker 5820" in diff and "-# Notes" in diff


def test_a_line_torn_by_a_kill_is_skipped_and_the_next_one_starts_on_its_own(tmp_path: Path) -> None:
    history = MemoryHistory(tmp_path)
    _record(history, 0, 0, "start", MEMORY_md="a\n")
    with open(history.index, "a", encoding="utf-8") as handle:
        handle.write('{"n": 4, "p": 0, "k": "mess')  # killed mid-write
    later = MemoryHistory(tmp_path)
    assert len(later.snapshots()) == 1
    _record(later, 6, 0, "message", MEMORY_md="b\n")
    again = MemoryHistory(tmp_path)
    assert [s.n for s in again.snapshots()] == [0, 6]
    assert again.text(again.snapshots()[-1], "MEMORY.md") == "b\n"


def test_a_resume_drops_the_snapshots_taken_after_the_moment_it_resumes_from(tmp_path: Path) -> None:
    history = MemoryHistory(tmp_path)
    _record(history, 0, 0, "start", MEMORY_md="a\n")
    _record(history, 10, 0, "message", MEMORY_md="b\n")
    _record(history, 20, 0, "phase", MEMORY_md="c\n")  # after the checkpoint at event 15: replayed
    resumed = MemoryHistory(tmp_path)
    _record(resumed, 15, 0, "start", MEMORY_md="c\n")
    _record(resumed, 24, 0, "phase", MEMORY_md="d\n")
    kept = MemoryHistory(tmp_path).snapshots()
    assert [(s.n, s.kind) for s in kept] == [(0, "start"), (10, "message"), (15, "start"), (24, "phase")]
    assert [s.seq for s in kept] == [1, 2, 3, 4]


# --- whole runs -------------------------------------------------------------------------------------


@pytest.mark.parametrize("agent", [NOTEBOOK, WORKSPACE])
async def test_a_run_keeps_its_agents_memory_at_every_phase_session_switch_and_message(
    tmp_path: Path, agent: str
) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "memory_autopsy", "agent": agent}})
    run = await play(config, "r")
    assert run.termination is TerminationReason.FINISHED
    history = MemoryHistory(config.results_path() / "r")
    kinds = [s.kind for s in history.snapshots()]
    assert kinds[0] == "start" and kinds[-1] == "end"
    assert kinds.count("phase") == 2 and kinds.count("session") == 1
    assert "message" in kinds
    phase1, phase2 = history.at_phase(1), history.at_phase(2)
    assert phase1 is not None and phase2 is not None
    assert "4417" in (history.text(phase1, "MEMORY.md") or "")
    assert "5820" in (history.text(phase2, "MEMORY.md") or "")
    # the last snapshot is the agent's files as they are
    memory = run.adapter.memory_files()
    assert memory is not None
    assert {name: history.text(history.snapshots()[-1], name) for name in memory} == {
        name: data.decode() for name, data in memory.items()
    }


def _cli(config_dir: Path, *args: str) -> tuple[int, str, str]:
    from engine.config import load_config

    out = io.StringIO()
    err = io.StringIO()
    old, sys.stderr = sys.stderr, err
    try:
        code = main_memory(load_config(config_dir / "config.jsonc"), *args, out=out)  # type: ignore[arg-type]
    finally:
        sys.stderr = old
    return code, out.getvalue(), err.getvalue()


async def test_the_memory_command_prints_lists_and_diffs_and_says_what_is_wrong_in_one_line(
    tmp_path: Path,
) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "memory_autopsy", "agent": NOTEBOOK}})
    await play(config, "r")
    code, out, _ = _cli(tmp_path, "r", "1", "MEMORY.md")
    assert code == 0 and "4417" in out and "5820" not in out
    code, out, _ = _cli(tmp_path, "r", None, "MEMORY.md")  # the end by default
    assert code == 0 and "5820" in out
    code, out, _ = _cli(tmp_path, "r", "2")
    assert code == 0 and out.startswith("memory at end of phase 2") and "MEMORY.md" in out
    code, out, _ = _cli(tmp_path, "r", None, None, ["1", "end"])
    assert code == 0 and "-my locker code is 4417." in out and "+my locker code is now 5820" in out
    code, out, _ = _cli(tmp_path, "r", None, None, None, True)
    assert code == 0 and "end of phase 1" in out and "session switch in phase 3" in out
    for args, said in [
        (("nope",), "no run 'nope'"),
        (("r", "9"), "--at 9: the memory history has phases 1–3"),
        (("r", "soon"), "--at 'soon'"),
        (("r", "1", "USER.md"), "USER.md: not in the memory at end of phase 1 (files then: MEMORY.md)"),
        (("r", None, "NOTES.md", ["1", "2"]), "NOTES.md: in neither"),
    ]:
        code, out, err = _cli(tmp_path, *args)  # type: ignore[arg-type]
        assert code == 1 and out == "" and said in err and err.count("\n") == 1, err


async def test_an_agent_compaction_takes_a_snapshot(tmp_path: Path) -> None:
    agent = "memory_agents:CompactingNotebookAgent"
    config = make_config(tmp_path, {"r": {"benchmark": "memory_autopsy", "agent": agent}})
    await play(config, "r")
    history = MemoryHistory(config.results_path() / "r")
    compactions = [s for s in history.snapshots() if s.kind == "compaction"]
    assert compactions and all(s.label.startswith("agent compaction in phase ") for s in compactions)
    transcript = list(read_events(config.results_path() / "r" / "transcript.jsonl"))
    compacted = [e.n for e in transcript if e.kind == "agent_compacted"]
    assert [s.n for s in compactions] == [n + 1 for n in compacted]  # right after each compaction's event


async def test_an_agent_without_memory_files_leaves_no_history(tmp_path: Path) -> None:
    config = make_config(
        tmp_path, {"r": {"benchmark": "memory_autopsy", "agent": "memory_agents:MemorylessAgent"}}
    )
    await play(config, "r")
    assert not MemoryHistory(config.results_path() / "r").exists()
    code, _, err = _cli(tmp_path, "r")
    assert code == 1 and "no memory history" in err


# --- kill -9 and resume -------------------------------------------------------------------------------


def _kill_config(folder: Path) -> Path:
    config = {
        "models": {"slow-persona": {"model": "scripted/persona", "latency": 0.05}},
        "persona": {"model": "slow-persona"},
        "runs": {"r": {"benchmark": "memory_autopsy", "agent": NOTEBOOK}},
        "benchmarks_dir": str(ROOT / "tests" / "benchmarks"),
    }
    (folder / "config.jsonc").write_text(json.dumps(config))
    return folder / "config.jsonc"


def _play_until(config: Path, events: int | None) -> bool:
    """Play run ``r`` as a user does; kill it with -9 once ``events`` more events are in its transcript (True),
    or let it end (False)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT)])}
    command = headless_command(config)
    transcript = config.parent / "results" / "r" / "transcript.jsonl"
    count = lambda: transcript.read_bytes().count(b"\n") if transcript.exists() else 0  # noqa: E731
    target = count() + (events or 0)
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while process.poll() is None and time.monotonic() < deadline:
        if events is not None and count() >= target:
            process.send_signal(signal.SIGKILL)
            process.wait()
            return True
        time.sleep(0.005)
    assert process.wait(timeout=300) == 0, process.stderr.read().decode() if process.stderr else ""
    return False


@pytest.mark.parametrize("kills", [[7], [14, 9], [3, 3, 3, 3, 12], [22]])
def test_a_kill_anywhere_and_a_resume_leave_one_consistent_history(tmp_path: Path, kills: list[int]) -> None:
    config = _kill_config(tmp_path)
    for events in kills:
        _play_until(config, events)
    while _play_until(config, None):
        pass
    run_dir = tmp_path / "results" / "r"
    transcript = list(read_events(run_dir / "transcript.jsonl"))
    history = MemoryHistory(run_dir)
    kept = history.snapshots()
    assert [s.n for s in kept] == sorted(s.n for s in kept)  # in the transcript's order
    assert all(s.n <= len(transcript) for s in kept)
    assert kept[-1].kind == "end" and [s.kind for s in kept].count("session") == 1
    assert [s.phase for s in kept if s.kind == "phase"] == [0, 1]
    for snapshot in kept:  # every version of every file reads back
        for name in snapshot.files:
            assert history.text(snapshot, name) is not None
    on_disk = {p.name: p.read_text() for p in (run_dir / "agent" / "memories").glob("*.md")}
    assert {name: history.text(kept[-1], name) for name in on_disk} == on_disk
    phase2 = history.at_phase(2)
    assert phase2 is not None and "5820" in (history.text(phase2, "MEMORY.md") or "")


async def test_the_command_line_takes_the_file_after_the_moment_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mmb_tui.front_ends.cli import main

    config = make_config(tmp_path, {"r": {"benchmark": "memory_autopsy", "agent": NOTEBOOK}})
    await play(config, "r")
    where = ["--config", str(tmp_path / "config.jsonc"), "memory"]
    assert main([*where, "r", "--at", "1", "MEMORY.md"]) == 0
    assert "4417" in capsys.readouterr().out
    assert main([*where, "r", "MEMORY.md", "--at", "2"]) == 0
    assert "5820" in capsys.readouterr().out
    assert main([*where, "r", "a.md", "b.md"]) == 2
    assert "one run and at most one file" in capsys.readouterr().err
