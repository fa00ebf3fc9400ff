"""The agent under test as the engine sees it (SPEC §6): the adapter interface and the table of adapter names.

``engine/`` depends on this module only; the adapters in ``adapters/`` implement it (``adapters/base.py`` is
the toolkit they are built on) and are imported lazily, by name, through ``resolve`` — the engine never
imports ``adapters`` itself.
"""

from __future__ import annotations

import importlib
import inspect
import os
import shutil
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from engine.clock import Clock
from engine.config import did_you_mean
from engine.events import ActionKind
from engine.models.base import ChatModel, Usage

SCRATCH = "scratch"  # ``memory_files``' default: the folder (under ``run_dir/memory``) a copy is read from
SKIPPED_NOTE = "skipped.txt"  # a copy's note of what it left out (adapters/local/files/agent_files.py), not a memory file

# --- what goes over the interface -----------------------------------------------------------------


class AgentMessage(BaseModel):
    """One reply of the agent. ``seq`` numbers an adapter's replies 1, 2, 3, … and never goes back (not even
    across a new conversation or a reset); the engine keeps the highest ``seq`` it has read as its cursor."""

    seq: int
    text: str
    time: str = ""  # the run's clock (ISO) when the reply arrived: virtual time in multi-day scenarios


Delivery = Literal["replied", "unanswered", "absent", "unknown"]
"""Whether a message sent before a kill or a timeout reached the agent (``AgentAdapter.check_delivery``)."""


class Observation(BaseModel):
    """Something the adapter saw inside the agent: it goes to the report, never into grades."""

    kind: Literal["compaction", "context"] = "compaction"
    tokens_before: int | None = None
    tokens_after: int | None = None
    detail: str = ""


class AgentAction(BaseModel):
    """One tool call the agent made between two messages, read from its own records (``agent_actions``)."""

    tool: str  # the agent's own name of the tool (``memory``, ``write``, ``exec``)
    kind: ActionKind = "other"
    target: str = ""  # the memory file it wrote or read, as named in ``memory_files`` (else the path it gave)
    # what it did, e.g. ``replace: "locker 212" → "locker 305"`` (its event keeps ACTION_TEXT characters)
    summary: str = ""
    error: str = ""  # the tool's own failure, when it reported one


class AgentStatus(BaseModel):
    """Whether the agent is working, and what the adapter saw in it since the last call."""

    state: Literal["sleeping", "thinking"]
    context_tokens: int | None = None
    observations: list[Observation] = Field(default_factory=list)  # new since the last call


class AdapterError(Exception):
    """The agent failed (did not start, crashed, timed out, answered garbage). The run waits, resumable."""


@dataclass
class AdapterContext:
    """What an adapter gets from its run."""

    run_id: str
    run_dir: Path  # results/<run-id>/: an adapter keeps its files under run_dir/agent/
    options: dict[str, Any]  # the run's keys not consumed by the engine; the adapter validates them
    clock: Clock  # the run's clock: stamp replies with ``clock.iso()``
    make_model: Callable[[str], ChatModel]  # model name from config.jsonc -> a ChatModel (role "agent")
    model_endpoint: Callable[[str], dict[str, str]] = field(default=lambda name: {})  # base_url/model/api_key
    record_usage: Callable[[Usage], None] = field(default=lambda usage: None)  # the agent's model tokens
    # the run's benchmark moves the clock (Time Master): an agent's own clock needs to follow
    virtual_time: bool = True


class MissingApiKey(LookupError):
    """An API key's environment variable is not set: ``str()`` is ``environment variable X is not set``."""

    def __init__(self, variable: str) -> None:
        super().__init__(f"environment variable {variable} is not set")
        self.variable = variable


def env_api_key(variable: str) -> str:
    """The value of the environment variable ``variable``, read now (keys are never stored).

    Raises:
        MissingApiKey: the variable is unset or empty; its message names the variable.
    """
    value = os.environ.get(variable, "")
    if not value:
        raise MissingApiKey(variable)
    return value


# --- the interface --------------------------------------------------------------------------------


