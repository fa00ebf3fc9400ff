"""The scripted-model server (JSON, SSE through the real SDK, transport faults), fault plans and the registry."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import aiohttp
import openai
import pytest

from engine.config import Config, ModelSpec
from engine.models.base import Completion, Message, ModelError, ToolCall, ToolSchema, Usage
from engine.models.faults import FaultyModel, parse_scripted_name
from engine.models.openai_model import OpenAIModel
from engine.models.prompt_usage import completion_tokens
from engine.models.registry import SCRIPTED_MODELS, known_model_names, make_model, make_scripted
from engine.models.server import main_serve, start_server
from engine.models.tokens import count_tokens
from engine.models.usage import MeteredModel, UsageMeter

ARGS = '{"text": "Hi! My sister Lena turned 31 last week, and we threw her a party."}'
HISTORY: list[Message] = [
    {"role": "user", "content": "Our dog Biscuit is a beagle."},
    {"role": "user", "content": "What breed is Biscuit?"},
]
PERSONA_HISTORY: list[Message] = [
    {"role": "system", "content": "You are the persona."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c0", "type": "function", "function": {"name": "send_message", "arguments": ARGS}}
        ],
    },
    {"role": "tool", "tool_call_id": "c0", "content": "Happy birthday to Lena!"},
]


class ToolModel:
    """Stands in for the persona: thinks, says a word, then calls send_message (and a second tool)."""

    name = "test/tool"

    async def complete(self, messages: list[Message], tools: list[ToolSchema] | None = None) -> Completion:
        calls = [
            ToolCall(id="call_a", name="send_message", arguments=ARGS),
            ToolCall(id="call_b", name="facts_mark_told", arguments='{"sheet": "family", "ids": ["1.1"]}'),
        ]
        return Completion(
            content="Let me tell her.",
            reasoning="She should hear about Lena.",
            tool_calls=calls,
            usage=Usage(prompt_tokens=30, completion_tokens=20),
        )


@pytest.fixture(autouse=True)
def tool_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(SCRIPTED_MODELS, "scripted/agent", f"{__name__}:ToolModel")


@pytest.fixture
async def server() -> AsyncIterator[str]:
    config = Config(models={"slow-recall": ModelSpec(model="scripted/recall?faults=1:500", latency=0.01)})
    runner, port = await start_server("127.0.0.1", 0, config, hang_seconds=5)
    yield f"http://127.0.0.1:{port}"
    await runner.cleanup()


def client(server: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{server}/v1", api_key="anything", max_retries=0)


async def test_streaming_sse_with_tool_calls_is_parsed_by_the_sdk(server: str) -> None:
    sdk = client(server)
    stream = await sdk.chat.completions.create(
        model="scripted/agent",
        messages=cast(Any, HISTORY),
        stream=True,
        stream_options={"include_usage": True},
    )
    content, reasoning, finish = "", "", None
    calls: dict[int, dict[str, str]] = {}
    usage = None
    chunks = 0
    async for chunk in stream:
        chunks += 1
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            delta = choice.delta
            content += delta.content or ""
            reasoning += (delta.model_extra or {}).get("reasoning_content") or ""
            finish = choice.finish_reason or finish
            for call in delta.tool_calls or []:
                entry = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                entry["id"] += call.id or ""
                if call.function is not None:
                    entry["name"] += call.function.name or ""
                    entry["arguments"] += call.function.arguments or ""
    await sdk.close()
    assert content == "Let me tell her."
    assert reasoning == "She should hear about Lena."
    assert calls == {
        0: {"id": "call_a", "name": "send_message", "arguments": ARGS},
        1: {"id": "call_b", "name": "facts_mark_told", "arguments": '{"sheet": "family", "ids": ["1.1"]}'},
    }
    assert finish == "tool_calls"
    # usage as a prefix-caching provider reports it: counted from what was sent and written, nothing cached yet
    written = Completion(
        content=content,
        reasoning=reasoning,
        tool_calls=[ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"]) for c in calls.values()],
    )
    assert usage is not None and usage.prompt_tokens_details is not None
    assert (usage.prompt_tokens, usage.completion_tokens) == (
        count_tokens(HISTORY),
        completion_tokens(written),
    )
    assert usage.prompt_tokens_details.cached_tokens == 0
    assert chunks > 10  # arguments really arrive in pieces


async def test_sse_wire_format_ends_with_done(server: str) -> None:
    body = {"model": "scripted/recall", "messages": HISTORY, "stream": True}
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{server}/v1/chat/completions", json=body) as r,
    ):
        assert r.status == 200
        assert r.headers["Content-Type"].startswith("text/event-stream")
        events = [line for line in (await r.text()).split("\n\n") if line]
    assert events[-1] == "data: [DONE]"
    first = json.loads(events[0].removeprefix("data: "))
    assert first["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    last = json.loads(events[-2].removeprefix("data: "))
    assert last["choices"][0]["finish_reason"] == "stop"  # no usage chunk without include_usage


async def test_json_completion_and_transport_faults_in_plan_order(server: str) -> None:
    name = "scripted/recall?faults=2:429,3:500"
    body = {"model": name, "messages": HISTORY}
    statuses: list[int] = []
    async with aiohttp.ClientSession(headers={"Authorization": "Bearer whatever"}) as session:
        for _ in range(4):
            async with session.post(f"{server}/v1/chat/completions", json=body) as r:
                statuses.append(r.status)
                payload = await r.json()
                if r.status == 429:
                    assert r.headers["Retry-After"] == "1"
                    assert payload["error"]["code"] == "rate_limit_exceeded"
                if r.status == 500:
                    assert payload["error"]["message"] == "scripted server error (call 3)"
                if r.status == 200:
                    message = payload["choices"][0]["message"]
                    assert message == {
                        "role": "assistant",
                        "content": "You told me: Our dog Biscuit is a beagle.",
                    }
                    assert payload["model"] == name
    assert statuses == [200, 429, 500, 200]


async def test_counters_are_per_model_name_string(server: str) -> None:
    body = {"messages": HISTORY}
    async with aiohttp.ClientSession() as session:
        url = f"{server}/v1/chat/completions"
        async with session.post(url, json={**body, "model": "scripted/recall?faults=1:500"}) as r:
            assert r.status == 500
        async with session.post(url, json={**body, "model": "scripted/recall?faults=1:500&reasoning=1"}) as r:
            assert r.status == 500  # a different name string: its own call 1
        async with session.post(url, json={**body, "model": "scripted/recall?faults=1:500"}) as r:
            assert r.status == 200


async def test_a_config_key_with_a_scripted_spec_is_served(server: str) -> None:
    spec = ModelSpec(model="slow-recall", base_url=f"{server}/v1", max_retries=0)
    chat = OpenAIModel("via-config", spec, "k", "agent")
    with pytest.raises(ModelError, match="HTTP 500: .*scripted server error"):
        await chat.complete(HISTORY)
    completion = await chat.complete(HISTORY)
    assert completion.content == "You told me: Our dog Biscuit is a beagle."
    await chat.aclose()


async def test_models_health_and_bad_requests(server: str) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{server}/health") as r:
            assert (r.status, await r.json()) == (200, {"status": "ok"})
        async with session.get(f"{server}/v1/models") as r:
            ids = [m["id"] for m in (await r.json())["data"]]
        assert ids == ["scripted/persona", "scripted/recall", "scripted/agent", "slow-recall"]
        url = f"{server}/v1/chat/completions"
        async with session.post(url, json={"model": "gpt-4o", "messages": []}) as r:
            assert r.status == 404
            assert (await r.json())["error"]["code"] == "model_not_found"
        async with session.post(url, data=b"not json") as r:
            assert r.status == 400
        async with session.post(url, json={"model": "scripted/recall?faults=1:boom", "messages": []}) as r:
            assert r.status == 404
            assert "bad fault '1:boom'" in (await r.json())["error"]["message"]


async def test_content_faults_in_process() -> None:
    model = make_scripted("scripted/agent?faults=1:bad_args,2:plain_text,3:echo,4:empty,5:429")
    bad = await model.complete(PERSONA_HISTORY)
    assert [c.arguments for c in bad.tool_calls] == [ARGS[:-1], '{"sheet": "family", "ids": ["1.1"]']
    plain = await model.complete(PERSONA_HISTORY)
    assert (plain.content, plain.tool_calls) == (
        "Hi! My sister Lena turned 31 last week, and we threw her a party.",
        [],
    )
    echo = await model.complete(PERSONA_HISTORY)
    assert echo.content == "Assistant: Happy birthday to Lena!"
    assert [c.id for c in echo.tool_calls] == ["call_a", "call_b"]
    empty = await model.complete(PERSONA_HISTORY)
    assert (empty.content, empty.tool_calls) == (None, [])
    with pytest.raises(ModelError, match="HTTP 429: scripted rate limit"):  # as the SDK path reads it
        await model.complete(PERSONA_HISTORY)
    assert model.calls == 5


async def test_echo_without_an_agent_reply_and_plain_text_without_send_message() -> None:
    echo = await make_scripted("scripted/agent?faults=1:echo").complete(HISTORY)
    assert echo.content == "Assistant: Sure, noted everything."
    plain = await make_scripted("scripted/recall?faults=1:plain_text").complete(HISTORY)
    assert plain.content == "You told me: Our dog Biscuit is a beagle."


def test_fault_plans_are_parsed_and_checked() -> None:
    parsed = parse_scripted_name("scripted/persona?faults=3:429,5:plain_text,7:echo&reasoning=1")
    assert parsed.base == "scripted/persona"
    assert parsed.faults == {3: "429", 5: "plain_text", 7: "echo"}
    assert parsed.reasoning
    assert parse_scripted_name("scripted/recall").faults == {}
    for bad, fragment in [
        ("scripted/recall?faults=0:429", "bad fault '0:429'"),
        ("scripted/recall?faults=3:teapot", "bad fault '3:teapot'"),
        ("scripted/recall?faults=3:429,3:500", "call 3 has two faults"),
        ("scripted/recall?fault=3:429", "unknown option 'fault'"),
    ]:
        with pytest.raises(ModelError, match=fragment):
            parse_scripted_name(bad)


async def test_make_model_resolves_names() -> None:
    config = Config(
        models={
            "remote": ModelSpec(model="deepseek-chat", base_url="http://127.0.0.1:1/v1"),
            "slow": ModelSpec(model="scripted/recall", latency=0.01),
            "broken": ModelSpec(model="gpt-4o"),
        }
    )
    assert isinstance(make_model("remote", config, "persona"), OpenAIModel)
    slow = make_model("slow", config, "agent")
    assert isinstance(slow, FaultyModel) and slow.latency == 0.01 and slow.name == "slow"
    meter = UsageMeter()
    metered = make_model("scripted/recall", config, "judge", meter)
    assert isinstance(metered, MeteredModel)
    completion = await metered.complete(HISTORY)
    assert meter.get("judge").model_dump() == {
        "prompt_tokens": completion.usage.prompt_tokens,
        "completion_tokens": completion.usage.completion_tokens,
        "calls": 1,
        "cached_tokens": 0,
    }
    with pytest.raises(
        ModelError, match=r"^unknown model 'gpt-5' \(known: broken, remote, slow, scripted/persona"
    ):
        make_model("gpt-5", config, "agent")
    with pytest.raises(ModelError, match="no base_url and 'gpt-4o' is not a scripted model"):
        make_model("broken", config, "agent")
    assert known_model_names(None) == list(SCRIPTED_MODELS)


async def test_latency_is_a_deadline_from_the_call_the_answers_own_work_inside_it() -> None:
    now = [100.0]
    delays: list[float] = []

    async def sleep(seconds: float) -> None:
        delays.append(seconds)
        now[0] += seconds

    class SlowToAnswer(ToolModel):
        async def complete(self, messages, tools=None):  # type: ignore[no-untyped-def]
            now[0] += 0.125  # the scripted answer's own work
            return await super().complete(messages, tools)

    model = FaultyModel(SlowToAnswer(), latency=0.5, sleep=sleep, clock=lambda: now[0])
    await model.complete(HISTORY)
    await model.complete(HISTORY)
    assert delays == [0.375, 0.375] and now[0] == 101.0  # each call took exactly its latency


def test_a_scripted_model_that_cannot_be_imported_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        SCRIPTED_MODELS, "scripted/persona", "engine.models.no_such_module:ScriptedPersonaModel"
    )
    with pytest.raises(ModelError, match=r"^model 'scripted/persona': engine\.models\.no_such_module\."):
        make_model("scripted/persona", Config(), "persona")


def test_main_serve_reports_a_bad_config_and_a_busy_port(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "config.jsonc"
    bad.write_text('{"models": {"x": {"nope": 1}}}')
    assert main_serve(0, config_path=str(bad)) == 1
    assert "config.jsonc: models.x" in capsys.readouterr().out
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        assert main_serve(busy.getsockname()[1]) == 1
    assert "cannot serve on 127.0.0.1:" in capsys.readouterr().out
