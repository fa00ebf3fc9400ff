"""What a front end (TUI, headless printer, tests) sees of the engine: a read model and a narrow protocol.

The engine pushes typed events to observers; front ends read ``RunView`` snapshots and send typed
``Command``s back. Nothing here imports a UI.
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from engine.benchmark.model import Check, Fact
from engine.commands import Command, CommandResult
from engine.events import Event, RunStatus, WaitingFor

__all__ = ["Activity", "CheckView", "EngineApi", "Observer", "Placement", "RunStatus", "RunView"]


class Activity(BaseModel):
    """What a run waits for now, since when (wall clock, epoch seconds) and how it goes."""

    model_config = ConfigDict(frozen=True)

    waiting_for: WaitingFor = ""  # "" while the run works between waits (or is not playing)
    since: float | None = None  # when the wait began (a retried call: its first attempt)
    until: str = ""  # a virtual sleep: the virtual time it wakes at (ISO)
    ends_at: float | None = None  # a back-off: when it ends (wall clock, epoch seconds), to count down to
    attempt: int = 0  # a retried call: the attempt under way (2 or more) …
    attempts: int = 0  # … of this many
    reason: str = ""  # why the previous attempt failed


class Placement(BaseModel):
    """Where a run another executor plays for this engine (Ray) stands: being placed, restarting after its player
    died, or playing on a node; one line of it is ``engine/placement/status.py`` ``placement_text``."""

    model_config = ConfigDict(frozen=True)

    stage: Literal["", "placing", "restarting", "playing"] = ""  # "": played here, or no longer placed
    detail: str = ""  # placing: what it waits for; restarting: why its player died (one line)
    restart: int = 0  # the restart under way or done (from 1) …
    restarts: int = 0  # … of at most this many (``executor.max_restarts``)
    resume_at: float | None = None  # restarting: when the back-off ends (wall clock, epoch seconds)
    node_short: str = ""  # the node's shortest unique name in its cluster (``RunView.node`` is the full one)


class CheckView(BaseModel):
    check: Check
    graded: bool = False
    score: float | None = None  # effective score of the latest evaluation


class RunView(BaseModel):
    """A snapshot of one run for display."""

    run_id: str
    benchmark: str
    agent: str
    status: RunStatus = "idle"
    reason: str = ""  # why waiting / crashed / paused
    phase_index: int = 0  # 0-based
    total_phases: int = 0
    chapter: str = ""
    phase_title: str = ""
    phase_text: str = ""  # as the persona saw it (templates rendered)
    checks: list[CheckView] = Field(default_factory=list)  # of the current phase
    untold: dict[str, list[Fact]] = Field(default_factory=dict)  # loaded sheet -> untold live facts
    facts: dict[str, list[Fact]] = Field(
        default_factory=dict
    )  # every live sheet -> its live facts (current text)
    loaded_sheets: list[str] = Field(default_factory=list)  # the sheets the persona has read so far
    agent_sessions: bool = True  # the agent really starts a new session (its context cleared) on request
    gates: list[str] = Field(default_factory=list)  # what next_phase is waiting for now ("" when open)
    evaluations: int = 0
    average: float | None = None
    agent_compactions: int = 0
    clock: str = ""  # virtual time, ISO
    clock_jumps: int = 0
    virtual_time: bool = False
    owner: str = ""  # another engine plays this run (pid, host, front end): watch it, don't start it
    node: str = ""  # the Ray node playing it here: ``<short id>@<host>`` (``engine/placement/nodes.py``)
    placement: Placement = Field(default_factory=Placement)  # a run on Ray: placing, restarting, playing
    activity: Activity = Field(default_factory=Activity)  # what a playing run waits for, since when
    pause_pending: bool = False  # a pause is queued: applied before the persona's next turn
    last_event_at: float | None = None  # wall clock (epoch seconds) of the run's last event, if known here
    cost: float | None = (
        None  # USD so far, over the roles whose model has a price (``engine/report/prices.py``)
    )


class Observer(Protocol):
    """Receives every event of every run, in order, on the engine's loop. Must not block."""

    def on_event(self, run_id: str, event: Event) -> None: ...


class EngineApi(Protocol):
    """The scheduler as a front end uses it."""

    def run_ids(self) -> list[str]: ...
    def view(self, run_id: str) -> RunView: ...
    def add_observer(self, observer: Observer) -> None: ...
    async def start(self, run_id: str) -> None: ...  # start or resume from state.json
    async def restart(self, run_id: str) -> None: ...  # delete results/<id> and start from scratch
    async def command(self, run_id: str, command: Command) -> CommandResult: ...  # once applied
    async def stop_all(self) -> None: ...  # stop every run cleanly, state saved
