"""Run keys for adapters: the checks every adapter uses to validate ``ctx.options``.

A run's keys that the engine does not consume are handed to its adapter (SPEC §5). An adapter checks them all
in ``__init__``: ``check_known`` first, then one ``opt_*`` call per key. Every problem is a ``ValueError`` whose
message starts with the key (``reply_timeout: must be between 1 and 86400, got 0``); the engine prefixes
``runs.<id>:`` and shows it as a one-line reason the run cannot start.

Inside ``with every_problem():`` (around an adapter's whole ``__init__``) a check does not raise: it notes its
problem and returns the default, so the next keys are checked too, and the block ends with one ``ValueError``
naming every bad key, ``; `` between them (``a: …; b: …``). Outside such a block the first problem raises.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")
_PROBLEMS: ContextVar[list[str] | None] = ContextVar("run_key_problems", default=None)


@contextmanager
def every_problem() -> Iterator[None]:
    """Check run keys all at once: the block's problems are collected and raised together at its end, as one
    ``ValueError`` (a ``ValueError`` the block raises itself is the last one named). Nested: one block."""
    if _PROBLEMS.get() is not None:
        yield
        return
    found: list[str] = []
    token = _PROBLEMS.set(found)
    try:
        yield
    except ValueError as exc:
        found.append(str(exc))
    finally:
        _PROBLEMS.reset(token)
    if found:
        raise ValueError("; ".join(dict.fromkeys(found)))


def problem(message: str, fallback: T) -> T:
    """A run key's problem (``message`` starts with the key): raised, or noted inside ``every_problem``, in
    which case ``fallback`` is returned for the check to go on."""
    found = _PROBLEMS.get()
    if found is None:
        raise ValueError(message)
    found.append(message)
    return fallback


def check_known(options: dict[str, Any], allowed: Iterable[str], agent: str) -> None:
    """A problem naming every option that ``agent`` does not know."""
    known = set(allowed)
    unknown = [key for key in options if key not in known]
    if unknown:
        what = "unknown option" if len(unknown) == 1 else "unknown options"
        problem(f"{', '.join(unknown)}: {what} for agent {agent!r} (known: {', '.join(sorted(known))})", None)


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
        return problem(f"{key}: must be {'an integer' if integer else 'a number'}, got {value!r}", default)
    if not low <= value <= high:
        return problem(f"{key}: must be between {low:g} and {high:g}, got {value!r}", default)
    return value


def opt_bool(options: dict[str, Any], key: str, default: bool) -> bool:
    """``true`` or ``false``, or ``default`` when absent."""
    value = options.get(key, default)
    if not isinstance(value, bool):
        return problem(f"{key}: must be true or false, got {value!r}", default)
    return value


def opt_str(options: dict[str, Any], key: str, default: str | None, allow_empty: bool = False) -> str | None:
    """A string (non-blank unless ``allow_empty``), or ``default`` when absent."""
    value = options.get(key, default)
    if value is not None and (not isinstance(value, str) or not (allow_empty or value.strip())):
        return problem(
            f"{key}: must be a {'' if allow_empty else 'non-empty '}string, got {value!r}", default
        )
    return value


def opt_choice(options: dict[str, Any], key: str, default: str, choices: Iterable[str]) -> str:
    """One of ``choices``, or ``default`` when absent."""
    allowed = list(choices)
    value = options.get(key, default)
    if value not in allowed:
        return problem(f"{key}: must be {' or '.join(repr(c) for c in allowed)}, got {value!r}", default)
    return str(value)


def require(value: str | None, key: str, agent: str) -> str:
    """``value`` of a required option; a problem naming the key when it was not given."""
    if value is None:
        return problem(f"{key}: required for agent {agent!r}", "")
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
    message = f"{key}: must be true, false or a list of {', '.join(repr(c) for c in allowed)}, got {value!r}"
    return problem(message, frozenset(allowed) if default else frozenset())


# --- the agent folder's size (``agent_disk_mb``, the local agents: ``adapters/local/agent.py``) --------------

DISK_KEY = "agent_disk_mb"
DEFAULT_DISK_MB = 2048  # far above what a real run's agent keeps (its memory, sessions, logs: a few MB)


def opt_disk_mb(options: dict[str, Any]) -> int:
    """``agent_disk_mb``: the most the agent's folder (``results/<run>/agent``) may hold, in MB (1 MB = 1024²
    bytes), checked before each message; a whole number from 1, ``DEFAULT_DISK_MB`` when absent."""
    return int(opt_number(options, DISK_KEY, DEFAULT_DISK_MB, 1, 10**7, integer=True) or DEFAULT_DISK_MB)


def opt_table(options: dict[str, Any], key: str, fields: dict[str, tuple[int, int, int]]) -> dict[str, int]:
    """An object of integers, ``fields``: name -> ``(default, low, high)``; each name absent takes its default.

    Problems name the key and the field: ``agent_limits.processes: must be an integer between 16 and 100000,
    got 3``; an unknown field names the known ones."""
    defaults = {name: default for name, (default, _, _) in fields.items()}
    value = options.get(key, {})
    if not isinstance(value, dict):
        example = ", ".join(f'"{name}": {default}' for name, default in list(defaults.items())[:2])
        return problem(f"{key}: must be an object such as {{{example}}}, got {value!r}", defaults)
    unknown = [name for name in value if name not in fields]
    if unknown:
        what = "unknown field" if len(unknown) == 1 else "unknown fields"
        known = ", ".join(sorted(fields))
        return problem(f"{key}: {what} {', '.join(map(repr, unknown))} (known: {known})", defaults)
    table = dict(defaults)
    for name, (default, low, high) in fields.items():
        got = value.get(name, default)
        if isinstance(got, bool) or not isinstance(got, int) or not low <= got <= high:
            table[name] = problem(
                f"{key}.{name}: must be an integer between {low} and {high}, got {got!r}", default
            )
        else:
            table[name] = got
    return table
