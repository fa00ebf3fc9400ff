"""``config.jsonc`` (SPEC §5): JSON with comments, validated with pydantic; errors name the key path.

A run id names the run's folder (``results/<run id>/``): it is a name, never a path (``run_id_problem``),
checked as written, before repeats and matrices are expanded (the ids they make are names by construction,
``engine/expand.py``), and again on every run of the validated config.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin
from urllib.parse import urlsplit

import json5
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from engine.expand import ExpandError, Group, expand
from engine.models.faults import scripted_name_problem


class ConfigError(Exception):
    """A one-line error naming the file and the key path."""


RUN_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")
RUN_ID_MAX = 200  # characters of a run id as written: room for the suffixes of its repeats
FOLDER_NAME_MAX = 255  # characters of any run id, made ones included: a folder name


def run_id_problem(run_id: str, longest: int = FOLDER_NAME_MAX) -> str:
    """Why ``run_id`` cannot name a run's folder ("" when it can): letters, digits, ``-``, ``_`` and ``.``, not
    starting with a dot (no separator, no ``..``, no hidden folder), at most ``longest`` characters."""
    if RUN_ID.fullmatch(run_id) and len(run_id) <= longest:
        return ""
    return (
        f"the run id {run_id!r} is not a name: letters, digits, '-', '_' and '.' only, not starting with '.', "
        f"at most {longest} characters (it names the run's folder under results/)"
    )


def _run_ids_problem(runs: Any) -> str:
    """Every bad run id of a ``runs`` object, on one line ("" when they are all names)."""
    if not isinstance(runs, dict):
        return ""
    problems = (run_id_problem(str(run_id), RUN_ID_MAX) for run_id in runs)
    return "; ".join(f"runs: {problem}" for problem in problems if problem)


def did_you_mean(name: str, known: list[str]) -> str:
    """``"did you mean 'x'? "`` for the known name closest to a mistyped ``name``, else ``""``."""
    close = difflib.get_close_matches(name, known, n=1)
    return f"did you mean {close[0]!r}? " if close else ""


def stray_key(annotation: Any, value: Any, where: str = "") -> str:
    """``value`` (parsed JSON) read as ``annotation``: "unknown key <path>" for the first key of an object that
    its model does not declare, at any depth; "" when there is none. For documents read strictly that a model
    with defaults would otherwise accept (``state.json`` and its journal: ``engine/state.py``)."""
    kind, inner = _shape(annotation)
    if kind == "model" and isinstance(value, dict):
        for key, item in value.items():
            if key not in inner:
                return f"unknown key {where}{key}"
            if _shape(inner[key])[0] and (found := stray_key(inner[key], item, f"{where}{key}.")):
                return found
    elif kind == "list" and isinstance(value, list):
        return next((f for i, v in enumerate(value) if (f := stray_key(inner, v, f"{where[:-1]}[{i}]."))), "")
    elif kind == "dict" and isinstance(value, dict):
        return next((f for k, v in value.items() if (f := stray_key(inner, v, f"{where}{k}."))), "")
    elif kind == "one" and value is not None:
        return stray_key(inner, value, where)
    return ""


@functools.cache
def _shape(annotation: Any) -> tuple[str, Any]:
    """How ``stray_key`` reads a value of ``annotation``: a model (its fields' annotations), a list or dict of
    what holds one, the one model-holding type of a union or ``Annotated``; ("", None): no model inside."""
    origin, args = get_origin(annotation), get_args(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "model", {name: field.annotation for name, field in annotation.model_fields.items()}
    holding = [arg for arg in args if _shape(arg)[0]]
    if origin is list and holding:
        return "list", args[0]
    if origin is dict and holding:
        return "dict", args[1]
    if origin in (Union, UnionType, Annotated) and len(holding) == 1:
        return "one", holding[0]
    return "", None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _scripted_options(value: str | None) -> str | None:
    """A model name whose scripted options (a fault plan, slips) are wrong is refused at its key."""
    problem = scripted_name_problem(value) if value else ""
    if problem:
        raise ValueError(problem)
    return value


class Price(_Strict):
    """What a model costs, in USD per million tokens (``engine/report/prices.py`` turns tokens into cost)."""

    input: float = Field(ge=0)  # per million prompt tokens (not served from the provider's cache)
    output: float = Field(ge=0)  # per million completion tokens
    cached_input: float | None = Field(
        default=None, ge=0
    )  # per million cached prompt tokens; None: ``input``

    @property
    def cached_rate(self) -> float:
        """What a cached input token costs (per million): ``cached_input``, else the ``input`` price."""
        return self.input if self.cached_input is None else self.cached_input


class ModelSpec(_Strict):
    """A named model endpoint. Keys are never stored here: ``api_key_env`` names the variable."""

    model: str
    base_url: str | None = None  # None for the built-in scripted models ("scripted/persona", ...)
    api_key_env: str | None = None
    timeout: float = Field(default=120.0, gt=0, allow_inf_nan=False)  # seconds per call
    max_retries: int = Field(default=5, ge=0)
    temperature: float | None = None
    max_tokens: int | None = None
    # scripted models only: seconds slept per call (benchmarks of the engine); finite, at most an hour (Infinity
    # hung the run after its first message with no word)
    latency: float = Field(default=0.0, ge=0, le=3600, allow_inf_nan=False)
    # a price changes nothing a run does: left out of dumps, so config hashes stay as they were
    price: Price | None = Field(default=None, exclude=True)

    _scripted = field_validator("model")(_scripted_options)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        """An http(s) URL with a host: anything else would only fail at the first call, after every retry."""
        if value is not None and not is_http_url(value):
            raise ValueError(
                f'must be an http(s) URL with a host (like "http://127.0.0.1:8000/v1"), got {value!r}'
            )
        return value


def is_http_url(text: str) -> bool:
    """Whether ``text`` is an ``http://`` or ``https://`` URL naming a host (and a valid port, if any)."""
    if not text or any(char.isspace() for char in text):
        return False
    try:
        parts = urlsplit(text)
        _ = parts.port  # a port out of range or not a number raises ValueError
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


class PersonaConfig(_Strict):
    model: str = "scripted/persona"
    stuck_after: int = Field(
        default=4, ge=1
    )  # turns in a row without a valid tool call → waiting: persona stuck
    max_turns_per_phase: int = Field(default=400, ge=1)  # persona turns in one phase → waiting: persona stuck

    _scripted = field_validator("model")(_scripted_options)


class CompactionConfig(_Strict):
    max_tokens: int = 30000
    trim_to_tokens: int = 10000

    @model_validator(mode="after")
    def _trim_below_max(self) -> CompactionConfig:
        if self.trim_to_tokens >= self.max_tokens:
            raise ValueError("trim_to_tokens must be smaller than max_tokens")
        return self


class TimeMasterConfig(_Strict):
    min_sleep_to_skip: float = Field(default=5, ge=0)
    pre_wake_delay: float = Field(default=1, ge=0)
    poll_interval: float = Field(default=1, gt=0)


class HooksConfig(_Strict):
    plain_text_guard: bool = True
    echo_guard: bool = True


JudgeLead = Literal["persona", "judge", "both"]
"""Which grade a report's headline counts: the persona's, the judge's, or the lower of the two ("both")."""


class JudgeConfig(_Strict):
    """An independent judge grading every check after the persona (``engine/judge/role.py``)."""

    model: str  # a key of models, or "scripted/judge" (the offline rules judge)
    lead: JudgeLead = "persona"


_UNITS = {"": 1, "b": 1, "kb": 1024, "mb": 1024**2, "gb": 1024**3, "tb": 1024**4}


class ResourcesConfig(_Strict):
    """What a run asks of a Ray node (``engine/placement/executor.py``); unset keys fall back to ``executor.resources``,
    then to the agent's default."""

    num_cpus: float | None = Field(default=None, ge=0)
    memory: float | None = Field(default=None, ge=0)  # bytes; a string such as "1.5 GB" (1 GB = 1024³ bytes)

    @field_validator("memory", mode="before")
    @classmethod
    def _size(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        match = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*([kmgt]?b)?\s*", value, re.IGNORECASE)
        if match is None:
            raise ValueError(
                f'{value!r} is not a size: bytes, or a number with B, KB, MB, GB or TB ("1.5 GB")'
            )
        return float(match[1]) * _UNITS[(match[2] or "").lower()]


class ExecutorConfig(_Strict):
    """Where runs are played: on this process's loop (``local``) or each as an actor on a Ray cluster."""

    kind: Literal["local", "ray"] = "local"
    address: str | None = None  # "auto", "ray://host:port"; unset: a local Ray instance is started
    resources: ResourcesConfig = Field(default_factory=ResourcesConfig)  # for every run (a run's own win)
    max_restarts: int = Field(default=3, ge=0)  # new actors for a run whose actor or node died
    # which node a run goes to among those that can hold it: the one with the fewest of this engine's runs per
    # CPU ("spread": a matrix uses every node at once), or the one with the most ("pack": fills a node first)
    placement: Literal["spread", "pack"] = "spread"


class RunConfig(BaseModel):
    """A run. Keys other than the engine's own are handed to the adapter (``adapter_options``). A run's
    ``repeats: N`` is expanded before validation into runs ``<id>.r1`` … ``<id>.rN`` (``engine/expand.py``)."""

    model_config = ConfigDict(extra="allow")

    benchmark: str
    agent: str
    ignore_session_break: bool = False
    persona: str | None = None  # model name overriding the global persona model
    judge: str | None = None  # model name overriding judge.model for this run (a judge even without one)
    allow_real_time: bool = False  # run a time_master benchmark on an agent without virtual time
    max_reply_chars: int = Field(default=20000, ge=100)  # longer agent replies reach the persona shortened
    # where a run is placed changes nothing it does: left out of dumps, so config hashes stay as they were
    resources: ResourcesConfig | None = Field(default=None, exclude=True)

    _scripted = field_validator("persona")(_scripted_options)

    def adapter_options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class Config(_Strict):
    models: dict[str, ModelSpec] = Field(default_factory=dict)
    persona: PersonaConfig = Field(default_factory=PersonaConfig)
    compaction: CompactionConfig = Field(default_factory=CompactionConfig)
    time_master: TimeMasterConfig = Field(default_factory=TimeMasterConfig)
    hooks: HooksConfig = Field(default_factory=HooksConfig)
    judge: JudgeConfig | None = None  # absent: the persona's grades alone
    executor: ExecutorConfig = Field(default_factory=ExecutorConfig, exclude=True)  # not in config hashes
    runs: dict[str, RunConfig] = Field(default_factory=dict)  # repeats and matrices expanded
    benchmarks_dir: str = "benchmarks"
    results_dir: str = "results"

    # resolved by load_config: the folder of the config file, against which relative dirs are read
    base_dir: Path = Field(default=Path("."), exclude=True)
    # made by expansion (``engine/expand.py``): a repeated run's or a matrix's name -> its runs
    groups: dict[str, Group] = Field(default_factory=dict, exclude=True)
    # the repeats asked for on the command line (``run X --repeats N``): a reload reads the file with them
    repeat_overrides: dict[str, int] = Field(default_factory=dict, exclude=True)

    @field_validator("runs")
    @classmethod
    def _names(cls, runs: dict[str, RunConfig]) -> dict[str, RunConfig]:
        """Every run id is a name (``run_id_problem``): never a path out of the results folder."""
        problems = [problem for run_id in runs if (problem := run_id_problem(run_id))]
        if problems:
            raise ValueError("; ".join(problems))
        return runs

    def benchmark_path(self, name: str) -> Path:
        path = Path(name)
        if path.is_absolute() or "/" in name:
            return path if path.is_absolute() else self.base_dir / path
        return self.base_dir / self.benchmarks_dir / name

    def results_path(self) -> Path:
        return self.base_dir / self.results_dir


def _key_path(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc if part not in ("function-after",)) or "(top level)"


def _message(error: Any) -> str:
    """An error's message; a validator's own ``ValueError`` without pydantic's "Value error, " prefix."""
    cause = (error.get("ctx") or {}).get("error")
    return str(cause) if error.get("type") == "value_error" and cause is not None else str(error["msg"])


def _duplicate_key(text: str) -> str:
    """A key given twice in one object, said with the lines it is on ("" when none): JSON keeps the last one
    silently, so a run defined first would be lost without a word."""
    twice: list[str] = []

    def pairs(found: Iterable[tuple[str, Any]]) -> dict[str, Any]:
        items = list(found)
        keys = [key for key, _ in items]
        twice.extend(key for n, key in enumerate(keys) if key in keys[:n])
        return dict(items)

    json5.loads(text, object_pairs_hook=pairs)
    if not twice:
        return ""
    key = twice[0]
    quoted = re.compile(
        rf"""(?:"{re.escape(key)}"|'{re.escape(key)}'|(?<![\w$]){re.escape(key)}(?![\w$]))\s*:"""
    )
    lines = [text.count("\n", 0, m.start()) + 1 for m in quoted.finditer(text)]
    where = f" (written on lines {', '.join(map(str, lines[:6]))})" if len(lines) > 1 else ""
    return f"key {key!r} is given twice in one object{where}: the first would be dropped; keep one"


def parse_config(
    text: str,
    source: str = "config.jsonc",
    base_dir: Path | None = None,
    repeats: dict[str, int] | None = None,
) -> Config:
    """The config in ``text``, its repeats and ``matrices`` expanded (``repeats`` overrides those of the named
    runs or matrices); ``ConfigError`` names the key path of every problem, on one line (``; `` between them)."""
    try:
        raw = json5.loads(text)
        if problem := _duplicate_key(text):  # parsed twice: only configs, a few ms
            raise ConfigError(f"{source}: {problem}")
    except RecursionError:
        raise ConfigError(f"{source}: not valid JSONC: nested too deeply") from None
    except ValueError as exc:
        raise ConfigError(f"{source}: not valid JSONC: {exc}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: the top level must be an object")
    if problem := _run_ids_problem(raw.get("runs")):  # as written: a repeated run's id names its repeats
        raise ConfigError(f"{source}: {problem}")
    try:
        expansion = expand(raw, repeats)
    except ExpandError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    try:
        config = Config.model_validate(expansion.raw)
    except ValidationError as exc:
        problems = [f"{_key_path(expansion.declared(e['loc']))}: {_message(e)}" for e in exc.errors()]
        raise ConfigError(f"{source}: " + "; ".join(dict.fromkeys(problems))) from None
    config.groups = expansion.groups
    config.repeat_overrides = dict(repeats or {})
    if base_dir is not None:
        config.base_dir = base_dir
    return config


def load_config(path: Path | str, repeats: dict[str, int] | None = None) -> Config:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    return parse_config(text, str(path), path.resolve().parent, repeats)


class BuildError(Exception):
    """A run that cannot start from the config: a one-line reason naming the file or key."""
