"""What the real-agent integration tests share: the machine's time factor (``scaled``, ``until``), an adapter
factory that always cleans up, ``ask`` (a turn recovered as a run recovers it), the checks of the box an agent
runs in (its environment, its processes), and a reader of the user messages an agent keeps in its own store
(``stored_user_messages``).

**Every wait for an agent goes through ``scaled``**: a timeout written for a quiet machine, times
``$MMB_TEST_TIME_FACTOR`` (default 3: a loaded 2-core machine running the suite beside something else).
Raise it on a slower machine; 1 on a quiet one gives the bare figures.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import sqlite3
import subprocess
import time
import warnings
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from adapters.base import AdapterContext, AdapterError
from adapters.local.agent import LocalAgentAdapter
from adapters.local.install import node_bin_dir
from engine.clock import Clock

FACT = "Remember that my cat is called Zorblax."
QUESTION = "What is my cat called?"
LONG_WORDS = "harbour lantern quartz meadow falcon ember glacier orchid cobalt thistle".split()

A = TypeVar("A", bound=LocalAgentAdapter)

# --- the machine's speed -----------------------------------------------------------------------------

TIME_FACTOR_ENV = "MMB_TEST_TIME_FACTOR"
DEFAULT_TIME_FACTOR = 3.0


def time_factor() -> float:
    """How many times slower than a quiet machine this one may be: ``$MMB_TEST_TIME_FACTOR``, default 3."""
    raw = os.environ.get(TIME_FACTOR_ENV, "").strip()
    try:
        factor = float(raw) if raw else DEFAULT_TIME_FACTOR
    except ValueError:
        raise ValueError(f"{TIME_FACTOR_ENV}: must be a number, got {raw!r}") from None
    if not 0 < factor < 1000:
        raise ValueError(f"{TIME_FACTOR_ENV}: must be above 0 (and below 1000), got {raw!r}")
    return factor


def scaled(seconds: float) -> float:
    """A wait of ``seconds`` on a quiet machine, as long as this one may need (``time_factor``)."""
    return seconds * time_factor()


async def until(holds: Callable[[], bool], seconds: float, what: str) -> None:
    """Wait until ``holds()``, within ``scaled(seconds)``; AssertionError naming ``what`` otherwise."""
    limit = scaled(seconds)
    deadline = time.monotonic() + limit
    while not holds():
        assert time.monotonic() < deadline, (
            f"{what}: not within {limit:g} s ({TIME_FACTOR_ENV}={time_factor():g})"
        )
        await asyncio.sleep(0.05)


def until_sync(holds: Callable[[], bool], seconds: float, what: str) -> None:
    """``until`` for a test without an event loop (a subprocess watched from outside)."""
    limit = scaled(seconds)
    deadline = time.monotonic() + limit
    while not holds():
        assert time.monotonic() < deadline, (
            f"{what}: not within {limit:g} s ({TIME_FACTOR_ENV}={time_factor():g})"
        )
        time.sleep(0.02)


def scaled_options(cls: type[LocalAgentAdapter], options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with the adapter's own waits scaled where the test left them to the defaults: its start
    (``start_timeout``) and one reply (``reply_timeout``, 600 s)."""
    return {
        "start_timeout": min(3600.0, scaled(cls.default_start_timeout)),
        "reply_timeout": min(24 * 3600.0, scaled(600)),
        **options,
    }


async def adapter_factory(
    cls: type[A], run_id: str, tmp_path: Path, endpoints: dict[str, dict[str, str]] | None = None
) -> AsyncIterator[Callable[..., A]]:
    """Yields ``factory(**options) -> adapter``; every adapter made is closed and its process gone after.

    ``endpoints``: models of a pretend ``config.jsonc`` (name -> base_url, model, api_key), e.g. a
    ``ToolModelServer``; ``scripted/agent`` needs none."""
    made: list[A] = []
    known = endpoints or {}

    def factory(**options: Any) -> A:
        ctx = AdapterContext(
            run_id=run_id,
            run_dir=tmp_path / "run",
            options=scaled_options(cls, options),
            clock=Clock(),
            make_model=lambda name: None,  # type: ignore[arg-type,return-value]
            model_endpoint=lambda name: known.get(name, {}),
        )
        adapter = cls(ctx)
        made.append(adapter)
        return adapter

    yield factory
    for adapter in made:
        await adapter.close()
        assert not adapter.process.alive()


