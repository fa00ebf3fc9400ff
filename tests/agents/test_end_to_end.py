"""Whole headless runs of a small benchmark against each real agent (Hermes, OpenClaw, Letta Code), through the CLI.

The scripted persona plays ``tests/benchmarks/agent_smoke`` (two phases, a fact saved with the agent's own
memory tool, a sheet told in context, a ``bench.newSession()``) against the real agent on ``scripted/agent``.
Checked: exit code 0, a report entry with full check coverage, the memory snapshots, the fact recalled from
memory in the new conversation, and no agent process left behind. Then the same run under faults ends with
the same evaluations: its agent killed mid-run (revived by the run), and the engine itself killed with -9 at
a random moment (no agent process or port left; started again, it resumes; the agent's own store then holds
each message once, twice only where the transcript marks it ``duplicated``). Marked ``agents`` (slow: real
gateways).

Letta Code runs no gateway (a process per message): its kills land on a call in flight, and it has no port.
``scripted/agent`` saves the fact with Letta's own tools (``Read``/``Write`` in its memory directory, committed with
``Bash``: ``engine/models/scripted_files.py``), so Letta too answers it from memory in the new conversation.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import scaled, stored_user_messages, until, until_sync
from engine_helpers import TEST_BENCHMARKS, make_config

from adapters.local.agent import LocalAgentAdapter
from adapters.local.agent_pid import pid_alive, read_pid_file
from adapters.local.install import install_hermes, install_letta, install_openclaw
from adapters.local.ports import port_is_free
from engine.autopsy.history import MemoryHistory
from engine.events import AgentActed, ErrorOccurred, MessageSent, TerminationReason
from engine.run.build import build_run
from engine.run.parts import RunSettings
from engine.state import load_state
from engine.transcript import read_events

pytestmark = pytest.mark.agents

ROOT = Path(__file__).resolve().parent.parent.parent
BENCH = ROOT / "tests" / "benchmarks" / "agent_smoke"
INSTALLERS: dict[str, Callable[[], object]] = {
    "hermes": install_hermes,
    "openclaw": install_openclaw,
    "letta": install_letta,
}
AGENTS = ["hermes", "openclaw", "letta"]
TOOLS = {
    "hermes": "Agent tools: memory, session_search, todo, terminal, file",
    "openclaw": "shell, files",
    "letta": "Agent tools: Bash, Read, Write, Edit, Memory",
}
GATEWAYS = {"hermes", "openclaw"}  # a process all along, on a port of its own


def _config(tmp_path: Path, agent: str) -> Path:
    config = {
        "persona": {"model": "scripted/persona"},
        "runs": {"smoke": {"benchmark": str(BENCH), "agent": agent, "model": "scripted/agent"}},
    }
    path = tmp_path / "config.jsonc"
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return path


def _cli(config: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "mmb_tui.front_ends.cli",
        "--config",
        str(config),
        "run",
        "smoke",
        "--headless",
    ]


def _play(config: Path) -> subprocess.CompletedProcess[str]:
    """``mmb-tui run --headless`` as a user runs it (a subprocess: the headless printer binds sys.stdout once)."""
    return subprocess.run(
        _cli(config), cwd=ROOT, capture_output=True, text=True, timeout=scaled(300), check=False
    )


def _scores(run_dir: Path) -> dict[str, Any]:
    state = load_state(run_dir / "state.json")
    assert state is not None
    return {check: evaluation.score for check, evaluation in state.evaluations.items()}


def _processes_under(folder: Path) -> list[str]:
    """Live processes (other than this one) whose working directory or environment points into ``folder``."""
    marker = str(folder)
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            environ = (entry / "environ").read_bytes().decode("utf-8", errors="replace")
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", errors="replace")
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if not pid_alive(int(entry.name)):
            continue
        if cwd.startswith(marker) or marker in environ:
            found.append(f"{entry.name}: {cmdline.strip()[:200]}")
    return found


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """``uninterrupted(agent)``: the folder of one whole run without faults (played once per agent)."""
    played: dict[str, Path] = {}

    def get(agent: str) -> Path:
        if agent not in played:
            INSTALLERS[agent]()
            folder = tmp_path_factory.mktemp(f"uninterrupted-{agent}")
            done = _play(_config(folder, agent))
            assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
            (folder / "stdout.txt").write_text(done.stdout, encoding="utf-8")
            played[agent] = folder
        return played[agent]

    return get


@pytest.mark.parametrize("agent", AGENTS)
def test_scripted_run_end_to_end(agent: str, uninterrupted: Callable[[str], Path]) -> None:
    folder = uninterrupted(agent)
    out = (folder / "stdout.txt").read_text(encoding="utf-8")
    assert "ended: finished" in out  # the headless line "⏹️ run ended: finished"
    assert "🔄" in out  # the new agent session of phase 2 (the adapter's start_new_conversation)

    report = (folder / "results" / "report.md").read_text(encoding="utf-8")
    assert f"smoke: agent_smoke @ {agent}" in report
    assert "Check coverage: 3/3" in report
    assert "Agent compactions:" in report
    # as the seed tested it: its own tools on, inside the sandbox, and the entry says so
    assert "Agent sandbox: bubblewrap" in report
    assert TOOLS[agent] in report

    run_dir = folder / "results" / "smoke"
    # the memory's history (``engine/autopsy/history.py``): its files at the session switch and at the end
    history = MemoryHistory(run_dir)
    snapshots = history.snapshots()
    assert [s.kind for s in snapshots][-1] == "end" and "session" in [s.kind for s in snapshots]
    switch = next(s for s in snapshots if s.kind == "session")
    scores = _scores(run_dir)
    assert set(scores) == {"1.1", "2.1", "2.2"}
    # the fact the agent saved with its own memory tool in phase 1 ...
    assert "4417" in (history.text(switch, "MEMORY.md") or "")
    # ... is what it answers from memory in the new conversation of phase 2 (the context is gone)
    assert scores["2.1"] == 10, scores
    if (
        agent == "letta"
    ):  # written with its own Write, committed with its own Bash (a new conversation reads that)
        actions = [e for e in read_events(run_dir / "transcript.jsonl") if isinstance(e, AgentActed)]
        assert {"Read", "Write", "Bash"} <= {action.tool for action in actions}, actions
        # the new conversation of phase 2 in its own store, every message once
        stored = stored_user_messages(agent, run_dir / "agent" / "home")
        assert len(stored) == len(_sent(run_dir / "transcript.jsonl"))
        assert "local-conv-2" in (run_dir / "state.json").read_text(encoding="utf-8")

    assert _processes_under(folder) == []
    assert not (run_dir / "adapter" / "agent.pid").exists()


# --- faults: the agent killed mid-run, the engine killed mid-run ---------------------------------------


def _quick_revive(settings: RunSettings) -> None:
    settings.fault_backoff = 0.5


@pytest.mark.parametrize("agent", AGENTS)
async def test_an_agent_killed_mid_run_is_revived_and_the_run_ends_the_same(
    agent: str, tmp_path: Path, uninterrupted: Callable[[str], Path]
) -> None:
    expected = _scores(uninterrupted(agent) / "results" / "smoke")
    config = make_config(
        tmp_path,
        {"smoke": {"benchmark": "agent_smoke", "agent": agent, "model": "scripted/agent"}},
        TEST_BENCHMARKS,
    )
    run = build_run(config, "smoke", tune=_quick_revive)
    adapter = run.adapter
    assert isinstance(adapter, LocalAgentAdapter)
    playing = asyncio.ensure_future(run.run())

    # two replies in: memory saved, sheet told (Letta: and a call in flight, its process is one per message)
    def ready() -> bool:
        return adapter.replies.next_seq >= 3 and (agent in GATEWAYS or adapter.process.alive())

    await until(lambda: ready() or playing.done(), 200, "two replies")
    first = adapter.process.pid
    assert first is not None and not playing.done()
    os.killpg(first, signal.SIGKILL)  # the gateway dies (OOM killer, a crash, a user's kill)

    assert await asyncio.wait_for(playing, scaled(200)) is TerminationReason.FINISHED
    assert adapter.process.pid != first  # it was started again
    assert _scores(config.results_path() / "smoke") == expected
    transcript = (config.results_path() / "smoke" / "transcript.jsonl").read_text(encoding="utf-8")
    assert '"where":"agent"' in transcript.replace(" ", "")  # the failure is on record
    assert "auto-restore" not in adapter.process.log_path.read_text(errors="replace")
    assert _processes_under(tmp_path) == []


def _agent_port(run_dir: Path, agent: str) -> int:
    home = run_dir / "agent" / "home"
    if agent == "openclaw":
        return int(json.loads((home / "openclaw.json").read_text())["gateway"]["port"])
    env = dict(line.split("=", 1) for line in (home / ".env").read_text().split())
    return int(env["API_SERVER_PORT"])


def _count(transcript: Path, kind: str) -> int:
    try:
        text = transcript.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 0
    return sum(1 for line in text.splitlines() if f'"kind":"{kind}"' in line.replace(" ", ""))


# the copies of a message in the agent's own session that one message_sent event stands for (the transcript is
# cut back to the last checkpoint on resume: a send in flight at the kill is recorded once, by the resumed run)
COPIES = {"": 1, "collected": 1, "duplicated": 2}  # "": a first send, or the first never arrived


def _sent(transcript: Path) -> list[MessageSent]:
    return [event for event in read_events(transcript) if isinstance(event, MessageSent)]


def _redelivery_problems(transcript: Path, stored: list[str]) -> list[str]:
    """What the agent's own store (``stored``: its user messages) says against the transcript's message_sent
    events: a message missing or twice without a ``duplicated`` mark, more copies than the events account
    for (exactly as many when no send failed), a first send ("") of a message the transcript already showed
    with the agent, or a ``possibly_duplicated`` (both agents can tell)."""
    events = list(read_events(transcript))
    sent = [event for event in events if isinstance(event, MessageSent)]
    failed = any(isinstance(event, ErrorOccurred) and event.where == "agent" for event in events)
    in_store = Counter(stored)
    problems = []
    for text in dict.fromkeys(event.text for event in sent):
        marks = [event.redelivery for event in sent if event.text == text]
        have, accounted = in_store[text], sum(COPIES.get(mark, 2) for mark in marks)
        if "possibly_duplicated" in marks:
            problems.append(f"{text!r}: possibly_duplicated")
        if have == 0:
            problems.append(f"{text!r}: not in the agent's store")
        if have > 1 and "duplicated" not in marks:
            problems.append(f"{text!r}: {have} times in the agent's store, never marked duplicated")
        if have > accounted or (have != accounted and not failed):
            problems.append(
                f"{text!r}: {have} times in the agent's store, the transcript accounts for {accounted}"
            )
        seen = [i for i, mark in enumerate(marks) if mark in ("collected", "duplicated")]
        if seen and "" in marks[seen[0] :]:
            problems.append(f"{text!r}: sent as new ('') after the transcript had it with the agent: {marks}")
    return problems


@pytest.mark.parametrize("agent", AGENTS)
def test_an_engine_killed_mid_run_leaves_no_agent_and_resumes_the_same(
    agent: str, tmp_path: Path, uninterrupted: Callable[[str], Path]
) -> None:
    """Issue 11: killed with -9 at a random moment, no agent process or port is left; started again, the run
    ends with the evaluations of an uninterrupted one, and the agent's own store (its database, every session)
    holds every message once, twice only where the transcript says ``duplicated``. The seed is printed and in
    every failure; ``MMB_KILL_SEED=<seed>`` replays the kill point (what was in flight then is up to timing)."""
    baseline = uninterrupted(agent) / "results" / "smoke"
    expected = _scores(baseline)
    sends = [event.text for event in _sent(baseline / "transcript.jsonl")]
    seed = int(os.environ.get("MMB_KILL_SEED") or time.time_ns() % 1_000_000)
    rng = random.Random(seed)
    # the n-th message_sent appears, then a random pause, cut short by the next message_sent: the kill lands
    # before the message reaches the agent, while the agent works on it, after its reply (before or after the
    # engine's checkpoint) or in the persona's turns up to the next message, a new conversation included;
    # the last message without the pause (the run ends right after its reply)
    after = rng.randint(1, len(sends))
    pause = round(rng.uniform(0.0, 1.5), 2) if after < len(sends) else 0.0
    where = (
        f"[{agent}: MMB_KILL_SEED={seed}: killed {pause:g} s after message_sent #{after} or at #{after + 1}]"
    )
    print(where)

    config = _config(tmp_path, agent)
    run_dir = tmp_path / "results" / "smoke"
    transcript = run_dir / "transcript.jsonl"
    engine = subprocess.Popen(_cli(config), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        until_sync(
            lambda: _count(transcript, "message_sent") >= after or engine.poll() is not None,
            200,
            f"the run getting going {where}",
        )
        until = time.monotonic() + pause
        while (
            time.monotonic() < until and _count(transcript, "message_sent") <= after and engine.poll() is None
        ):
            time.sleep(0.02)
        assert engine.poll() is None, f"the run ended before the kill {where}"
        port = None
        if agent in GATEWAYS:  # Letta Code runs only while a message is in flight, on no port
            record = read_pid_file(run_dir / "adapter" / "agent.pid")
            assert record is not None and pid_alive(record["pid"]), where
            port = _agent_port(run_dir, agent)
            assert not port_is_free(port), where
        engine.send_signal(signal.SIGKILL)
        engine.wait(timeout=scaled(10))
    finally:
        engine.kill()
        engine.wait()
    before_kill = [(event.text, event.redelivery) for event in _sent(transcript)]

    # the agent goes with its engine: no process, no port
    with contextlib.suppress(AssertionError):  # the asserts below say what is left
        until_sync(
            lambda: not _processes_under(tmp_path) and (port is None or port_is_free(port)),
            5,
            "the agent's end",
        )
    assert _processes_under(tmp_path) == [], where
    assert port is None or port_is_free(port), where

    done = _play(config)  # started again: it resumes from its last checkpoint
    assert done.returncode == 0, f"{where}\n{(done.stdout + done.stderr)[-4000:]}"
    assert "ended: finished" in done.stdout, where
    assert _scores(run_dir) == expected, where
    assert _processes_under(tmp_path) == [], where

    # no message twice in the agent's own session unless the transcript marks it
    stored = stored_user_messages(agent, run_dir / "agent" / "home")
    sent = [(event.text, event.redelivery) for event in _sent(transcript)]
    story = (
        f"{where}\nmessage_sent before the kill: {before_kill}\n"
        f"message_sent at the end (text, redelivery): {sent}\n"
        f"user messages in the agent's store: {stored}\n"
        f"of which the engine never sent: {[text for text in stored if text not in sends]}"
    )
    print(story)
    assert {text for text, _ in sent} == set(sends), story  # the messages of the uninterrupted run
    assert _redelivery_problems(transcript, stored) == [], story
