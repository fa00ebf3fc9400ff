"""The openai-endpoint adapter against a small aiohttp endpoint, stateless and stateful."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from adapters.base import AdapterContext, AdapterError
from adapters.openai_endpoint import OpenAIEndpointAdapter
from engine.clock import ManualClock


class Endpoint:
    """Records requests; stateful mode keeps a history per session id; answers 'turn N of <id>'."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], dict[str, Any]]] = []
        self.sessions: dict[str, list[str]] = {}
        self.garbage = False

    async def chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append((dict(request.headers), body))
        if self.garbage:
            return web.Response(text="not json")
        session = request.headers.get("X-Session-Id") or body.get("user") or "-"
        history = self.sessions.setdefault(session, [])
        history += [m["content"] for m in body["messages"] if m["role"] == "user"]
        return web.json_response(
            {
                "choices": [
                    {"message": {"role": "assistant", "content": f"turn {len(history)}: {history[-1]}"}}
                ],
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
