"""Token accounting per role (persona, agent, judge), kept in the run's ``state.json``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, get_args

from pydantic import BaseModel

from engine.models.base import ChatModel, Completion, Message, Role, ToolSchema, Usage

ROLES: tuple[Role, ...] = get_args(Role)


class RoleUsage(BaseModel):
    """What one role has spent so far."""

    prompt_tokens: int = 0  # every input token, the cached ones included
    completion_tokens: int = 0
    calls: int = 0
    cached_tokens: int = 0  # the part of prompt_tokens served from a provider's prefix cache

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class UsageMeter:
    """Adds up the usage of every model call, per role. Plain data in and out (``as_dict``/``from_dict``)."""

    def __init__(self) -> None:
        self._roles: dict[Role, RoleUsage] = {role: RoleUsage() for role in ROLES}

    def add(self, role: Role, usage: Usage, calls: int = 1) -> None:
        """Count one call (or ``calls``) of ``role`` with its token usage."""
        entry = self._roles[role]
        entry.prompt_tokens += usage.prompt_tokens
        entry.completion_tokens += usage.completion_tokens
        entry.cached_tokens += usage.cached_tokens
        entry.calls += calls

    def get(self, role: Role) -> RoleUsage:
        """A copy of one role's totals."""
        return self._roles[role].model_copy()

    def total(self) -> RoleUsage:
        """The totals over all roles."""
        return RoleUsage(
            prompt_tokens=sum(r.prompt_tokens for r in self._roles.values()),
            completion_tokens=sum(r.completion_tokens for r in self._roles.values()),
            calls=sum(r.calls for r in self._roles.values()),
            cached_tokens=sum(r.cached_tokens for r in self._roles.values()),
        )

    def as_dict(self) -> dict[str, dict[str, int]]:
        """JSON-able: ``{"persona": {"prompt_tokens": .., "completion_tokens": .., "calls": .., "cached_tokens":
        ..}, ...}``."""
        return {role: entry.model_dump() for role, entry in self._roles.items()}

    def merge(self, other: UsageMeter | Mapping[str, Any]) -> None:
        """Add another meter (or its ``as_dict``) into this one. Unknown roles in a dict are ignored."""
        data = other.as_dict() if isinstance(other, UsageMeter) else other
        for role in ROLES:
            raw = data.get(role)
            if not isinstance(raw, Mapping):
                continue
            entry = RoleUsage.model_validate(raw)
            usage = Usage(
                prompt_tokens=entry.prompt_tokens,
                completion_tokens=entry.completion_tokens,
                cached_tokens=entry.cached_tokens,
            )
            self.add(role, usage, calls=entry.calls)

    def restore(self, data: Mapping[str, Any] | None) -> None:
        """Replace the totals with those saved by ``as_dict`` (a resumed run)."""
        self._roles = {role: RoleUsage() for role in ROLES}
        if data:
            self.merge(data)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> UsageMeter:
        """Restore a meter saved with ``as_dict`` (``None`` or ``{}`` gives an empty meter)."""
        meter = cls()
        meter.restore(data)
        return meter


class MeteredModel:
    """Wraps a ChatModel that does not meter itself (the scripted ones) and counts its usage."""

    def __init__(self, inner: ChatModel, role: Role, meter: UsageMeter) -> None:
        self.name = inner.name
        self.inner = inner
        self.role = role
        self.meter = meter

    async def complete(self, messages: list[Message], tools: list[ToolSchema] | None = None) -> Completion:
        """Complete with the inner model and add the usage to the meter."""
        completion = await self.inner.complete(messages, tools)
        self.meter.add(self.role, completion.usage)
        return completion
