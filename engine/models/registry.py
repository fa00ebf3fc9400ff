"""``make_model``: a model name (a ``config.models`` key or a built-in scripted name) to a ChatModel.

Built-in scripted names need no config entry and may carry a fault plan (``faults.py``):
``scripted/persona``, ``scripted/recall``, ``scripted/agent``. Their modules are imported lazily.
"""

from __future__ import annotations

import importlib

from engine.config import Config, ModelSpec, did_you_mean
from engine.models.base import ChatModel, ModelError, Role
from engine.models.faults import FaultyModel, parse_scripted_name
from engine.models.usage import MeteredModel, UsageMeter

SCRIPTED_MODELS: dict[str, str] = {
    "scripted/persona": "engine.models.scripted_persona:ScriptedPersonaModel",
    "scripted/recall": "engine.models.scripted_recall:ScriptedRecallModel",
    "scripted/agent": "engine.models.scripted_agent:ScriptedAgentModel",
}


def known_model_names(config: Config | None = None) -> list[str]:
    """The names ``make_model`` accepts: the config's model keys, then the built-in scripted names."""
    names = sorted(config.models) if config else []
    return names + [name for name in SCRIPTED_MODELS if name not in names]


def is_scripted_name(name: str) -> bool:
    """Whether ``name`` (options after ``?`` ignored) is a built-in scripted model."""
    return name.partition("?")[0] in SCRIPTED_MODELS


def _import_scripted(
    name: str,
    base: str,
    slips: frozenset[str] = frozenset(),
    plan: frozenset[str] = frozenset(),
    reply_tokens: int = 0,
) -> ChatModel:
    module_name, _, class_name = SCRIPTED_MODELS[base].partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as exc:
        raise ModelError(f"model {name!r}: {module_name}.{class_name} is not available ({exc})") from None
    if plan or reply_tokens:
        if base != "scripted/agent":
            what = "a memory plan is" if plan else "reply_tokens is"
            raise ModelError(f"model {name!r}: {what} played by scripted/agent only")
        planned: ChatModel = cls(plan=plan, reply_tokens=reply_tokens)
        return planned
    if not slips:
        model: ChatModel = cls()
        return model
    if base != "scripted/persona":
        raise ModelError(f"model {name!r}: slips are played by scripted/persona only")
    try:
        model = cls(slips=slips)
    except ValueError as exc:
        raise ModelError(f"model {name!r}: {exc}") from None
    return model


def make_scripted(name: str, latency: float = 0.0) -> FaultyModel:
    """A built-in scripted model with its fault plan; ModelError for unknown names or bad options."""
    parsed = parse_scripted_name(name)
    if parsed.base not in SCRIPTED_MODELS:
        raise ModelError(f"model {name!r}: not a scripted model (known: {', '.join(SCRIPTED_MODELS)})")
    inner = _import_scripted(name, parsed.base, parsed.slips, parsed.plan, parsed.reply_tokens)
    return FaultyModel(inner, name, parsed.faults, reasoning=parsed.reasoning, latency=latency)


def scripted_spec(name: str, config: Config | None) -> tuple[str, float] | None:
    """For a name served by a scripted model: (scripted name with options, latency); else None."""
    spec: ModelSpec | None = config.models.get(name) if config else None
    if spec is not None:
        return (spec.model, spec.latency) if spec.base_url is None and is_scripted_name(spec.model) else None
    return (name, 0.0) if is_scripted_name(name) else None


def make_model(name: str, config: Config, role: Role, meter: UsageMeter | None = None) -> ChatModel:
    """The model called ``name`` for ``role``, counting its usage into ``meter`` if given."""
    spec = config.models.get(name)
    if spec is not None and spec.base_url is not None:
        from engine.models.openai_model import make_openai_model  # the openai SDK only when needed

        return make_openai_model(name, spec, role, meter)
    scripted = scripted_spec(name, config)
    if scripted is None:
        if spec is not None:
            raise ModelError(
                f"model {name!r}: no base_url and {spec.model!r} is not a scripted model "
                f"(scripted: {', '.join(SCRIPTED_MODELS)})"
            )
        known = known_model_names(config)
        raise ModelError(f"unknown model {name!r} ({did_you_mean(name, known)}known: {', '.join(known)})")
    model_name, latency = scripted
    model = make_scripted(model_name, latency)
    model.name = name
    return MeteredModel(model, role, meter) if meter is not None else model
