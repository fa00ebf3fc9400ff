"""The openai wrapper against the scripted server through the real SDK: retries, faults, reasoning, usage."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from engine.config import ModelSpec
from engine.models.base import Completion, Message, ModelError, ToolCall, ToolSchema, Usage
from engine.models.openai_model import DUMMY_KEY, OpenAIModel, make_openai_model, retry_after_seconds
from engine.models.registry import SCRIPTED_MODELS
from engine.models.server import start_server
from engine.models.usage import UsageMeter

KEY = "sk-test-secret-0123456789"
HISTORY: list[Message] = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "My car is a red Volvo from 2019."},
    {"role": "user", "content": "What car do I drive?"},
]
ANSWER = "You told me: My car is a red Volvo from 2019."


class ToolModel:
    """A scripted model that always calls send_message (served under ``scripted/agent`` in these tests)."""

    name = "test/tool"

    async def complete(self, messages: list[Message], tools: list[ToolSchema] | None = None) -> Completion:
        call = ToolCall(id="call_1", name="send_message", arguments='{"text": "hello"}')
        return Completion(tool_calls=[call], usage=Usage(prompt_tokens=11, completion_tokens=4))


@pytest.fixture
async def base_url(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[str]:
    monkeypatch.setitem(SCRIPTED_MODELS, "scripted/agent", f"{__name__}:ToolModel")
    runner, port = await start_server("127.0.0.1", 0, hang_seconds=5)
    yield f"http://127.0.0.1:{port}/v1"
    await runner.cleanup()


class Sleeps:
    """An injected sleep that records its delays instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def model(
    base_url: str, name: str, sleeps: Sleeps, meter: UsageMeter | None = None, **spec: Any
) -> OpenAIModel:
    settings: dict[str, Any] = {"timeout": 5.0, "max_retries": 3, **spec}
    return OpenAIModel(
        "test-model",
        ModelSpec(model=name, base_url=base_url, **settings),
        KEY,
        "agent",
        meter,
        sleep=sleeps,
        jitter=lambda: 0.0,
    )


async def test_answers_through_the_sdk(base_url: str) -> None:
    sleeps = Sleeps()
    completion = await model(base_url, "scripted/recall", sleeps).complete(HISTORY)
    assert completion.content == ANSWER
    assert completion.reasoning is None
    assert completion.usage.prompt_tokens > 0 and completion.usage.completion_tokens > 0
    assert sleeps.delays == []


async def test_recovers_from_429_honouring_retry_after(base_url: str) -> None:
    sleeps = Sleeps()
    completion = await model(base_url, "scripted/recall?faults=1:429,2:429", sleeps).complete(HISTORY)
    assert completion.content == ANSWER
    assert sleeps.delays == [1.0, 1.0]  # the server's Retry-After: 1, not the backoff


async def test_recovers_from_500_with_exponential_backoff(base_url: str) -> None:
    sleeps = Sleeps()
    completion = await model(base_url, "scripted/recall?faults=1:500,2:500,3:500", sleeps).complete(HISTORY)
    assert completion.content == ANSWER
    assert sleeps.delays == [1.0, 2.0, 4.0]


async def test_backoff_has_jitter(base_url: str) -> None:
    sleeps = Sleeps()
    chat = model(base_url, "scripted/recall?faults=1:500", sleeps)
    chat._jitter = lambda: 1.0
    await chat.complete(HISTORY)
    assert sleeps.delays == [1.25]


async def test_gives_up_after_max_retries_with_a_one_line_error(base_url: str) -> None:
    sleeps = Sleeps()
    chat = model(base_url, "scripted/recall?faults=1:500,2:500,3:500", sleeps, max_retries=2)
    with pytest.raises(ModelError) as error:
        await chat.complete(HISTORY)
    message = str(error.value)
    assert message.startswith("model 'test-model': HTTP 500: ")
    assert message.endswith("(after 3 attempts)")
    assert "\n" not in message and KEY not in message
    assert len(sleeps.delays) == 2


async def test_recovers_from_a_hang_by_timing_out(base_url: str) -> None:
    sleeps = Sleeps()
    chat = model(base_url, "scripted/recall?faults=1:hang", sleeps, timeout=0.3)
    completion = await chat.complete(HISTORY)
    assert completion.content == ANSWER
    assert sleeps.delays == [1.0]


async def test_a_hang_every_time_ends_in_a_timeout_error(base_url: str) -> None:
    chat = model(base_url, "scripted/recall?faults=1:hang,2:hang", Sleeps(), timeout=0.2, max_retries=1)
    with pytest.raises(ModelError, match=r"^model 'test-model': timed out after 0.2s \(after 2 attempts\)$"):
        await chat.complete(HISTORY)


async def test_non_retryable_4xx_fails_at_once(base_url: str) -> None:
    sleeps = Sleeps()
    with pytest.raises(ModelError, match=r"^model 'test-model': HTTP 404: .*not served here"):
        await model(base_url, "no-such-model", sleeps).complete(HISTORY)
    assert sleeps.delays == []


