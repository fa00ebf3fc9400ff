"""The openai-endpoint adapter against a small aiohttp endpoint, stateless and stateful; the stateless history in
its own file, so a run killed and resumed sends what an uninterrupted one sends and state.json stays bounded."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from engine_helpers import fast, make_config, play

from adapters.base import AdapterContext, AdapterError
from adapters.openai_endpoint import OpenAIEndpointAdapter
from engine.clock import ManualClock
from engine.config import Config
from engine.models.scripted_recall import answer
from engine.run.build import build_run
from engine.state import load_state


class Endpoint:
    """Records requests; stateful mode keeps a history per session id; answers 'turn N of <id>'."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], dict[str, Any]]] = []
        self.sessions: dict[str, list[str]] = {}
        self.garbage = False
        self.recall = False  # answer as scripted/recall does: a function of the messages sent, nothing else

    async def chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append((dict(request.headers), body))
        if self.garbage:
            return web.Response(text="not json")
        session = request.headers.get("X-Session-Id") or body.get("user") or "-"
        history = self.sessions.setdefault(session, [])
        history += [m["content"] for m in body["messages"] if m["role"] == "user"]
        content = answer(body["messages"]) if self.recall else f"turn {len(history)}: {history[-1]}"
        return web.json_response(
            {
                "choices": [{"message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 7, "completion_tokens": 3},
            }
        )


@pytest.fixture
async def endpoint() -> AsyncIterator[tuple[Endpoint, str]]:
    state = Endpoint()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", state.chat)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    yield state, f"http://127.0.0.1:{port}/v1"
    await runner.cleanup()


def make(tmp_path: Path, **options: Any) -> OpenAIEndpointAdapter:
    ctx = AdapterContext("r", tmp_path, options, ManualClock(), lambda name: None)  # type: ignore[arg-type,return-value]
    return OpenAIEndpointAdapter(ctx)


async def test_stateless_sends_the_whole_history(endpoint: tuple[Endpoint, str], tmp_path: Path) -> None:
    state, url = endpoint
    adapter = make(tmp_path, base_url=url, model="m")
    await adapter.create_session("s")
    await adapter.send_message("one")
    await adapter.send_message("two")
    assert [m["content"] for m in state.requests[-1][1]["messages"]] == ["one", "turn 1: one", "two"]
    replies = await adapter.get_responses(0)
    assert [(r.seq, r.text) for r in replies] == [(1, "turn 1: one"), (2, "turn 3: two")]
    assert [r.seq for r in await adapter.get_responses(1)] == [2]
    await adapter.start_new_conversation()
    await adapter.send_message("three")
    assert [m["content"] for m in state.requests[-1][1]["messages"]] == ["three"]


async def test_stateful_header_sends_only_the_new_turn(
    endpoint: tuple[Endpoint, str], tmp_path: Path
) -> None:
    state, url = endpoint
    adapter = make(tmp_path, base_url=url, model="m", mode="stateful", session_header="X-Session-Id")
    await adapter.send_message("one")
    await adapter.send_message("two")
    headers, body = state.requests[-1]
    assert [m["content"] for m in body["messages"]] == ["two"]
    first_session = headers["X-Session-Id"]
    assert (await adapter.get_responses(1))[0].text == "turn 2: two"
    await adapter.start_new_conversation()
    await adapter.send_message("three")
    assert state.requests[-1][0]["X-Session-Id"] != first_session
    assert (await adapter.get_responses(2))[0].text == "turn 1: three"


async def test_stateful_user_field(endpoint: tuple[Endpoint, str], tmp_path: Path) -> None:
    state, url = endpoint
    adapter = make(tmp_path, base_url=url, model="m", mode="stateful", session_field="user")
    await adapter.send_message("one")
    assert state.requests[-1][1]["user"] == adapter.session_id


async def test_api_key_from_the_named_variable(
    endpoint: tuple[Endpoint, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, url = endpoint
    adapter = make(tmp_path, base_url=url, model="m", api_key_env="MMB_TEST_ENDPOINT_KEY")
    monkeypatch.delenv("MMB_TEST_ENDPOINT_KEY", raising=False)
    with pytest.raises(AdapterError, match="MMB_TEST_ENDPOINT_KEY"):
        await adapter.create_session("s")
    monkeypatch.setenv("MMB_TEST_ENDPOINT_KEY", "sk-secret")
    await adapter.send_message("hi")
    assert state.requests[-1][0]["Authorization"] == "Bearer sk-secret"


async def test_garbage_and_unreachable_raise(endpoint: tuple[Endpoint, str], tmp_path: Path) -> None:
    state, url = endpoint
    state.garbage = True
    with pytest.raises(AdapterError, match="garbage"):
        await make(tmp_path, base_url=url, model="m").send_message("hi")
    with pytest.raises(AdapterError, match="failed"):
        await make(tmp_path, base_url="http://127.0.0.1:9/v1", model="m").send_message("hi")


def test_options_are_validated(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="base_url"):
        make(tmp_path, model="m")
    with pytest.raises(ValueError, match="mode"):
        make(tmp_path, base_url="http://x", model="m", mode="weird")
    with pytest.raises(ValueError, match="mode"):
        make(tmp_path, base_url="http://x", model="m", mode="stateful")
    with pytest.raises(ValueError, match="session_field"):
        make(tmp_path, base_url="http://x", model="m", mode="stateful", session_field="conversation")
    with pytest.raises(ValueError, match="colour"):
        make(tmp_path, base_url="http://x", model="m", colour="red")


async def test_the_agents_token_usage_is_recorded(endpoint: tuple[Endpoint, str], tmp_path: Path) -> None:
    from engine.models.base import Usage

    _, url = endpoint
    seen: list[Usage] = []
    ctx = AdapterContext(
        "r",
        tmp_path,
        {"base_url": url, "model": "m"},
        ManualClock(),
        lambda name: None,  # type: ignore[arg-type,return-value]
        record_usage=seen.append,
    )
    adapter = OpenAIEndpointAdapter(ctx)
    await adapter.send_message("one")
    await adapter.send_message("two")
    assert [(u.prompt_tokens, u.completion_tokens) for u in seen] == [(7, 3), (7, 3)]


def _stateless_run(tmp_path: Path, url: str) -> Config:
    return make_config(
        tmp_path, {"r": {"benchmark": "full", "agent": "openai-endpoint", "base_url": url, "model": "m"}}
    )


async def test_a_stateless_run_killed_and_resumed_sends_what_an_uninterrupted_one_sends(
    endpoint: tuple[Endpoint, str], tmp_path: Path
) -> None:
    server, url = endpoint
    server.recall = True
    (tmp_path / "uninterrupted").mkdir()
    await play(_stateless_run(tmp_path / "uninterrupted", url), "r")
    uninterrupted = [body["messages"] for _, body in server.requests]
    assert len(uninterrupted) > 8 and any(len(m) > 4 for m in uninterrupted)
    server.requests.clear()

    config = _stateless_run(tmp_path, url)
    run = build_run(config, "r", tune=fast)
    send, sent = run.adapter.send_message, [0]

    async def killed_after_the_8th_reply(text: str) -> None:  # its reply in the file, not yet checkpointed
        await send(text)
        sent[0] += 1
        if sent[0] == 8:
            raise asyncio.CancelledError

    run.adapter.send_message = killed_after_the_8th_reply  # type: ignore[method-assign]
    with pytest.raises(asyncio.CancelledError):
        await run.run()
    history = config.results_path() / "r" / "agent" / "openai-endpoint.jsonl"
    written = len(history.read_text(encoding="utf-8").splitlines())
    saved = load_state(config.results_path() / "r" / "state.json")
    assert saved is not None and saved.adapter_state["history_lines"] < written  # lines past the checkpoint

    resumed = await play(config, "r")
    assert resumed.state.finished
    assert [body["messages"] for _, body in server.requests] == [*uninterrupted[:8], *uninterrupted[7:]]
    assert b'{"reset": true}' in history.read_bytes()  # chapter2.md's new session, as a line of the file
    raw = json.loads((config.results_path() / "r" / "state.json").read_text(encoding="utf-8"))
    assert set(raw["adapter_state"]) == {"next_seq", "history_lines", "session_id"}  # no history in it
    assert raw["adapter_state"]["history_lines"] == len(history.read_text(encoding="utf-8").splitlines())


def test_a_history_saved_in_the_state_by_an_older_version_moves_to_its_file(tmp_path: Path) -> None:
    adapter = make(tmp_path, base_url="http://x", model="m")
    old = [{"role": "user", "content": "one"}, {"role": "assistant", "content": "turn 1: one"}]
    adapter.import_state({"next_seq": 2, "history": old, "session_id": "s"})
    assert adapter.log.messages == old and adapter.export_state()["history_lines"] == 2
    again = make(tmp_path, base_url="http://x", model="m")
    again.import_state(adapter.export_state())
    assert again.log.messages == old
