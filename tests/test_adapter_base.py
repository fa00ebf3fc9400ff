"""The adapter interface and base: required methods, the reply log, the API-key helper, the name table, and
the README's example adapter (run against a small endpoint, so the page cannot rot)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import types
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from adapters.base import BaseAdapter
from adapters.chatbot import ChatbotAdapter
from engine.agents import (
    AdapterContext,
    AdapterError,
    AgentAdapter,
    MissingApiKey,
    UnknownAdapter,
    env_api_key,
    name_table,
    names,
    resolve,
)
from engine.clock import ManualClock
from engine.models.base import Completion, Message

ROOT = Path(__file__).resolve().parent.parent


def context(tmp_path: Path, **options: Any) -> AdapterContext:
    return AdapterContext("r", tmp_path, options, ManualClock(), lambda name: None)  # type: ignore[arg-type,return-value]


class Incomplete(BaseAdapter):
    """Forgot ``send_message``."""

    name = "incomplete"

    async def create_session(self, name: str) -> None:
        pass

    async def destroy_session(self) -> None:
        pass


class Echo(BaseAdapter):
    """Replies with what it was sent."""

    name = "echo"

    async def create_session(self, name: str) -> None:
        pass

    async def send_message(self, text: str) -> None:
        self.record_reply(f"echo: {text}")

    async def destroy_session(self) -> None:
        self.replies.clear()


# --- required methods ---------------------------------------------------------------------------------


def test_a_missing_required_method_fails_at_instantiation(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="abstract.*send_message"):
        Incomplete(context(tmp_path))  # type: ignore[abstract]
    with pytest.raises(TypeError, match="create_session.*destroy_session.*get_responses.*send_message"):
        AgentAdapter(context(tmp_path))  # type: ignore[abstract]


def test_resolve_refuses_an_incomplete_adapter_before_the_run() -> None:
    with pytest.raises(UnknownAdapter, match="does not implement the required method.*send_message"):
        resolve(f"{__name__}:Incomplete")
    assert resolve(f"{__name__}:Echo") is Echo


# --- the reply log ------------------------------------------------------------------------------------


async def test_replies_are_numbered_from_1_and_only_newer_ones_are_returned(tmp_path: Path) -> None:
    adapter = Echo(context(tmp_path))
    assert await adapter.get_responses(0) == []
    for text in ("a", "b", "c"):
        await adapter.send_message(text)
    assert [(m.seq, m.text) for m in await adapter.get_responses(0)] == [
        (1, "echo: a"),
        (2, "echo: b"),
        (3, "echo: c"),
    ]
    assert [m.seq for m in await adapter.get_responses(2)] == [3]
    assert await adapter.get_responses(3) == []
    assert (await adapter.get_responses(0))[0].time == adapter.ctx.clock.iso()
    await adapter.destroy_session()  # a reset forgets the replies held, never the numbering
    await adapter.send_message("d")
    assert [m.seq for m in await adapter.get_responses(0)] == [4]
    assert adapter.export_state() == {"next_seq": 5}


async def test_a_resumed_adapter_continues_the_numbering(tmp_path: Path) -> None:
    adapter = Echo(context(tmp_path))
    adapter.import_state({"next_seq": 8})
    await adapter.send_message("x")
    assert [m.seq for m in await adapter.get_responses(7)] == [8]
    assert await adapter.get_responses(8) == []


async def test_the_chatbot_resumes_from_state_saved_before_next_seq(tmp_path: Path) -> None:
    class Model:
        name = "fixed"

        async def complete(self, messages: list[Message], tools: Any = None) -> Completion:
            return Completion(content=" fine ")

    ctx = context(tmp_path)
    ctx.make_model = lambda name: Model()
    chatbot = ChatbotAdapter(ctx)
    chatbot.import_state({"messages": 0, "seq": 3, "virtual_time": False})  # saved as the last reply's seq
    await chatbot.send_message("hi")
    assert [(m.seq, m.text) for m in await chatbot.get_responses(3)] == [(4, "fine")]
    assert chatbot.export_state() == {"next_seq": 5, "messages": 2, "virtual_time": False}


async def test_a_reply_that_is_not_text_is_an_adapter_error(tmp_path: Path) -> None:
    adapter = Echo(context(tmp_path))
    with pytest.raises(AdapterError, match="echo: garbage reply content"):
        adapter.record_reply({"content": None})
    assert adapter.next_seq == 1


# --- the API-key helper -------------------------------------------------------------------------------


def test_the_api_key_helper_names_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MMB_TEST_NO_SUCH_KEY", raising=False)
    with pytest.raises(MissingApiKey, match="^environment variable MMB_TEST_NO_SUCH_KEY is not set$"):
        env_api_key("MMB_TEST_NO_SUCH_KEY")
    with pytest.raises(
        AdapterError, match="^api_key_env: environment variable MMB_TEST_NO_SUCH_KEY is not set$"
    ):
        Echo(context(tmp_path)).env_key("MMB_TEST_NO_SUCH_KEY")
    monkeypatch.setenv("MMB_TEST_NO_SUCH_KEY", "sk-1")
    assert Echo(context(tmp_path)).env_key("MMB_TEST_NO_SUCH_KEY") == "sk-1"


# --- the name table -----------------------------------------------------------------------------------


def test_a_name_given_twice_is_an_error() -> None:
    with pytest.raises(ValueError, match="'bot' is registered twice"):
        name_table([("bot", "a:A"), ("bot", "b:B")])
    assert {"chatbot", "openai-endpoint", "hermes", "openclaw"} <= set(names())
    with pytest.raises(UnknownAdapter, match="unknown agent 'nope'"):
        resolve("nope")


def test_names_are_listed_without_importing_adapters() -> None:
    probe = "import json, sys, engine.agents as a; a.names(); print(json.dumps(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    loaded = json.loads(result.stdout)
    assert [m for m in loaded if m == "adapters" or m.startswith("adapters.")] == []


# --- the README's example -----------------------------------------------------------------------------


def readme_adapter() -> type[BaseAdapter]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Writing an adapter") :]
    source = re.search(r"```python\n(.*?)```", section, re.S)
    assert source is not None, "README: no python block under 'Writing an adapter'"
    module = types.ModuleType("mybot")
    exec(compile(source.group(1), "README.md", "exec"), module.__dict__)  # noqa: S102
    cls = module.MyBotAdapter
    assert isinstance(cls, type) and issubclass(cls, BaseAdapter)
    return cls


@pytest.fixture
async def mybot_endpoint() -> AsyncIterator[tuple[list[dict[str, Any]], str]]:
    seen: list[dict[str, Any]] = []

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append({**body, "auth": request.headers.get("Authorization")})
        return web.json_response({"reply": f"got {body['message']}"})

    app = web.Application()
    app.router.add_post("/chat", chat)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    yield seen, f"http://127.0.0.1:{runner.addresses[0][1]}"
    await runner.cleanup()


async def test_the_readme_adapter_works(
    mybot_endpoint: tuple[list[dict[str, Any]], str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen, url = mybot_endpoint
    cls = readme_adapter()
    with pytest.raises(ValueError, match="base_url: required"):
        cls(context(tmp_path))
    adapter = cls(context(tmp_path, base_url=url))
    monkeypatch.delenv("MYBOT_KEY", raising=False)
    with pytest.raises(AdapterError, match="MYBOT_KEY"):
        await adapter.create_session("r")
    monkeypatch.setenv("MYBOT_KEY", "k")
    await adapter.create_session("r")
    await adapter.send_message("one")
    await adapter.send_message("two")
    assert [(m.seq, m.text) for m in await adapter.get_responses(1)] == [(2, "got two")]
    assert seen[-1]["auth"] == "Bearer k" and seen[0]["session"] == seen[1]["session"]
    resumed = cls(context(tmp_path, base_url=url))
    resumed.import_state(adapter.export_state())
    await resumed.send_message("three")
    assert [m.seq for m in await resumed.get_responses(2)] == [3]
    assert seen[-1]["session"] == seen[0]["session"]