async def test_unreachable_endpoint_is_retried_then_reported() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleeps = Sleeps()
    chat = model(f"http://127.0.0.1:{port}/v1", "scripted/recall", sleeps, max_retries=2)
    with pytest.raises(ModelError, match=r"cannot reach http://127\.0\.0\.1:\d+/v1.*\(after 3 attempts\)$"):
        await chat.complete(HISTORY)
    assert sleeps.delays == [1.0, 2.0]


async def test_reasoning_content_is_kept(base_url: str) -> None:
    completion = await model(base_url, "scripted/recall?reasoning=1", Sleeps()).complete(HISTORY)
    assert completion.content == ANSWER
    assert completion.reasoning == "(scripted reasoning, call 1) answering the last message"


async def test_tool_calls_are_kept_with_raw_arguments(base_url: str) -> None:
    completion = await model(base_url, "scripted/agent", Sleeps()).complete(HISTORY)
    assert completion.content is None
    assert [(c.id, c.name, c.arguments) for c in completion.tool_calls] == [
        ("call_1", "send_message", '{"text": "hello"}')
    ]


async def test_malformed_arguments_are_passed_through_raw(base_url: str) -> None:
    completion = await model(base_url, "scripted/agent?faults=1:bad_args", Sleeps()).complete(HISTORY)
    assert [c.arguments for c in completion.tool_calls] == ['{"text": "hello"']


async def test_an_empty_completion_is_returned_as_is(base_url: str) -> None:
    completion = await model(base_url, "scripted/agent?faults=1:empty", Sleeps()).complete(HISTORY)
    assert completion.content is None
    assert completion.tool_calls == []


async def test_usage_is_accounted_per_role(base_url: str) -> None:
    meter = UsageMeter()
    spec = ModelSpec(model="scripted/agent", base_url=base_url)
    persona = OpenAIModel("p", spec, KEY, "persona", meter)
    agent = OpenAIModel("a", ModelSpec(model="scripted/recall", base_url=base_url), KEY, "agent", meter)
    await persona.complete(HISTORY)
    await persona.complete(HISTORY)
    answer = await agent.complete(HISTORY)
    # the server bills like a prefix-caching provider: the second, identical request is all cached
    first = meter.get("persona")
    assert first.calls == 2 and 0.9 * first.prompt_tokens / 2 < first.cached_tokens < first.prompt_tokens / 2
    assert meter.get("agent").calls == 1
    assert meter.get("agent").prompt_tokens == answer.usage.prompt_tokens
    assert meter.get("judge").calls == 0
    restored = UsageMeter.from_dict(meter.as_dict())
    assert restored.as_dict() == meter.as_dict()
    restored.merge(meter)
    doubled = {k: 2 * v for k, v in first.model_dump().items()}
    assert restored.get("persona").model_dump() == doubled
    assert restored.total().calls == 6
    restored.restore({"judge": {"prompt_tokens": 5, "completion_tokens": 1, "calls": 1}, "other": {}})
    assert restored.as_dict()["judge"] == {
        "prompt_tokens": 5,
        "completion_tokens": 1,
        "calls": 1,
        "cached_tokens": 0,
    }
    assert restored.get("persona").calls == 0
    await persona.aclose()
    await agent.aclose()


def test_missing_key_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MMB_TEST_MISSING_KEY", raising=False)
    spec = ModelSpec(
        model="deepseek-chat", base_url="https://api.example.com", api_key_env="MMB_TEST_MISSING_KEY"
    )
    with pytest.raises(ModelError) as error:
        make_openai_model("deepseek-flash", spec, "persona", None)
    assert str(error.value) == "model 'deepseek-flash': environment variable MMB_TEST_MISSING_KEY is not set"


def test_key_comes_from_the_named_variable_or_a_dummy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MMB_TEST_KEY", KEY)
    spec = ModelSpec(model="m", base_url="http://127.0.0.1:1/v1", api_key_env="MMB_TEST_KEY")
    assert make_openai_model("named", spec, "judge")._api_key == KEY
    local = ModelSpec(model="m", base_url="http://127.0.0.1:1/v1")
    assert make_openai_model("local", local, "agent")._api_key == DUMMY_KEY


async def test_an_auth_error_names_the_variable_and_hides_the_key() -> None:
    async def unauthorized(request: web.Request) -> web.Response:
        body = {"error": {"message": f"Incorrect API key provided: {KEY}", "type": "invalid_request_error"}}
        return web.json_response(body, status=401)

    app = web.Application()
    app.router.add_post("/v1/chat/completions", unauthorized)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    spec = ModelSpec(model="m", base_url=f"http://127.0.0.1:{port}/v1", api_key_env="MY_KEY")
    try:
        with pytest.raises(ModelError) as error:
            await OpenAIModel("remote", spec, KEY, "agent", sleep=Sleeps()).complete(HISTORY)
    finally:
        await runner.cleanup()
    message = str(error.value)
    assert message.startswith("model 'remote': HTTP 401: ")
    assert message.endswith("(check MY_KEY)")
    assert KEY not in message and "***" in message


def test_retry_after_parsing() -> None:
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "86400"}) == 60.0  # capped
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None
    assert retry_after_seconds(None) is None
