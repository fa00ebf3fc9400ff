"""Adapter registry: names listed without importing any adapter module (lazy imports).

Adding an agent = one module in ``adapters/`` plus one line here. Outside adapters are named in
config.jsonc as ``package.module:Class``.
"""

from __future__ import annotations

import importlib

from adapters.base import AgentAdapter

BUILTIN: dict[str, str] = {
    "chatbot": "adapters.chatbot:ChatbotAdapter",
    "openai-endpoint": "adapters.openai_endpoint:OpenAIEndpointAdapter",
    "hermes": "adapters.hermes:HermesAdapter",
    "openclaw": "adapters.openclaw:OpenClawAdapter",
}


class UnknownAdapter(Exception):
    pass


def names() -> list[str]:
    return sorted(BUILTIN)


def _import(target: str) -> type[AgentAdapter]:
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
        cls = getattr(module, class_name)
    except (ImportError, AttributeError) as exc:
        raise UnknownAdapter(f"adapter {target!r} cannot be imported: {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, AgentAdapter)):
        raise UnknownAdapter(f"adapter {target!r} is not an AgentAdapter subclass")
    return cls


def resolve(name: str) -> type[AgentAdapter]:
    """A built-in name or ``package.module:Class``."""
    if name in BUILTIN:
        return _import(BUILTIN[name])
    if ":" in name:
        return _import(name)
    raise UnknownAdapter(f"unknown agent {name!r}; built-in: {', '.join(names())}, or package.module:Class")
