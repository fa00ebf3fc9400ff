"""What the real-agent adapters share, offline: the minimal environment and the delivery check's reading of
an agent's session (``adapters/local_agent.py``). The real agents are exercised in ``tests/agents/``."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from adapters.base import AdapterContext
from adapters.hermes import HermesAdapter
from adapters.local_agent import delivery_in
from adapters.openclaw import session_of
from adapters.ports import free_port
from engine.clock import Clock


def test_the_last_user_message_answered_is_replied() -> None:
    session = [
        ("user", "Hi."),
        ("assistant", "Hello."),
        ("user", "My cat is Zorblax."),
        ("assistant", "Noted."),
    ]
    assert delivery_in(session, "My cat is Zorblax.") == ("replied", "Noted.")
    assert delivery_in(session, "  My cat is Zorblax.\n") == ("replied", "Noted.")  # as the agent trims it


def test_the_last_user_message_without_an_answer_is_unanswered() -> None:
    session = [("user", "Hi."), ("assistant", "Hello."), ("user", "My cat is Zorblax."), ("assistant", "")]
    assert delivery_in(session, "My cat is Zorblax.") == ("unanswered", None)


def test_an_older_message_or_an_empty_session_is_absent() -> None:
    session = [
        ("user", "My cat is Zorblax."),
        ("assistant", "Noted."),
        ("user", "Hi."),
        ("assistant", "Hello."),
    ]
    assert delivery_in(session, "My cat is Zorblax.") == ("absent", None)  # only the last user message counts
    assert delivery_in([], "Hi.") == ("absent", None)


def test_a_message_the_agent_shortened_still_matches() -> None:
    huge = "x" * 70000
    assert delivery_in([("user", huge[:65536]), ("assistant", "Noted.")], huge) == ("replied", "Noted.")
    assert delivery_in([("user", "x" * 100)], "x" * 200) == ("absent", None)


def test_the_agent_environment_is_built_from_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MMB_TEST_SECRET", "do-not-leak")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-persona")
    monkeypatch.setenv("TZ", "Europe/London")
    monkeypatch.delenv("LANG", raising=False)
    ctx = AdapterContext("r", tmp_path, {"virtual_time": False}, Clock(), lambda name: None)  # type: ignore[arg-type,return-value]
    adapter = HermesAdapter(ctx)
    env = adapter.process_env(tmp_path / "home", {"OWN": "1"})
    assert set(env) == {"PATH", "HOME", "LANG", "TZ", "OWN"} | ({"TMPDIR", "LC_ALL"} & set(env))
    assert env["HOME"] == str(tmp_path / "home") and env["LANG"] == "C.UTF-8" and env["TZ"] == "Europe/London"


async def test_check_delivery_is_unknown_without_a_running_agent(tmp_path: Path) -> None:
    ctx = AdapterContext("r", tmp_path, {}, Clock(), lambda name: None)  # type: ignore[arg-type,return-value]
    assert await HermesAdapter(ctx).check_delivery("Hi.") == "unknown"


def test_openclaws_own_recovery_note_does_not_hide_a_message_it_answered() -> None:
    """After a gateway restart OpenClaw resumes an interrupted turn with its own "[System] …" user message
    and answers it: the persona's message is then delivered and answered, not absent (sent twice)."""
    history = [
        {"role": "user", "content": "What is my gym locker number?"},
        {
            "role": "user",
            "content": "[System] Your previous turn was interrupted by a gateway restart. Continue.",
        },
        {"role": "assistant", "content": [{"type": "toolCall", "name": "memory_search"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "My gym locker is number 212."}]},
    ]
    session = session_of(history)
    assert session == [
        ("user", "What is my gym locker number?"),
        ("assistant", "My gym locker is number 212."),
    ]
    assert delivery_in(session, "What is my gym locker number?") == (
        "replied",
        "My gym locker is number 212.",
    )
    assert delivery_in(session_of(history[:2]), "What is my gym locker number?") == ("unanswered", None)


async def test_the_agent_state_says_what_is_true_of_a_process_and_its_server(tmp_path: Path) -> None:
    # issue 23, finding 10: an error said "<agent> is running" of a gateway that was gone or not answering
    ctx = AdapterContext("r", tmp_path, {}, Clock(), lambda name: None)  # type: ignore[arg-type,return-value]
    adapter = HermesAdapter(ctx)  # its "gateway": a sleeping process, its /health never listening
    adapter.port = free_port()
    umask = os.umask(0o022)
    os.umask(umask)
    command = [sys.executable, "-c", "import time; time.sleep(600)"]
    adapter.process.start(command, {"PATH": os.defpath}, tmp_path)
    try:
        state = await adapter.agent_state()
        assert f"the gateway is down: nothing listens at http://127.0.0.1:{adapter.port}/health" in state
        assert f"though its process (pid {adapter.process.pid}) still runs" in state
        assert adapter.process.pid is not None
        os.killpg(adapter.process.pid, signal.SIGKILL)
        error = await adapter.request_failed("chat request", ConnectionResetError("reset"))
        assert "hermes: chat request failed: ConnectionResetError('reset'); the gateway is down: " in str(
            error
        )
        assert "hermes agent exited with code -9" in str(error) and "is running" not in str(error)
    finally:
        await adapter.close()
        os.umask(umask)  # the agent's start set this process's own (``PrivateAgentProcess``)