class AgentAdapter(ABC):
    """The agent under test behind one async interface. Everything the engine does with an agent goes here.

    The four abstract methods are required: a class that lacks one cannot be instantiated (and ``resolve``
    refuses it before that). The others have documented defaults. Adapters are built on
    ``adapters.base.BaseAdapter``, which adds the reply log, the thinking flag and the option helpers.

    Class attributes:
        name: the agent's name in events and reports (``chatbot``, ``hermes``).
        supports_new_conversation: a new session (``start_new_conversation``: ``bench.newSession()``, the
            operator's action) clears the agent's context, its long-term memory kept. False (the default,
            with the no-op ``start_new_conversation``; ``chatbot``): the agent still sees the whole
            conversation after it. The persona's session-switch note says which (``session_switch_note``),
            and a report can say whether the context was ever cleared.
        supports_virtual_time: ``set_virtual_time`` moves the agent's clock (multi-day scenarios need it).
        reply_timeout: the longest one reply may take by the adapter's own settings (its ``reply_timeout``
            run key, the agent's model entry's ``timeout`` and ``max_retries``), in seconds, or None (the
            adapter sets no bound): the engine waits at least this long before it takes the agent for failed.
        checkpointed: the agent's whole conversation is in ``export_state``, so the checkpoint is exact
            and a message in flight at a kill never arrived; otherwise the engine writes the checkpoint
            before each message, so that a resume knows every message sent before the one in flight.

    Errors: any method may raise ``AdapterError`` for a failure of the agent (the run then waits and can be
    resumed or revived); ``__init__`` raises ``ValueError`` naming the option for a bad run key. Anything else
    is a bug of the adapter and crashes the run.
    """

    name: ClassVar[str] = ""
    supports_new_conversation: ClassVar[bool] = False
    supports_virtual_time: ClassVar[bool] = False
    reply_timeout: float | None = None  # seconds one reply may take by the adapter's settings (see above)
    checkpointed: bool = False  # the whole conversation lives in export_state (see check_delivery)

    def __init__(self, ctx: AdapterContext) -> None:
        """Keep ``ctx`` and validate ``ctx.options``; start nothing yet (that is ``create_session``).

        Raises:
            ValueError: an unknown or invalid option, the message starting with the option's name.
        """
        self.ctx = ctx

    # --- required ---------------------------------------------------------------------------------

    @abstractmethod
    async def create_session(self, name: str) -> None:
        """Start the agent (or reconnect to it) before the first message; also called to revive it after a
        failure and on resume, over the memory it already has.

        Args:
            name: a label for the session (the run id).

        Raises:
            AdapterError: the agent did not start (not installed, no port, not ready in time, no API key).
        """

    @abstractmethod
    async def send_message(self, text: str) -> None:
        """Send one user message. Replies are read afterwards with ``get_responses``; an adapter may record
        them while this call waits for the agent, or later as they arrive.

        Args:
            text: the persona's message, as it is.

        Raises:
            AdapterError: the agent is down, timed out, or answered something that is not a reply.
        """

    @abstractmethod
    async def get_responses(self, after_seq: int) -> list[AgentMessage]:
        """The replies with ``seq > after_seq``, oldest first (an empty list when there are none).

        Args:
            after_seq: the highest ``seq`` the engine has already read (0 before the first reply).

        Returns:
            The newer replies; their ``seq`` keeps increasing across conversations, resets and resumes
            (``export_state`` must keep the counter).
        """

    @abstractmethod
    async def destroy_session(self) -> None:
        """Full reset: the agent forgets everything, its long-term memory included. Keeps the ``seq`` counter.

        Raises:
            AdapterError: the agent could not be reset.
        """

    # --- optional ---------------------------------------------------------------------------------

    async def start_new_conversation(self) -> None:
        """A clean context with long-term memory kept (a chat app's ``/new``). Default: a no-op, for agents
        whose conversation cannot be restarted (then ``supports_new_conversation`` stays False)."""
        return None

    async def set_virtual_time(self, iso: str) -> None:
        """Set the agent's clock to ``iso`` (naive local time). Only called when ``supports_virtual_time``.
        Default: a no-op."""
        return None

    async def get_status(self) -> AgentStatus | None:
        """Sleeping or thinking, plus the observations made since the last call. Default: ``None`` (the
        adapter cannot tell; the engine then takes a few seconds of silence as the end of a reply)."""
        return None

    async def check_delivery(self, text: str) -> Delivery:
        """Before ``text`` is sent again (it was in flight when the engine was killed or the agent timed out):
        did it reach the agent? ``"replied"``: it did and the answer is recorded (``get_responses`` returns
        it; the engine only collects); ``"unanswered"``: it did but was never answered (sent again, it is
        there twice, and the transcript says so); ``"absent"``: it never arrived (sent as usual);
        ``"unknown"``: the adapter cannot tell (sent again, marked possibly duplicated). Default:
        ``"unknown"``; an adapter whose conversation lives in ``export_state`` returns ``"absent"`` (the
        checkpoint it resumed from predates the send)."""
        return "absent" if self.checkpointed else "unknown"

    async def close(self) -> None:
        """Release processes and ports; called in ``finally`` and before a revive. The agent's memory stays
        on disk. Default: a no-op."""
        return None

    @classmethod
    def install(cls) -> None:
        """Install what the agent needs on this machine, idempotently (a pinned installer); called on a Ray
        node before a run of it plays there. Raises ``AdapterError`` when it cannot. Default: nothing."""
        return None

    def setup_lines(self) -> list[str]:
        """How the agent ran, for the report entry, one line each (``Agent sandbox: …``, ``Agent tools: …``).
        Default: none."""
        return []

    def snapshot_memory(self, label: str) -> Path | None:
        """Copy the agent's memory files to ``run_dir/memory/<label>/`` and return that folder (a whole copy; the
        run itself keeps the memory's history through ``memory_files``). Default: ``None`` (nothing to copy)."""
        return None

    def memory_files(self) -> dict[str, bytes] | None:
        """The agent's memory files as they are now, by their names in its memory (``MEMORY.md``,
        ``memory/2026-03-01.md``), each read without following a link the agent planted; the run keeps their
        history (``engine/autopsy/history.py``). None: no memory access (its memory is not files, or the adapter
        cannot reach them): its wrong answers are then never traced to memory. Default: the files of a
        ``snapshot_memory`` copy into a scratch folder, removed at once (an adapter that only copies); None
        when it copies nothing."""
        scratch = self.snapshot_memory(SCRATCH)
        if scratch is None:
            return None
        try:
            return {
                path.relative_to(scratch).as_posix(): path.read_bytes()
                for path in sorted(scratch.rglob("*"))
                if path.is_file() and not path.is_symlink() and path.name != SKIPPED_NOTE
            }
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    async def agent_actions(self) -> list[AgentAction] | None:
        """The tool calls the agent made since the last call (memory writes, file reads and writes, commands),
        read from its own records, oldest first; the run records each as an ``agent_action`` event after every
        message. What it keeps to know where it stopped belongs in ``export_state``, so that a resume reads the
        calls after its checkpoint again. Default: None, none exposed (the report says so once)."""
        return None

    def export_state(self) -> dict[str, Any]:
        """What to keep in ``state.json`` to resume (JSON values; never a secret). Default: ``{}``."""
        return {}

    def import_state(self, data: dict[str, Any]) -> None:
        """Restore what ``export_state`` returned (``{}`` for a fresh run), before ``create_session``.
        Default: a no-op."""
        return None


