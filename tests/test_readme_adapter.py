"""README's "Writing an adapter" holds: its example adapter, copied from the README as it stands
(``tests/readme_adapter.py``), plays ``demo`` to the end with the scripted persona, named in a config by
``package.module:Class`` or given one line in the built-in name table; nothing else is needed."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from engine_helpers import ROOT, events, kinds, make_config, play

from engine import agents
from engine.events import TerminationReason
from engine.models.scripted_recall import answer

ADAPTER_FILE = Path(__file__).with_name("readme_adapter.py")
TARGET = "readme_adapter:MyBotAdapter"
KEY = "a-secret-key"


def readme_example() -> str:
    """The one Python block of README's "Writing an adapter" section."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Writing an adapter", 1)[1]
    blocks = re.findall(r"```python\n(.*?)```", section.split("\n## ", 1)[0], re.S)
    assert len(blocks) == 1, "README's 'Writing an adapter' should hold one Python example"
    return str(blocks[0])


class MyBot:
    """The agent the README's adapter talks to: ``POST /chat`` ({"session", "message"} -> {"reply"}), a
    history per session, answered as ``scripted/recall`` answers; it checks the key the adapter sends."""

    def __init__(self) -> None:
        self.sessions: dict[str, list[dict[str, str]]] = {}
        self.unauthorised = 0

    async def chat(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != f"Bearer {KEY}":
            self.unauthorised += 1
            return web.json_response({"error": "bad key"}, status=401)
        body = await request.json()
        history = self.sessions.setdefault(str(body["session"]), [])
        history.append({"role": "user", "content": str(body["message"])})
        reply = answer(list(history))  # type: ignore[arg-type]
        history.append({"role": "assistant", "content": reply})
        return web.json_response({"reply": reply})


@pytest.fixture
async def mybot() -> AsyncIterator[tuple[MyBot, str]]:
    bot = MyBot()
    app = web.Application()
    app.router.add_post("/chat", bot.chat)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    yield bot, f"http://127.0.0.1:{runner.addresses[0][1]}"
    await runner.cleanup()


def test_the_test_adapter_is_the_readme_example_as_written() -> None:
    assert ADAPTER_FILE.read_text(encoding="utf-8") == readme_example(), (
        "tests/readme_adapter.py must be README's example unchanged: copy the README's block again"
    )


async def play_demo(tmp_path: Path, agent: str, base_url: str) -> None:
    runs = {"demo": {"benchmark": "demo", "agent": agent, "base_url": base_url}}
    config = make_config(tmp_path, runs, benchmarks=ROOT / "benchmarks")
    run = await play(config, "demo")
    assert run.termination is TerminationReason.FINISHED, run.termination
    assert run.state.finished and run.state.evaluations, "demo played to its end with its checks graded"
    evts = events(config, "demo")
    sent, replies = kinds(evts, "message_sent"), kinds(evts, "agent_replied")
    assert sent and len(replies) >= len(sent) // 2
    assert not kinds(evts, "error")
    report = (config.results_path() / "report.md").read_text(encoding="utf-8")
    assert "demo: demo @ mybot" in report


async def test_the_readme_adapter_plays_demo_named_by_module_and_class(
    mybot: tuple[MyBot, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bot, url = mybot
    monkeypatch.setenv("MYBOT_KEY", KEY)
    await play_demo(tmp_path, TARGET, url)
    assert bot.unauthorised == 0 and bot.sessions


async def test_one_registry_line_makes_it_built_in(
    mybot: tuple[MyBot, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bot, url = mybot
    monkeypatch.setenv("MYBOT_KEY", KEY)
    entries = (*agents.BUILTIN_ENTRIES, ("mybot", TARGET))
    monkeypatch.setattr(agents, "BUILTIN", agents.name_table(entries))
    assert "mybot" in agents.names()
    await play_demo(tmp_path, "mybot", url)
    assert bot.sessions


async def test_a_missing_key_stops_the_run_at_its_start_naming_it(
    mybot: tuple[MyBot, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bot, url = mybot
    monkeypatch.delenv("MYBOT_KEY", raising=False)
    runs = {"demo": {"benchmark": "demo", "agent": TARGET, "base_url": url}}
    config = make_config(tmp_path, runs, benchmarks=ROOT / "benchmarks")
    run = await play(config, "demo")
    assert run.termination is TerminationReason.WAITING and not bot.sessions
    (error,) = kinds(events(config, "demo"), "error")
    assert error.where == "agent" and "MYBOT_KEY is not set" in error.message
