"""Run keys for adapters: the checks every adapter uses to validate ``ctx.options``.

A run's keys that the engine does not consume are handed to its adapter (SPEC §5). An adapter checks them all
in ``__init__``: ``check_known`` first, then one ``opt_*`` call per key. Every error is a ``ValueError`` whose
message starts with the key (``reply_timeout: must be between 1 and 86400, got 0``); the engine prefixes
``runs.<id>:`` and shows it as a one-line reason the run cannot start.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def check_known(options: dict[str, Any], allowed: Iterable[str], agent: str) -> None:
    """Raise ValueError naming the first option that ``agent`` does not know."""
    known = set(allowed)
    for key in options:
        if key not in known:
            raise ValueError(f"{key}: unknown option for agent {agent!r} (known: {', '.join(sorted(known))})")


def opt_number(
    options: dict[str, Any], key: str, default: float | None, low: float, high: float, integer: bool = False
) -> float | None:
    """A number in ``[low, high]`` (an int when ``integer``), or ``default`` when absent."""
    value = options.get(key, default)
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or (integer and not isinstance(value, int))
    ):
        raise ValueError(f"{key}: must be {'an integer' if integer else 'a number'}, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{key}: must be between {low:g} and {high:g}, got {value!r}")
    return value


def opt_bool(options: dict[str, Any], key: str, default: bool) -> bool:
    """``true`` or ``false``, or ``default`` when absent."""
    value = options.get(key, default)
    if not isinstance(value, bool):
        raise ValueError(f"{key}: must be true or false, got {value!r}")
    return value


def opt_str(options: dict[str, Any], key: str, default: str | None, allow_empty: bool = False) -> str | None:
    """A string (non-blank unless ``allow_empty``), or ``default`` when absent."""
    value = options.get(key, default)
    if value is not None and (not isinstance(value, str) or not (allow_empty or value.strip())):
        raise ValueError(f"{key}: must be a {'' if allow_empty else 'non-empty '}string, got {value!r}")
    return value


def opt_choice(options: dict[str, Any], key: str, default: str, choices: Iterable[str]) -> str:
    """One of ``choices``, or ``default`` when absent."""
    allowed = list(choices)
    value = options.get(key, default)
    if value not in allowed:
        raise ValueError(f"{key}: must be {' or '.join(repr(c) for c in allowed)}, got {value!r}")
    return str(value)


def require(value: str | None, key: str, agent: str) -> str:
    """``value`` of a required option; ValueError naming the key when it was not given."""
    if value is None:
        raise ValueError(f"{key}: required for agent {agent!r}")
    return value


def opt_flags(
    options: dict[str, Any], key: str, choices: Iterable[str], default: bool = False
) -> frozenset[str]:
    """``true`` (all of ``choices``), ``false`` (none), or a list of some of them; ``default`` when absent."""
    allowed = list(choices)
    value = options.get(key, default)
    if isinstance(value, bool):
        return frozenset(allowed) if value else frozenset()
    if isinstance(value, list) and all(isinstance(item, str) and item in allowed for item in value):
        return frozenset(value)
    raise ValueError(
        f"{key}: must be true, false or a list of {', '.join(repr(c) for c in allowed)}, got {value!r}"
    )
