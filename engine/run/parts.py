"""What a run is made of: its settings and its built parts."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from engine.agents import AgentAdapter
from engine.api import Observer
from engine.benchmark.model import Benchmark
from engine.clock import Clock
from engine.config import Config, RunConfig
from engine.models.base import ChatModel
from engine.models.usage import UsageMeter
from engine.report.provenance import Provenance
from engine.run.lock import RunLock
from engine.state import RunState


class AgentDidNotStart(Exception):
    """The agent under test could not be started: the run waits (resumable), it did not crash."""


@dataclass
class RunSettings:
    """Engine knobs of a run (from config.jsonc; tests shorten the waits)."""

    compaction_max_tokens: int = 30000
    compaction_trim_to_tokens: int = 10000
    plain_text_guard: bool = True
    echo_guard: bool = True
    ignore_session_break: bool = False
    agent_reply_timeout: float = 600.0  # seconds without any reply before the agent counts as failed
    agent_quiet_seconds: float = 2.0  # adapters without get_status: silence that ends a reply
    agent_poll_seconds: float = 0.05
    fault_retries: int = 5  # consecutive model/agent failures before the run stops as "waiting"
    fault_backoff: float = 30.0  # seconds between those attempts (doubling, capped at 5 min)
    max_turns_per_phase: int = 400  # persona turns in one phase before the run waits as stuck
    max_reply_chars: int = 20000  # an agent reply longer than this reaches the persona shortened (marked)
    stuck_after: int = 4  # consecutive persona turns without a valid tool call (echo, empty, plain text)
    time_master_min_sleep: float = 5
    time_master_pre_wake: float = 1
    time_master_poll: float = 1

    @classmethod
    def from_config(cls, config: Config, run: RunConfig) -> RunSettings:
        return cls(
            compaction_max_tokens=config.compaction.max_tokens,
            compaction_trim_to_tokens=config.compaction.trim_to_tokens,
            plain_text_guard=config.hooks.plain_text_guard,
            echo_guard=config.hooks.echo_guard,
            ignore_session_break=run.ignore_session_break,
            max_reply_chars=run.max_reply_chars,
            max_turns_per_phase=config.persona.max_turns_per_phase,
            stuck_after=config.persona.stuck_after,
            time_master_min_sleep=config.time_master.min_sleep_to_skip,
            time_master_pre_wake=config.time_master.pre_wake_delay,
            time_master_poll=config.time_master.poll_interval,
        )


@dataclass
class RunParts:
    """Everything a run is made of, already built (see ``engine.run.build``)."""

    run_id: str
    run_dir: Path
    benchmark: Benchmark
    persona_model: ChatModel
    adapter: AgentAdapter
    clock: Clock
    settings: RunSettings
    state: RunState
    meter: UsageMeter
    resumed: bool = False
    lock: RunLock | None = None  # held for the run's life, released when it ends
    provenance: Provenance = field(
        default_factory=Provenance
    )  # for the report (``engine.report.provenance``)
    observers: list[Observer] = field(default_factory=list)  # told every event (TUI, headless printer, tests)
