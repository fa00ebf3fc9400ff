"""What a run cost: its tokens per role (``engine/models/usage.py``) priced with the ``price`` of the model that
played each role (``models.<name>.price``: USD per million input, cached input and output tokens; cached
input, the part of the input a provider served from its prefix cache, is billed at ``cached_input``, the
input price when absent).

The roles are played by: the persona — the run's ``persona`` or the global persona model; the agent — the
run's ``model`` key (the model its adapter is given); the judge — the run's ``judge`` or ``judge.model``. A
role whose model has no price (a scripted model without an entry, an agent's own model) has no cost: figures
are shown only where every price they need is known.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.config import Config, Price, RunConfig

PER = 1_000_000  # prices are per million tokens


def role_models(config: Config, run_cfg: RunConfig) -> dict[str, str]:
    """The model name that plays each role of a run (roles without one left out)."""
    models = {"persona": run_cfg.persona or config.persona.model}
    agent_model = run_cfg.adapter_options().get("model")
    if isinstance(agent_model, str) and agent_model:
        models["agent"] = agent_model
    judge = run_cfg.judge or (config.judge.model if config.judge is not None else None)
    if judge:
        models["judge"] = judge
    return models


def role_prices(config: Config, run_cfg: RunConfig | None) -> dict[str, Price]:
    """The price of each role of a run whose model has one (``{}`` for a run not in the config)."""
    if run_cfg is None:
        return {}
    prices = {}
    for role, name in role_models(config, run_cfg).items():
        spec = config.models.get(name)
        if spec is not None and spec.price is not None:
            prices[role] = spec.price
    return prices


def cost(usage: Mapping[str, Any], price: Price) -> float:
    """USD for one role's usage as the provider bills it: uncached input at ``input``, cached input
    (``cached_tokens``, a part of ``prompt_tokens``) at ``cached_input``, output at ``output``."""
    prompt = int(usage.get("prompt_tokens", 0) or 0)
    cached = min(int(usage.get("cached_tokens", 0) or 0), prompt)
    completion = int(usage.get("completion_tokens", 0) or 0)
    return ((prompt - cached) * price.input + cached * price.cached_rate + completion * price.output) / PER


def input_label(usage: Mapping[str, Any]) -> str:
    """A role's input tokens, with the cached part where there is one: ``1200`` or ``1200 (900 cached)``."""
    prompt = int(usage.get("prompt_tokens", 0) or 0)
    cached = int(usage.get("cached_tokens", 0) or 0)
    return f"{prompt} ({cached} cached)" if cached else str(prompt)


def role_costs(tokens: Mapping[str, Mapping[str, Any]], prices: Mapping[str, Price]) -> dict[str, float]:
    """USD per role, for the roles with a price (tokens as ``UsageMeter.as_dict`` gives them)."""
    return {role: cost(tokens.get(role, {}), price) for role, price in prices.items()}


def total_cost(tokens: Mapping[str, Mapping[str, Any]], prices: Mapping[str, Price]) -> float | None:
    """The run's cost over its priced roles; None when no role has a price."""
    costs = role_costs(tokens, prices)
    return sum(costs.values()) if costs else None


def usd(amount: float) -> str:
    """``$0.42``, ``$12.30``, and small amounts with enough digits to see them: ``$0.0031``."""
    if amount == 0:
        return "$0"
    if amount < 0.01:
        return f"${amount:.4f}"
    return f"${amount:.2f}"


def tokens_label(tokens: Mapping[str, Mapping[str, Any]], costs: Mapping[str, float]) -> str:
    """Tokens per role that played, ``persona 1200+340``, each followed by its cost where known (``persona
    1200+340 ($0.0012)``), and the total of the known costs at the end."""
    parts = []
    for role, usage in tokens.items():
        if not any(usage.get(key) for key in ("calls", "prompt_tokens", "completion_tokens")):
            continue  # a role nothing played (no judge; the offline rules judge uses no tokens)
        priced = f" ({usd(costs[role])})" if role in costs else ""
        parts.append(f"{role} {input_label(usage)}+{usage.get('completion_tokens', 0)}{priced}")
    total = f" · cost {usd(sum(costs.values()))}" if costs else ""
    return (", ".join(parts) or "none") + total


def priced_tokens_label(tokens: Mapping[str, Mapping[str, Any]], prices: Mapping[str, Price]) -> str:
    """The report's ``Tokens:`` line: ``tokens_label`` with the cost of each role whose model has a price."""
    return tokens_label(tokens, role_costs(tokens, prices))
