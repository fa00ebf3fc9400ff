"""What a node must have before a run is built on it (``RunActor.start``): the head's project, byte for byte
(its version and a hash of its code: a node left on an older checkout would play differently), the benchmark
(shipped unless its path is absolute: then it must be on the node), and the model keys the run needs in the
node's environment (the environment ``ray start`` ran in). Each missing one is one line (``Lack``, with its short
name); the driver names the node and places the run on another that has it. A missing dependency shows earlier, as the actor's failure to start (``crash_cause.py``)."""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from engine.config import Config
from engine.judge.role import judge_key
from engine.report.provenance import project_version

_CODE_PACKAGES = ("engine", "adapters")  # folders beside each other, read as files (never imported here)


@dataclass(frozen=True)
class Build:
    """The project a process runs: its version and a hash of its code."""

    version: str
    code: str

    def label(self) -> str:
        return f"MarathonMemBench {self.version} (code {self.code})"


@functools.cache
def this_build() -> Build:
    """This process's project: the version installed and a hash of every ``.py`` file of ``engine/`` and
    ``adapters/`` (relative paths and bytes, in order)."""
    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for package in _CODE_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            data = path.read_bytes()
            digest.update(f"{path.relative_to(root)}\0{len(data)}\0".encode())
            digest.update(data)
    return Build(project_version(), digest.hexdigest()[:12])


def needed_keys(config: Config, run_id: str) -> dict[str, str]:
    """The environment variables holding the model keys run ``run_id`` needs, each with what needs it."""
    run_cfg = config.runs[run_id]
    named: dict[str, str] = {run_cfg.persona or config.persona.model: "the persona"}
    judge = judge_key(config, run_id)
    if judge is not None:
        named.setdefault(judge[0], "the judge")
    options = run_cfg.adapter_options()
    for key, value in options.items():
        if isinstance(value, str) and value in config.models:
            named.setdefault(value, f"the agent's {key}")
    keys: dict[str, str] = {}
    for name, role in named.items():
        spec = config.models.get(name)
        if spec is not None and spec.api_key_env:
            keys.setdefault(spec.api_key_env, f"model {name!r}, {role}")
    if isinstance(options.get("api_key_env"), str):
        keys.setdefault(options["api_key_env"], "the agent's endpoint")
    return keys


@dataclass(frozen=True)
class Lack:
    """One thing a node lacks to play a run: its short name (``OPENAI_API_KEY``) and the whole line."""

    what: str
    line: str


def preflight(config: Config, run_id: str, head: Build | None, bench_dir: Path) -> list[Lack]:
    """What this node lacks to play ``run_id`` (``config`` as the actor rewrote it), one line each."""
    problems = []
    here = this_build()
    if head is not None and here != head:
        line = f"runs {here.label()}, the head {head.label()}: install the same on every node"
        problems.append(Lack("the head's project", line))
    if not bench_dir.is_dir():
        line = f"the benchmark {bench_dir} is not on the node (an absolute path must exist on every node)"
        problems.append(Lack(f"the benchmark {bench_dir}", line))
    for variable, user in needed_keys(config, run_id).items():
        if not os.environ.get(variable):
            line = f"{variable} ({user}) is not set in the node's environment: set it where `ray start` runs"
            problems.append(Lack(variable, line))
    return problems