# what a turn a slow (or loaded) machine dropped looks like: its reply past the timeout, or its connection
# closed with no response (a gateway that died mid-turn: under libfaketime, Hermes' SIGSEGV once in ten starts,
# gone with adapters/local/virtual_clock.c); any other failure is the test's to see
DROPPED = ("no reply to a message within", "chat request failed")


async def ask(adapter: LocalAgentAdapter, text: str, session: str = "revived") -> str:
    """Send ``text``; the replies are numbered in order and the last one is returned.

    A turn the machine dropped (``DROPPED``) is recovered once, as a run recovers it
    (``engine/run/agent_channel.py``): the agent is revived (``close``, ``create_session``: the same session),
    its own session says whether the message arrived (``check_delivery``), and the message goes again unless
    the agent had answered it (that answer is then collected). A warning says it happened."""
    before = adapter.next_seq - 1
    try:
        await adapter.send_message(text)
    except AdapterError as exc:
        if not any(sign in str(exc) for sign in DROPPED):
            raise
        warnings.warn(f"{adapter.name}: a dropped turn, recovered as a run would: {exc}", stacklevel=2)
        await adapter.close()
        await adapter.create_session(session)
        if await adapter.check_delivery(text) != "replied":
            await adapter.send_message(text)
    replies = await adapter.get_responses(before)
    assert [r.seq for r in replies] == list(range(before + 1, adapter.next_seq))
    return replies[-1].text


# --- the box ---------------------------------------------------------------------------------------

SECRET = "MMB_TEST_SECRET"
# what any agent process may inherit (adapters/local/agent.py PASSED_ENV, HOME, the virtual clock's)
COMMON_ENV = {
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "TZ",
    "TMPDIR",
    "LD_PRELOAD",
    "MMB_CLOCK_OFFSET_FILE",
    "PWD",  # bubblewrap's --chdir sets it (the agent's home)
}


def namespaces(pid: int) -> dict[str, str]:
    """``pid``'s mount and pid namespaces (``/proc/<pid>/ns/*``), to tell whether it runs in a sandbox."""
    return {name: os.readlink(f"/proc/{pid}/ns/{name}") for name in ("mnt", "pid")}


def agent_pids(adapter: LocalAgentAdapter) -> list[int]:
    """The agent's own processes: its group without bubblewrap (the sandbox's keeper)."""
    from adapters.local.sandbox.policy import is_sandbox_process

    assert adapter.process.pid is not None
    return [pid for pid in group_pids(adapter.process.pid) if not is_sandbox_process(pid)]


def environ_of(pid: int) -> dict[str, str]:
    """The environment ``pid`` was started with (``/proc/<pid>/environ``)."""
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = (item.decode("utf-8", errors="replace").partition("=") for item in raw.split(b"\0") if item)
    return {name: value for name, _, value in pairs}


def group_pids(pgid: int) -> list[int]:
    """The live processes of group ``pgid`` (an agent and the helpers it started)."""
    from adapters.local.agent_pid import group_members

    return group_members(pgid)


async def check_delivery_scenario(factory: Callable[..., LocalAgentAdapter]) -> None:
    """Before a message is sent again, the agent's own session says whether it arrived (issue 11, finding 12).

    Answered and then the run restarted: "replied" (the reply is recorded again, nothing is re-sent); never
    sent: "absent"; sent, then the model hung past ``reply_timeout`` and the run revived the agent:
    "unanswered" (the agent keeps the message; sending it again would put it there twice).
    """
    adapter = factory()
    await adapter.create_session("delivery")
    assert await ask(adapter, "Hello there.") == "Noted."
    await adapter.close()

    # the engine killed after the send: a new adapter over the same folder (its model server will hang)
    resumed = factory(model="scripted/agent?faults=1:hang", reply_timeout=scaled(8))
    resumed.import_state(adapter.export_state())
    await resumed.create_session("delivery")
    before = resumed.next_seq - 1
    assert await resumed.check_delivery("Hello there.") == "replied"
    assert [r.text for r in await resumed.get_responses(before)] == ["Noted."]
    assert await resumed.check_delivery("Something never sent.") == "absent"

    # the model hangs: the agent keeps the message (under load OpenClaw took 6.4 s to store it), then the
    # send times out, and the run revives the agent
    sending = asyncio.ensure_future(resumed.send_message("My favourite colour is teal."))
    await stored_last(resumed, "My favourite colour is teal.", 6)
    with pytest.raises(AdapterError, match="no reply"):
        await sending
    await resumed.close()  # the run's revive
    await resumed.create_session("delivery")
    assert await resumed.check_delivery("My favourite colour is teal.") == "unanswered"
    session = await resumed.session_messages()
    assert session is not None and session[-1] == ("user", "My favourite colour is teal.")