# --- the table of names ---------------------------------------------------------------------------

BUILTIN_ENTRIES: tuple[tuple[str, str], ...] = (
    ("chatbot", "adapters.chatbot:ChatbotAdapter"),
    ("openai-endpoint", "adapters.openai_endpoint:OpenAIEndpointAdapter"),
    ("hermes", "adapters.hermes.adapter:HermesAdapter"),
    ("openclaw", "adapters.openclaw.adapter:OpenClawAdapter"),
    ("letta", "adapters.letta.adapter:LettaAdapter"),
)


class UnknownAdapter(Exception):
    """A name that is neither built in nor an importable ``package.module:Class`` adapter."""


def name_table(entries: Iterable[tuple[str, str]]) -> dict[str, str]:
    """``{name: "module:Class"}`` from pairs; a name given twice is an error (``ValueError``)."""
    table: dict[str, str] = {}
    for name, target in entries:
        if name in table:
            raise ValueError(f"adapter name {name!r} is registered twice: {table[name]} and {target}")
        table[name] = target
    return table


BUILTIN: dict[str, str] = name_table(BUILTIN_ENTRIES)


def names() -> list[str]:
    """The built-in adapter names, without importing any adapter."""
    return sorted(BUILTIN)


def resolve(name: str) -> type[AgentAdapter]:
    """The adapter class for a built-in name or an outside ``package.module:Class``, imported now.

    Raises:
        UnknownAdapter: unknown name, import failure, not an ``AgentAdapter``, or a required method missing.
    """
    if name in BUILTIN:
        return _import(BUILTIN[name])
    if ":" in name:
        return _import(name)
    hint = did_you_mean(name, names())
    raise UnknownAdapter(
        f"unknown agent {name!r}; {hint}built-in: {', '.join(names())}, or package.module:Class"
    )


def _import(target: str) -> type[AgentAdapter]:
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
        cls = getattr(module, class_name)
    except (ImportError, AttributeError) as exc:
        raise UnknownAdapter(f"adapter {target!r} cannot be imported: {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, AgentAdapter)):
        raise UnknownAdapter(f"adapter {target!r} is not an AgentAdapter subclass")
    if inspect.isabstract(cls):
        missing = ", ".join(sorted(getattr(cls, "__abstractmethods__", ())))
        raise UnknownAdapter(f"adapter {target!r} does not implement the required method(s) {missing}")
    return cls
