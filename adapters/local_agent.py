"""What the adapters of locally run agents (Hermes, OpenClaw) share.

- ``COMMON_OPTIONS``: the run keys both take (``model``, ``start_timeout``, ``reply_timeout``, ``virtual_time``);
- ``ModelBackend``: the agent's upstream model, either a ``config.jsonc`` endpoint or the scripted model
  server started here on a free loopback port;
- ``LocalAgentAdapter``: on top of ``BaseAdapter`` (reply log, thinking flag): send timeouts, virtual time
  through libfaketime, memory snapshots and the guaranteed release of the process.
"""

from __future__ import annotations

import asyncio
import shutil
import weakref
from pathlib import Path
from typing import Any

from adapters.base import AdapterContext, AdapterError, AgentStatus, BaseAdapter, Observation
from adapters.faketime import FakeTime
from adapters.options import opt_bool, opt_number, opt_str
from adapters.process import AgentProcess

SCRIPTED_API_KEY = "mmb-scripted-local-key"
COMMON_OPTIONS = {"model", "start_timeout", "reply_timeout", "virtual_time"}


def is_scripted(name: str) -> bool:
    from engine.models.registry import is_scripted_name

    return is_scripted_name(name)


class ModelBackend:
    """The upstream model the agent calls: a configured endpoint, or the scripted server started here."""

    def __init__(self, ctx: AdapterContext, name: str) -> None:
        self.ctx = ctx
        self.name = name
        self._runner: Any = None

    async def start(self) -> dict[str, str]:
        """``{"base_url", "model", "api_key"}`` reachable by the agent process."""
        name = self.name
        if not is_scripted(name):
            endpoint = self.ctx.model_endpoint(name) or {}
            if endpoint.get("base_url"):
                return {
                    "base_url": endpoint["base_url"],
                    "model": endpoint.get("model") or name,
                    "api_key": endpoint.get("api_key") or "",
                }
            if not (endpoint.get("model") and is_scripted(endpoint["model"])):
                raise AdapterError(
                    f"model: {name!r} is neither a config.jsonc model with a base_url nor scripted"
                )
            name = endpoint["model"]
        if self._runner is None:
            from engine.models.server import start_server

            self._runner, self._port = await start_server("127.0.0.1", 0)
        return {"base_url": f"http://127.0.0.1:{self._port}/v1", "model": name, "api_key": SCRIPTED_API_KEY}

    async def close(self) -> None:
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()


class LocalAgentAdapter(BaseAdapter):
    """Base of the adapters that run the agent as a local process (subclasses do the agent specifics)."""

    supports_new_conversation = True
    supports_virtual_time = True
    default_start_timeout = 60.0

    def __init__(self, ctx: AdapterContext) -> None:
        super().__init__(ctx)
        options = ctx.options
        self.model_name = opt_str(options, "model", "scripted/agent") or "scripted/agent"
        self.start_timeout = float(
            opt_number(options, "start_timeout", self.default_start_timeout, 1, 3600) or 60
        )
        self.reply_timeout = float(opt_number(options, "reply_timeout", 600.0, 1, 24 * 3600) or 600)
        self.virtual_time = opt_bool(options, "virtual_time", True)
        self.agent_dir = ctx.run_dir / "agent"
        self.process = AgentProcess(f"{self.name} agent", self.agent_dir / "process.log")
        self.faketime = FakeTime(self.agent_dir / "faketime.rc")
        self.backend = ModelBackend(ctx, self.model_name)
        self.conversation = 1
        self._observations: list[Observation] = []
        self._context_tokens: int | None = None
        self._finalizer = weakref.finalize(self, self.process.kill_now)

    # --- the engine's interface -------------------------------------------------------------------

    async def get_status(self) -> AgentStatus | None:
        self.collect_observations()
        new, self._observations = self._observations, []
        return AgentStatus(
            state="thinking" if self.thinking else "sleeping",
            context_tokens=self._context_tokens,
            observations=new,
        )

    async def set_virtual_time(self, iso: str) -> None:
        if self.virtual_time:
            self.faketime.set_time(iso)

    async def close(self) -> None:
        await self.process.stop()
        await self.backend.close()

    def export_state(self) -> dict[str, Any]:
        return {
            **super().export_state(),
            "conversation": self.conversation,
            "faketime_offset": self.faketime.offset_seconds,
        }

    def import_state(self, data: dict[str, Any]) -> None:
        super().import_state(data)
        self.conversation = int(data.get("conversation", self.conversation))
        self.faketime.offset_seconds = float(data.get("faketime_offset", 0.0))

    # --- helpers for subclasses -------------------------------------------------------------------

    def process_env(self, base: dict[str, str]) -> dict[str, str]:
        """``base`` plus the libfaketime variables when virtual time is on."""
        return self.faketime.env(base) if self.virtual_time else dict(base)

    def observe(self, observation: Observation) -> None:
        self._observations.append(observation)

    def set_context_tokens(self, tokens: int) -> None:
        self._context_tokens = tokens

    def collect_observations(self) -> None:
        """Read new observations from the agent's logs (subclasses)."""

    async def timed(self, coro: Any, what: str) -> Any:
        """Await ``coro`` within ``reply_timeout``; a dead process or a timeout becomes an AdapterError."""
        with self.working():
            try:
                return await asyncio.wait_for(coro, self.reply_timeout)
            except TimeoutError:
                raise AdapterError(
                    f"{self.name}: no reply to {what} within {self.reply_timeout:.0f}s"
                    + ("" if self.process.alive() else f"; {self.process.describe_exit()}")
                ) from None

    def require_running(self) -> None:
        if not self.process.alive():
            raise AdapterError(f"{self.name}: the agent is not running: {self.process.describe_exit()}")

    def copy_memory(self, label: str, files: list[tuple[Path, str]]) -> Path:
        """Copy ``(source, relative name)`` pairs that exist into ``run_dir/memory/<label>/``."""
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in label) or "snapshot"
        target = self.ctx.run_dir / "memory" / safe
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for source, relative in files:
            if source.is_file():
                destination = target / relative
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, destination)
        return target

    def wipe_agent_dir(self) -> None:
        """Delete everything the agent had (memory, transcripts, config); the folder is recreated empty."""
        if self.agent_dir.exists():
            shutil.rmtree(self.agent_dir)
        self.agent_dir.mkdir(parents=True)
