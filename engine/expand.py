"""Run groups: a run's ``repeats`` and the ``matrices`` of config.jsonc expanded into ordinary runs.

Expansion works on the config as read (plain JSON), before it is validated, so everything downstream (the
scheduler, the builder, the TUI, ``mmb-tui run``) sees only ordinary runs, each with its own results folder,
resumable on its own:

- ``"X": {…, "repeats": N}`` becomes ``X.r1`` … ``X.rN`` (N = 1: ``X`` as it is), and the group ``X``;
- ``"matrices": {"M": {"agents": [A…], "benchmarks": [B…], "repeats": N, …run keys}}`` becomes one run per
  agent × benchmark × repeat, ``M.<agent>.<benchmark>`` (``.r<k>`` when N > 1), the group ``M`` of them all
  (its cells in order) and, when N > 1, a group per cell. An agent is an adapter name (``"chatbot"``) or an
  object of run keys with ``agent`` and an optional ``name`` (its part of the ids; by default the agent's
  name, with the model's when one is given): ``{"agent": "hermes", "model": "deepseek-flash"}``.

Generated runs keep a record of where they were declared, so a validation error names the declared key path
(``matrices.study.agents.1.model``), not the generated run.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

REPEAT_SUFFIX = re.compile(r"^(?P<base>.+)\.r(?P<k>[1-9]\d*)$")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


class ExpandError(Exception):
    """A one-line error naming the key path: ``matrices.study.agents: …``."""


@dataclass(frozen=True)
class Group:
    """Runs that belong together: a run's repeats, a matrix, or one agent × benchmark cell of a matrix."""

    runs: tuple[str, ...]
    cells: tuple[str, ...] = ()  # a matrix: its cells, each a group name (repeated) or a run id

    @property
    def is_matrix(self) -> bool:
        return bool(self.cells)


def repeat_id(run_id: str, k: int) -> str:
    """The id of repeat ``k`` (from 1) of run ``run_id``."""
    return f"{run_id}.r{k}"


def repeat_base(run_id: str) -> str | None:
    """``X`` for a repeat id ``X.r<k>``; None for any other id."""
    match = REPEAT_SUFFIX.match(run_id)
    return match["base"] if match else None


def id_part(text: str) -> str:
    """A name made safe for a run id (a folder name): anything but letters, digits, ``_`` and ``-`` → ``-``."""
    return _UNSAFE.sub("-", text).strip("-") or "x"


class MatrixAgent(BaseModel):
    """An agent of a matrix: run keys with ``agent``; a bare string is an adapter name."""

    model_config = ConfigDict(extra="allow")

    agent: str
    name: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _bare_name(cls, data: Any) -> Any:
        return {"agent": data} if isinstance(data, str) else data

    def id_name(self) -> str:
        if self.name:
            return id_part(self.name)
        model = (self.model_extra or {}).get("model")
        return id_part(f"{self.agent}-{model}" if isinstance(model, str) and model else self.agent)

    def run_keys(self) -> dict[str, Any]:
        return {"agent": self.agent, **(self.model_extra or {})}


class Matrix(BaseModel):
    """``matrices.<name>``: agents × benchmarks × repeats; any other key is a run key for all its runs."""

    model_config = ConfigDict(extra="allow")

    agents: list[MatrixAgent] = Field(min_length=1)
    benchmarks: list[str] = Field(min_length=1)
    repeats: int = Field(default=1, ge=1, strict=True)


@dataclass
class Expansion:
    """The config as read with its runs expanded, the groups, and where each generated run was declared."""

    raw: dict[str, Any]
    groups: dict[str, Group] = field(default_factory=dict)
    origins: dict[str, tuple[str, ...]] = field(default_factory=dict)  # run id -> declared key path
    agent_keys: dict[str, tuple[tuple[str, ...], frozenset[str]]] = field(default_factory=dict)

    def declared(self, loc: tuple[Any, ...]) -> tuple[Any, ...]:
        """A validation error's location as declared: ``runs.<generated id>.<key>`` → the matrix's or the
        repeated run's own key path."""
        if len(loc) < 2 or loc[0] != "runs" or loc[1] not in self.origins:
            return loc
        run_id, rest = loc[1], loc[2:]
        agent = self.agent_keys.get(run_id)
        if agent is not None and rest and rest[0] in agent[1]:
            return (*agent[0], *rest)
        return (*self.origins[run_id], *rest)


def _path(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc)


def _first_error(exc: ValidationError, prefix: tuple[Any, ...]) -> ExpandError:
    first = exc.errors()[0]
    loc = tuple(part for part in first["loc"] if part != "function-before")
    return ExpandError(f"{_path((*prefix, *loc))}: {first['msg']}")


