"""What a result was produced with, for report entries that can be compared: content and config hashes, versions.

- ``benchmark_hash``: every file of the benchmark folder (sorted relative paths and their bytes);
- ``config_hash``: everything in ``config.jsonc`` that changes a run's behaviour — the run's own keys (adapter
  keys included), the persona model, every configured model the run names (the agent's model, a judge), the
  compaction, hooks and time-master settings and any other global section; not the folders results and
  benchmarks are read from (the benchmark's content has its own hash). Secrets are never in config (only the
  names of environment variables), so never in the hash's input either.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.config import Config, Price

PROJECT = "marathonmembench"


@dataclass(frozen=True)
class Provenance:
    """What produced a result, as a report entry names it."""

    benchmark_hash: str = ""
    version: str = ""  # MarathonMemBench's version
    persona: str = ""  # the persona model as configured, e.g. "deepseek-flash (deepseek-chat)"
    prompt_hash: str = ""
    agent_model: str = ""  # the agent's model, as configured or as the adapter settled on it
    config_hash: str = ""
    prices: Mapping[str, Price] = field(default_factory=dict)  # role -> its model's price, for the cost
    agent_setup: tuple[
        str, ...
    ] = ()  # how the agent ran: its sandbox, its tools (``AgentAdapter.setup_lines``)


HASH_LENGTH = 12
# Config keys that say where things are, not how a run behaves.
_LOCATION_KEYS = {"runs", "models", "benchmarks_dir", "results_dir", "base_dir"}


def _skipped(relative: Path) -> bool:
    """Editor droppings, VCS folders and caches are not benchmark content."""
    return any(part.startswith(".") or part == "__pycache__" for part in relative.parts)


def benchmark_hash(folder: Path) -> str:
    """A hash of every file of a benchmark folder: sorted relative paths, each with its bytes."""
    digest = hashlib.sha256()
    files = sorted(
        (p.relative_to(folder).as_posix(), p)
        for p in folder.rglob("*")
        if p.is_file() and not _skipped(p.relative_to(folder))
    )
    for name, path in files:
        data = path.read_bytes()
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()[:HASH_LENGTH]


def project_version() -> str:
    """The installed MarathonMemBench's version; the source tree's ``pyproject.toml`` if it is not installed."""
    try:
        return importlib.metadata.version(PROJECT)
    except importlib.metadata.PackageNotFoundError:
        pass
    try:
        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        return str(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "?"


def agent_model_name(run_options: dict[str, Any], adapter: object) -> str:
    """The agent's model: the run's ``model`` key, else the model the adapter settled on, else ``?``."""
    named = run_options.get("model")
    if isinstance(named, str) and named:
        return named
    for attribute in ("model_name", "model"):
        value = getattr(adapter, attribute, None)
        if isinstance(value, str) and value:
            return value
    return "?"


def describe_model(config: Config, name: str) -> str:
    """A model name as the report shows it: a configured name with the endpoint model it stands for."""
    spec = config.models.get(name)
    return f"{name} ({spec.model})" if spec is not None and spec.model != name else name


def config_hash(config: Config, run_id: str, persona_model: str, agent_model: str) -> str:
    """A hash over everything in the config that changes how run ``run_id`` behaves (see the module doc)."""
    run_cfg = config.runs[run_id]
    run_dump = run_cfg.model_dump(mode="json")
    named = {persona_model, agent_model} | {v for v in run_dump.values() if isinstance(v, str)}
    blob = {
        "run": run_dump,
        "persona_model": persona_model,
        "agent_model": agent_model,
        "models": {
            name: config.models[name].model_dump(mode="json")
            for name in sorted(named)
            if name in config.models
        },
        "global": config.model_dump(mode="json", exclude=_LOCATION_KEYS),
    }
    text = json.dumps(blob, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:HASH_LENGTH]
