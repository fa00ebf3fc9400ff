"""Cost as on the provider's bill: cached input read from every usage shape, priced at its own rate.

``serve-scripted`` reports usage as a prefix-caching provider would (the prefix shared with the previous
request of the model is cached), so the whole path — the provider's usage, the meter, the state, the
report's cost — is played offline; the scripted models count tokens with the tokenizer, tool calls and
schemas included.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from engine_helpers import ROOT, fast, make_config, play

from engine.config import Price
from engine.models.base import Completion, ToolCall
from engine.models.openai_model import provider_usage
from engine.models.prompt_usage import PrefixCache, schema_tokens
from engine.models.scripted_persona import ScriptedPersonaModel
from engine.models.server import served_usage, start_server
from engine.models.tokens import count_tokens, message_tokens
from engine.persona.tools import tool_schemas
from engine.report.prices import cost, priced_tokens_label
from engine.run.build import build_run
from engine.transcript import read_events


@pytest.mark.parametrize(
    ("usage", "prompt", "cached"),
    [
        (
            {"prompt_tokens": 1000, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 800}},
            1000,
            800,
        ),
        (
            {
                "prompt_tokens": 1000,
                "completion_tokens": 5,
                "prompt_cache_hit_tokens": 900,
                "prompt_cache_miss_tokens": 100,
            },
            1000,
            900,
        ),
        (
            {"prompt_tokens": 200, "completion_tokens": 5, "cache_read_input_tokens": 700},
            900,
            700,
        ),  # Anthropic's
        (
            {"prompt_tokens": 1000, "completion_tokens": 5, "cache_read_input_tokens": 700},
            1000,
            700,
        ),  # included
        ({"prompt_tokens": 1000, "completion_tokens": 5, "prompt_tokens_details": None}, 1000, 0),
    ],
)
def test_cached_input_is_read_from_every_provider_shape(
    usage: dict[str, object], prompt: int, cached: int
) -> None:
    counted = provider_usage(SimpleNamespace(**usage))
    assert (counted.prompt_tokens, counted.cached_tokens, counted.completion_tokens) == (prompt, cached, 5)


def test_cached_input_is_priced_at_its_own_rate() -> None:
    usage = {"prompt_tokens": 1_000_000, "cached_tokens": 900_000, "completion_tokens": 100_000}
    assert cost(usage, Price(input=1.0, output=4.0, cached_input=0.1)) == pytest.approx(0.1 + 0.09 + 0.4)
    assert cost(usage, Price(input=1.0, output=4.0)) == pytest.approx(1.0 + 0.4)  # no cached price: input's
    label = priced_tokens_label(
        {"persona": usage}, {"persona": Price(input=1.0, output=4.0, cached_input=0.1)}
    )
    assert label.startswith("persona 1000000 (900000 cached)+100000 ($0.59)")


def test_a_prefix_cache_serves_what_the_previous_request_shared() -> None:
    tools = tool_schemas(False)
    cache = PrefixCache()
    history = [{"role": "system", "content": "You are Sam."}, {"role": "user", "content": "Phase 1/3"}]
    answer = Completion(tool_calls=[ToolCall(id="c1", name="send_message", arguments='{"text": "Hi"}')])
    first, cached = cache.prompt(history, tools)
    assert cached == 0 and first == count_tokens(history) + schema_tokens(tools)
    grown = [*history, answer.as_message(), {"role": "tool", "tool_call_id": "c1", "content": "Hello!"}]
    second, cached = cache.prompt(grown, tools)
    assert second == count_tokens(grown) + schema_tokens(tools)
    assert cached == schema_tokens(tools) + sum(map(message_tokens, history))  # schemas + the old prefix
    changed = [{"role": "system", "content": "You are Kim."}, *grown[1:]]
    _, cached = cache.prompt(changed, tools)
    assert cached == schema_tokens(tools)  # a changed system prompt: only the schemas before it
    _, cached = cache.prompt(changed, None)
    assert cached == 0  # other tools: nothing shared


@pytest.fixture
async def server_port() -> AsyncIterator[tuple[int, object]]:
    runner, port = await start_server("127.0.0.1", 0)
    yield port, runner
    await runner.cleanup()  # type: ignore[attr-defined]


async def test_serve_scripted_with_cached_prices_bills_the_demo_as_a_provider_would(
    tmp_path: Path, server_port: tuple[int, object]
) -> None:
    port, runner = server_port
    price = {"input": 1.0, "cached_input": 0.1, "output": 4.0}
    models = {
        "served": {"model": "scripted/persona", "base_url": f"http://127.0.0.1:{port}/v1", "price": price}
    }
    config = make_config(
        tmp_path,
        {"demo": {"benchmark": "demo", "agent": "chatbot", "persona": "served"}},
        benchmarks=ROOT / "benchmarks",
        models=models,
    )
    run = await play(config, "demo")
    served = served_usage(runner)  # type: ignore[arg-type]
    assert served and run.state.usage["persona"]["calls"] == len(served)
    billed = (
        sum(
            ((u.prompt_tokens - u.cached_tokens) * 1.0 + u.cached_tokens * 0.1 + u.completion_tokens * 4.0)
            for u in served
        )
        / 1e6
    )
    uncached = sum((u.prompt_tokens * 1.0 + u.completion_tokens * 4.0) for u in served) / 1e6
    persona = run.state.usage["persona"]
    assert cost(persona, Price(**price)) == pytest.approx(billed)
    assert billed < 0.5 * uncached  # the prefix is served from the cache
    line = next(
        x for x in (tmp_path / "results" / "report.md").read_text().splitlines() if x.startswith("📊 Tokens:")
    )
    assert f"persona {persona['prompt_tokens']} ({persona['cached_tokens']} cached)+" in line
    assert f"(${billed:.2f})" in line or f"(${billed:.4f})" in line


async def test_the_scripted_persona_counts_what_it_was_sent(tmp_path: Path) -> None:
    """Its reported input is the tokenizer's count of each request's messages and tool schemas (within 5 %)."""
    sent: list[int] = []

    class Recording(ScriptedPersonaModel):
        async def complete(self, messages, tools=None):  # type: ignore[no-untyped-def]
            sent.append(count_tokens(messages) + schema_tokens(tools))
            return await super().complete(messages, tools)

    config = make_config(
        tmp_path, {"r": {"benchmark": "demo", "agent": "chatbot"}}, benchmarks=ROOT / "benchmarks"
    )
    run = build_run(config, "r", tune=fast)
    run.persona_model = Recording()
    reported: list[int] = []
    inner = run.persona_model.complete

    async def counted(messages, tools=None):  # type: ignore[no-untyped-def]
        completion = await inner(messages, tools)
        reported.append(completion.usage.prompt_tokens)
        return completion

    run.persona_model.complete = counted  # type: ignore[method-assign]
    await run.run()
    assert sum(reported) == pytest.approx(sum(sent), rel=0.05)
    assert json.dumps(run.state.usage)  # stays JSON


async def test_a_profile_edit_leaves_the_system_prompt_as_it_was(tmp_path: Path) -> None:
    """The system prompt (and a provider's cache of it) stays the same for the whole run: the profile in it
    is the one the story begins with; a change is told in a later message."""
    config = make_config(
        tmp_path, {"r": {"benchmark": "demo", "agent": "chatbot"}}, benchmarks=ROOT / "benchmarks"
    )
    run = build_run(config, "r", tune=fast)
    bench = run.bench

    def system() -> str:
        return run.notebook.system_prompt(bench.instructions, bench.time_master, bench.sheets["profile"])

    before = system()
    result = run.notebook.edit("profile", "1.1", "Sam moved to York and now works at the city archive")
    assert "York" in result and system() == before
    assert "York" in run.notebook.read("profile")  # the sheet as it is now
    await run.adapter.close()
    run.lock.release()  # type: ignore[union-attr]


async def test_the_run_ended_event_carries_the_tokens_per_role_with_their_cached_part(tmp_path: Path) -> None:
    config = make_config(
        tmp_path, {"r": {"benchmark": "demo", "agent": "chatbot"}}, benchmarks=ROOT / "benchmarks"
    )
    run = await play(config, "r")
    ended = [e for e in read_events(run.run_dir / "transcript.jsonl") if e.kind == "run_ended"][-1]
    assert ended.tokens == run.state.usage and ended.tokens["persona"]["cached_tokens"] > 0