def _repeats_of(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ExpandError(f"{where}: must be a whole number of at least 1 (got {value!r})")
    return value


def expand(raw: dict[str, Any], repeats: Mapping[str, int] | None = None) -> Expansion:
    """Expand the repeats and matrices of a config as read; ``repeats`` overrides the repeats of the named
    runs or matrices (``mmb-tui run X --repeats N``). Shapes it does not understand are left as they are for
    the config's validation to name; ``ExpandError`` for what only expansion can tell."""
    raw = copy.deepcopy(raw)
    overrides = dict(repeats or {})
    runs = raw.get("runs", {})
    matrices = raw.pop("matrices", {})
    if not isinstance(matrices, dict):
        raise ExpandError("matrices: must be an object of named matrices")
    if not isinstance(runs, dict):
        return Expansion(raw)
    for name in overrides:
        if name not in runs and name not in matrices:
            raise ExpandError(f"--repeats: no run or matrix {name!r} in runs or matrices")
    result = Expansion(raw)
    expanded: dict[str, Any] = {}

    def add(run_id: str, keys: Any, origin: tuple[str, ...]) -> None:
        if run_id in expanded or run_id in result.groups:
            raise ExpandError(f"{_path(origin)}: makes run {run_id!r}, which another entry makes too")
        expanded[run_id] = keys
        if origin != ("runs", run_id):
            result.origins[run_id] = origin

    for run_id, keys in runs.items():
        if not isinstance(keys, dict) or ("repeats" not in keys and run_id not in overrides):
            add(run_id, keys, ("runs", run_id))
            continue
        keys = dict(keys)
        count = _repeats_of(keys.pop("repeats", 1), f"runs.{run_id}.repeats")
        count = _repeats_of(overrides.get(run_id, count), f"--repeats of {run_id}")
        if count == 1:
            add(run_id, keys, ("runs", run_id))
            continue
        ids = tuple(repeat_id(run_id, k) for k in range(1, count + 1))
        for rid in ids:
            add(rid, dict(keys), ("runs", run_id))
        result.groups[run_id] = Group(ids)
    for name, body in matrices.items():
        _expand_matrix(name, body, overrides.get(name), add, result)
    clash = sorted(set(result.groups) & set(expanded))
    if clash:
        raise ExpandError(f"matrices.{clash[0]}: the name of a group is also the name of a run")
    raw["runs"] = expanded
    return result


def _expand_matrix(
    name: str,
    body: Any,
    override: int | None,
    add: Callable[[str, Any, tuple[str, ...]], None],
    result: Expansion,
) -> None:
    where = ("matrices", name)
    if not _NAME.match(name):
        raise ExpandError(f"{_path(where)}: a matrix name is letters, digits, _ and - (it starts run ids)")
    if isinstance(body, dict):
        for key, use in (("agent", "agents"), ("benchmark", "benchmarks"), ("name", "agents[].name")):
            if key in body:
                raise ExpandError(f"{_path((*where, key))}: not a matrix key (use {use!r})")
    try:
        matrix = Matrix.model_validate(body)
    except ValidationError as exc:
        raise _first_error(exc, where) from None
    count = _repeats_of(override, f"--repeats of {name}") if override is not None else matrix.repeats
    shared = dict(matrix.model_extra or {})
    agent_names = [agent.id_name() for agent in matrix.agents]
    bench_names = [id_part(PurePosixPath(b).name) for b in matrix.benchmarks]
    for label, names in (("agents", agent_names), ("benchmarks", bench_names)):
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            hint = ': give one a "name"' if label == "agents" else ""
            raise ExpandError(f"{_path((*where, label))}: two entries make the id part {twice[0]!r}{hint}")
    cells: list[str] = []
    every: list[str] = []
    for i, (agent, agent_name) in enumerate(zip(matrix.agents, agent_names, strict=True)):
        agent_path = (*where, "agents", str(i))
        for key in ("benchmark", "repeats"):
            if key in (agent.model_extra or {}):
                raise ExpandError(f"{_path((*agent_path, key))}: set by the matrix, not per agent")
        for benchmark, bench_name in zip(matrix.benchmarks, bench_names, strict=True):
            cell = f"{name}.{agent_name}.{bench_name}"
            keys = {**shared, **agent.run_keys(), "benchmark": benchmark}
            ids = (cell,) if count == 1 else tuple(repeat_id(cell, k) for k in range(1, count + 1))
            for run_id in ids:
                add(run_id, dict(keys), where)
                result.agent_keys[run_id] = (agent_path, frozenset(agent.run_keys()))
            if count > 1:
                result.groups[cell] = Group(ids)
            cells.append(cell)
            every.extend(ids)
    if name in result.groups:
        raise ExpandError(f"{_path(where)}: a run with repeats has the same name")
    result.groups[name] = Group(tuple(every), tuple(cells))
