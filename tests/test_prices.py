"""Prices: a model's USD per million input/output tokens turned into cost per role (persona, agent, judge),
shown next to the tokens in the report, in the runs table and (``tests/test_compare.py``) in compare."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_helpers import make_config, play

from engine.config import ConfigError, Price, parse_config
from engine.placement.scheduler import Scheduler
from engine.report.prices import (
    cost,
    input_label,
    role_costs,
    role_models,
    role_prices,
    tokens_label,
    total_cost,
    usd,
)
from engine.report.provenance import config_hash
from mmb_tui.view_format import compact_usd

MODELS = {
    "cheap": {"model": "scripted/persona", "price": {"input": 1.0, "output": 4.0}},
    "recall": {"model": "scripted/recall", "price": {"input": 0.5, "output": 2.0}},
    "free": {"model": "scripted/recall"},
}


def test_cost_is_tokens_times_the_price_per_million() -> None:
    price = Price(input=2.0, output=8.0)
    assert cost({"prompt_tokens": 1_000_000, "completion_tokens": 500_000}, price) == pytest.approx(2.0 + 4.0)
    tokens = {"persona": {"prompt_tokens": 300_000, "completion_tokens": 0}, "agent": {"prompt_tokens": 10}}
    prices = {"persona": Price(input=1.0, output=1.0)}
    assert role_costs(tokens, prices) == {"persona": pytest.approx(0.3)}
    assert total_cost(tokens, prices) == pytest.approx(0.3)
    assert total_cost(tokens, {}) is None
    assert (usd(0.3), usd(12.345), usd(0.0031), usd(0)) == ("$0.30", "$12.35", "$0.0031", "$0")
    assert (compact_usd(0.12), compact_usd(3.41), compact_usd(57.0), compact_usd(4321.0)) == (
        "$.12",
        "$3.4",
        "$57",
        "$4k",
    )


def test_each_role_is_priced_by_the_model_that_plays_it() -> None:
    runs = {
        "a": {"benchmark": "demo", "agent": "chatbot", "model": "recall"},
        "b": {"benchmark": "demo", "agent": "chatbot", "model": "free", "persona": "free", "judge": "recall"},
    }
    raw = {"models": MODELS, "persona": {"model": "cheap"}, "judge": {"model": "free"}, "runs": runs}
    config = parse_config(json.dumps(raw))
    assert role_models(config, config.runs["a"]) == {"persona": "cheap", "agent": "recall", "judge": "free"}
    assert role_prices(config, config.runs["a"]) == {
        "persona": Price(input=1.0, output=4.0),
        "agent": Price(input=0.5, output=2.0),
    }
    assert role_prices(config, config.runs["b"]) == {"judge": Price(input=0.5, output=2.0)}
    assert role_prices(config, None) == {}


def test_a_price_is_checked_and_leaves_the_config_hash_alone() -> None:
    with pytest.raises(ConfigError, match=r"models\.m\.price\.input"):
        parse_config('{"models": {"m": {"model": "x", "price": {"input": -1, "output": 1}}}}')
    with pytest.raises(ConfigError, match=r"models\.m\.price\.output"):
        parse_config('{"models": {"m": {"model": "x", "price": {"input": 1}}}}')
    runs = {"a": {"benchmark": "demo", "agent": "chatbot", "model": "m"}}
    plain = parse_config(json.dumps({"models": {"m": {"model": "x"}}, "runs": runs}))
    price = {"input": 1, "output": 2}
    priced = parse_config(json.dumps({"models": {"m": {"model": "x", "price": price}}, "runs": runs}))
    assert config_hash(plain, "a", "p", "m") == config_hash(priced, "a", "p", "m")


async def test_the_report_and_the_run_view_show_the_cost_next_to_the_tokens(tmp_path: Path) -> None:
    folder = tmp_path
    config = make_config(
        folder,
        {"r": {"benchmark": "full", "agent": "chatbot", "model": "recall", "persona": "cheap"}},
        models=MODELS,
    )
    run = await play(config, "r")
    usage = run.state.usage
    persona = (usage["persona"]["prompt_tokens"] * 1.0 + usage["persona"]["completion_tokens"] * 4.0) / 1e6
    agent = (usage["agent"]["prompt_tokens"] * 0.5 + usage["agent"]["completion_tokens"] * 2.0) / 1e6
    assert persona > 0 and agent > 0
    line = next(
        x for x in (folder / "results" / "report.md").read_text().splitlines() if x.startswith("📊 Tokens:")
    )
    expected = (
        f"📊 Tokens: persona {input_label(usage['persona'])}+{usage['persona']['completion_tokens']} ({usd(persona)}),"
        f" agent {usage['agent']['prompt_tokens']}+{usage['agent']['completion_tokens']} ({usd(agent)})"
    )
    assert line.startswith(expected) and line.endswith(f" · cost {usd(persona + agent)}")
    view = Scheduler(config).view("r")  # read back from state.json
    assert view.cost == pytest.approx(persona + agent)
    unpriced = make_config(
        folder, {"r": {"benchmark": "full", "agent": "chatbot", "model": "free"}}, models=MODELS
    )
    assert Scheduler(unpriced).view("r").cost is None


def test_the_tokens_line_leaves_out_a_role_nothing_played() -> None:
    used = {"persona": {"prompt_tokens": 120, "completion_tokens": 30, "calls": 2}}
    idle = {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0}
    assert tokens_label({**used, "agent": idle, "judge": idle}, {}) == "persona 120+30"
    assert tokens_label({"judge": idle}, {}) == "none"