async def state_saying(adapter: LocalAgentAdapter, phrase: str, seconds: float) -> str:
    """The adapter's ``agent_state`` once it says ``phrase`` (asked again within ``scaled(seconds)``)."""
    limit = scaled(seconds)
    deadline = time.monotonic() + limit
    while phrase not in (state := await adapter.agent_state()):
        assert time.monotonic() < deadline, f"agent_state never said {phrase!r} within {limit:g} s: {state}"
        await asyncio.sleep(0.2)
    return state


async def stored_last(adapter: LocalAgentAdapter, text: str, seconds: float) -> None:
    """Wait (``scaled(seconds)``) until ``text`` is the last user message of the agent's current session."""
    limit = scaled(seconds)
    deadline = time.monotonic() + limit
    while True:
        with contextlib.suppress(Exception):  # a slow or busy agent: look again
            session = await asyncio.wait_for(adapter.session_messages(), limit)
            users = [said for role, said in session or [] if role == "user"]
            if users and users[-1].strip() == text:
                return
        assert time.monotonic() < deadline, f"{text!r} not in the agent's session within {limit:g} s"
        await asyncio.sleep(0.2)


# --- the agent's own store -------------------------------------------------------------------------


def stored_user_messages(agent: str, home: Path) -> list[str]:
    """Every user message ``agent`` keeps in its own store under its ``home`` (``run_dir/agent/home``), all
    its sessions and conversations, oldest first; read from the database, not through the agent (which
    shows only its current session). Call it when the agent is stopped.

    - Hermes: ``state.db``, table ``messages`` (``session_id``, ``role``, ``content``): one row per message,
      every session id of the run (a new conversation is a new session).
    - OpenClaw: ``state/agents/*/agent/openclaw-agent.sqlite``, table ``transcript_events``: a user message
      is an event ``{"type": "message", "message": {"role": "user", "content": ...}}`` (large events are
      zstd-compressed in ``event_zstd``); its ``sessions.reset`` keeps the same session (a ``reset`` event).
    - Letta Code: ``.letta/lc-local-backend/conversations/*/messages.jsonl``, every conversation of its agents
      (a new conversation is a new one), the user's words without Letta's ``<system-reminder>`` blocks.

    Raises ``AssertionError`` when the store is missing or holds what this reader cannot see (OpenClaw's cold
    transcript archives, a compressed event that cannot be inflated): it never under-counts quietly.
    """
    if agent == "hermes":
        return _hermes_user_messages(home / "state.db")
    if agent == "openclaw":
        stores = sorted((home / "state" / "agents").glob("*/agent/openclaw-agent.sqlite"))
        assert stores, f"no OpenClaw transcript database under {home}"
        return [text for store in stores for text in _openclaw_user_messages(store)]
    if agent == "letta":
        return _letta_user_messages(home.parent)
    raise ValueError(f"no store reader for agent {agent!r}")


def _letta_user_messages(agent_dir: Path) -> list[str]:
    from adapters.letta.store import STORE, agent_ids, conversations, entries, message_of, user_text
    from adapters.local.files.safe_files import AgentFolder

    folder = AgentFolder(agent_dir)
    assert (agent_dir / STORE).is_dir(), f"no Letta store under {agent_dir}"
    texts = []
    for agent in agent_ids(folder):
        for conversation in conversations(folder, agent):
            for entry in entries(folder, conversation):
                message = message_of(entry)
                if message is not None and message.get("role") == "user":
                    texts.append(user_text(message))
    return texts


def _read_only(path: Path) -> sqlite3.Connection:
    assert path.is_file(), f"no database at {path}"
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)


def _hermes_user_messages(path: Path) -> list[str]:
    with contextlib.closing(_read_only(path)) as db:
        rows = db.execute("SELECT content FROM messages WHERE role = 'user' ORDER BY id").fetchall()
    return [content if isinstance(content, str) else "" for (content,) in rows]


