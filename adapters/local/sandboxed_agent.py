"""The part of a local agent's adapter (``LocalAgentAdapter``) that builds its sandbox and starts it there.

``SandboxedAgent`` is a mixin: the adapter gives it ``agent_dir``, ``virtual_clock``, ``backend`` (its model's
``base_url``), ``process`` and ``port`` (the agent's own server on loopback, set by the subclass before a
start), and calls ``init_sandbox`` with the run's keys (``adapters/local/sandbox/options.py``). A start
(``start_agent``) runs the agent in the sandbox (``adapters/local/sandbox/policy.py``) with its network relayed
(``adapters/local/sandbox/netrelay.py``): it reaches ``backend.base_url``, the engine reaches ``port``. A helper command run
before (``boxed``, such as OpenClaw's ``setup``) gets the same box without any network.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from adapters.local.install import agents_dir
from adapters.local.process import AgentProcess
from adapters.local.sandbox.box import AgentBox
from adapters.local.sandbox.options import SANDBOX_KEYS, SandboxOptions
from adapters.local.virtual_clock import VirtualClock

__all__ = ["SANDBOX_KEYS", "SandboxedAgent"]


class _Backend(Protocol):
    """The agent's model (``adapters/local/agent.py`` ``ModelBackend``)."""

    base_url: str  # the endpoint last handed to the agent

    async def start(self) -> dict[str, str]: ...

    async def close(self) -> None: ...


class SandboxedAgent:
    """The sandbox of one local agent: its options, its box, the start of its process in it."""

    port = 0  # the agent's own server on loopback (subclasses): the sandbox relays it to the engine
    agent_dir: Path
    virtual_clock: VirtualClock
    backend: _Backend
    process: AgentProcess
    sandbox: SandboxOptions
    box: AgentBox

    def init_sandbox(self, options: dict[str, Any]) -> None:
        """Read the sandbox's run keys (problems named as every run key's) and make the agent's box."""
        self.sandbox = SandboxOptions.from_options(options)
        self.box = AgentBox(self.agent_dir, self.sandbox)

    @property
    def sandbox_kind(self) -> str:
        return self.sandbox.kind

    @property
    def sandboxed(self) -> bool:
        """Whether the agent runs in the bubblewrap sandbox (``agent_sandbox``): its host tools' default."""
        return self.sandbox.boxed

    def readable_installs(self) -> list[Path]:
        """What the agent must read inside the sandbox besides the system: the pinned installs, the virtual
        clock library among them (subclasses add theirs, such as the Python a venv runs on)."""
        return [agents_dir()]

    def boxed(
        self,
        command: list[str],
        env: dict[str, str],
        cwd: Path,
        serve: bool = False,
        secrets: Mapping[Path, str] | None = None,
    ) -> tuple[list[str], dict[str, str]]:
        """``command`` and ``env`` as they run in this agent's sandbox (unchanged with ``agent_sandbox: none``).
        ``serve``: the agent itself, which reaches its model and whose ``port`` the engine reaches; else a
        helper command, with no network (the host's with ``agent_network: "open"``). ``secrets``: see
        ``start_agent``."""
        if not self.sandboxed:
            return command, env
        self.virtual_clock.owner = (
            self.box.owner
        )  # the clock's offset file, rewritten while it runs, is its own
        if not serve:
            return self.box.wrap(command, env, cwd, self.readable_installs(), secrets=secrets)
        served = [self.port]
        endpoints = [self.backend.base_url]
        return self.box.wrap(command, env, cwd, self.readable_installs(), endpoints, served, secrets)

    def start_agent(
        self,
        command: list[str],
        env: dict[str, str],
        cwd: Path,
        titles: Sequence[str] = (),
        secrets: Mapping[Path, str] | None = None,
    ) -> None:
        """Start the agent's process, in its sandbox. ``secrets``: files of its folder it must read with a text
        that must never reach the run folder (a model key where the agent reads it only from a file): each an
        existing placeholder, shown with the text in the sandbox. Without a sandbox there is nothing to show it
        over: the caller writes it, and blanks it after (``secrets_shown``)."""
        argv, env = self.boxed(command, env, cwd, serve=True, secrets=secrets)
        self.process.start(argv, env, cwd, titles)
        if self.sandboxed:
            self.box.watch(self.process)  # its memory, against ``agent_limits.memory_mb``

    @property
    def secrets_shown(self) -> bool:
        """Whether ``start_agent`` shows its ``secrets`` over their placeholders (the sandbox can)."""
        return self.sandboxed

    def tools_offered(self) -> list[str]:
        """The agent's tools as the report names them (subclasses)."""
        return []

    def setup_lines(self) -> list[str]:
        """What the report says of how the agent ran: its sandbox (network and limits) and its tools."""
        lines = [f"Agent sandbox: {self.sandbox.describe()}"]
        if tools := self.tools_offered():
            lines.append(f"Agent tools: {', '.join(tools)}")
        return lines