def _openclaw_user_messages(path: Path) -> list[str]:
    with contextlib.closing(_read_only(path)) as db:
        archived = db.execute("SELECT count(*) FROM session_transcript_cold_archives").fetchone()[0]
        assert archived == 0, f"{path}: {archived} cold transcript archive(s) this reader does not open"
        rows = db.execute(
            "SELECT event_json, event_zstd FROM transcript_events ORDER BY created_at, session_id, seq"
        ).fetchall()
    packed = [blob for event_json, blob in rows if event_json is None]
    unpacked = iter(_inflate_all(packed))
    texts = []
    for event_json, _ in rows:
        event = json.loads(event_json if event_json is not None else next(unpacked))
        message = event.get("message") if event.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "user":
            texts.append(_text_of(message.get("content")))
    return texts


def _text_of(content: Any) -> str:
    if isinstance(content, list):  # content parts: the text ones
        return "".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text"
        )
    return content if isinstance(content, str) else ""


# zstd (Python 3.11 has none) through the Node installed for OpenClaw: base64 blobs in, UTF-8 texts out
_INFLATE_ALL_JS = (
    'const z=require("zlib");const blobs=JSON.parse(require("fs").readFileSync(0,"utf8"));'
    'process.stdout.write(JSON.stringify(blobs.map(b=>z.zstdDecompressSync(Buffer.from(b,"base64")).toString("utf8"))))'
)


def _inflate_all(blobs: list[bytes]) -> list[str]:
    if not blobs:
        return []
    done = subprocess.run(
        [str(node_bin_dir() / "node"), "-e", _INFLATE_ALL_JS],
        input=json.dumps([base64.b64encode(b).decode("ascii") for b in blobs]).encode("ascii"),
        capture_output=True,
        timeout=scaled(20),
        check=False,
    )
    assert done.returncode == 0, f"could not inflate OpenClaw transcript events: {done.stderr[-2000:]!r}"
    texts = json.loads(done.stdout)
    assert isinstance(texts, list) and len(texts) == len(blobs)
    return [str(text) for text in texts]


async def sandbox_scenario(adapter: LocalAgentAdapter, shell_tool: str, tmp_path: Path) -> dict[str, str]:
    """The agent, made to use its own shell tool (``tool_model``'s ``MMB-CALL``), writes a note in its home and
    tries to read the checkout, write in the user's home and list another run's folder; returns what each try
    printed (read back from files it wrote in its home), after checking the writes it must not make."""
    from adapters.local.sandbox.policy import CHECKOUT

    other_run = (
        tmp_path / "other-run"
    )  # beside this run's folder (``tmp_path / "run"``): results of another run
    other_run.mkdir(exist_ok=True)
    (other_run / "secret.txt").write_text("another run's transcript")
    probe = Path.home() / f"mmb-sandbox-probe-{os.getpid()}"
    command = (
        f"echo remembered > $HOME/note.md; cat {CHECKOUT}/README.md > $HOME/checkout.txt 2>&1; "
        f"ls {other_run} > $HOME/other-run.txt 2>&1; touch {probe} 2> $HOME/user-home.txt; "
        "readlink /proc/self/ns/mnt /proc/self/ns/pid > $HOME/namespaces.txt"
    )
    await adapter.create_session("sandbox")
    try:
        await ask(adapter, f"MMB-CALL {shell_tool} {json.dumps({'command': command})}", "sandbox")
        assert not probe.exists(), "the agent wrote in the user's home"
    finally:
        probe.unlink(missing_ok=True)
    home = adapter.agent_dir / "home"
    return {path.stem: path.read_text() for path in home.glob("*.*") if path.suffix in (".md", ".txt")}


def assert_boxed(seen: dict[str, str], adapter: LocalAgentAdapter) -> None:
    """What ``sandbox_scenario`` saw, as the sandbox must make it: only the agent's own folder written."""
    assert seen.get("note") == "remembered\n", seen  # its own home is writable
    assert "No such file" in seen["checkout"], seen["checkout"]  # the checkout is hidden
    assert "secret.txt" not in seen["other-run"], seen["other-run"]  # so are other runs
    assert "Read-only file system" in seen["user-home"], seen["user-home"]  # the user's home is not writable
    engine = namespaces(os.getpid())
    inside = seen["namespaces"].split()
    assert inside[0] != engine["mnt"] and inside[1] != engine["pid"], (inside, engine)
    for pid in agent_pids(adapter):  # every process of the agent, not only the shell it started
        assert namespaces(pid)["mnt"] != engine["mnt"] and namespaces(pid)["pid"] != engine["pid"], pid
