"""What the adapters of locally run agents (Hermes, OpenClaw) share.

- ``COMMON_OPTIONS``: the run keys both take (``model``, ``start_timeout``, ``reply_timeout``, ``virtual_time``);
- ``ModelBackend``: the agent's upstream model, either a ``config.jsonc`` endpoint or the scripted model
  server started here on a free loopback port;
- ``LocalAgentAdapter``: on top of ``BaseAdapter`` (reply log, thinking flag): the agent process (its log
  and pid file in the run's ``adapter`` folder, where the agent cannot write, see ``adapters/local/process.py``;
  started with umask 077, ``PrivateAgentProcess``, so what the agent writes in its home is its user's only, as
  everything under ``results/``), its minimal environment (``process_env``: nothing of the engine's but
  ``PASSED_ENV``), send timeouts, virtual time through a preloaded clock library, memory snapshots, the
  guaranteed release of the process, and ``check_delivery``: before a message is sent again after a kill or a
  timeout, the agent's own session says whether it arrived (``delivery_in``);
- the agent's folder, touched only through ``folder`` (never through a link the agent planted) and
  ``adapters/local/files/agent_files.py``, its size held to ``agent_disk_mb`` (``check_folder``); why a start failed is
  kept until one succeeds (``require_running`` says it), so the run waits with it as its reason;
- ``LocalAgentAdapter.agent_state``: what is true of the agent when a request to it fails (its process
  exited, or its server is down, restarting or up), said in the error and so in the run's waiting reason.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from adapters.base import AdapterContext, AdapterError, AgentStatus, BaseAdapter, Delivery, Observation
from adapters.local.files.agent_files import copy_memory, size_problem, snapshot_name
from adapters.local.files.safe_files import AgentFolder, reported
from adapters.local.files.safe_tree import folder_usage, remove_tree
from adapters.local.process import AgentProcess
from adapters.local.sandboxed_agent import SANDBOX_KEYS, SandboxedAgent
from adapters.local.virtual_clock import VirtualClock
from adapters.options import DISK_KEY, opt_bool, opt_disk_mb, opt_number, opt_str
from engine.run.lock import private_umask

SCRIPTED_API_KEY = "mmb-scripted-local-key"
OWN_DIR = "adapter"  # results/<run>/adapter: the engine's files about the agent (log, pid), out of its reach
PID_FILE = "agent.pid"
LOG_FILE = "process.log"
# the only variables an agent process inherits from the engine (when set); the rest is the adapter's own
PASSED_ENV = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR")
COMMON_OPTIONS = {"model", "start_timeout", "reply_timeout", "virtual_time", *SANDBOX_KEYS, DISK_KEY}
PROBE_SECONDS = 3.0  # a look at the agent's server for an error message (``agent_state``)
STATE_SETTLE = 1.0  # seconds a server that does not answer gets to show that its process is gone


def is_scripted(name: str) -> bool:
    from engine.models.registry import is_scripted_name

    return is_scripted_name(name)


def delivery_in(session: list[tuple[str, str]], text: str) -> tuple[Delivery, str | None]:
    """Whether ``text`` is the last user message of an agent's session, and its reply if it has one.

    ``session``: the session's ``(role, text)`` in order, ``"user"`` messages and the agent's final replies
    (``"assistant"``; tool calls and tool results left out). Returns ``("replied", reply)``, ``("unanswered",
    None)`` or ``("absent", None)``. Only the *last* user message counts: the engine delivers one message at
    a time, so the one in flight is always the latest (a message the persona sends twice in a row, the first
    answered, would be taken for delivered: a limit of the check).
    """
    users = [index for index, (role, _) in enumerate(session) if role == "user"]
    if not users or not _same_message(session[users[-1]][1], text):
        return "absent", None
    replies = [reply for role, reply in session[users[-1] + 1 :] if role == "assistant" and reply.strip()]
    return ("replied", replies[-1]) if replies else ("unanswered", None)


def _same_message(stored: str, sent: str) -> bool:
    stored, sent = stored.strip(), sent.strip()
    if stored == sent:
        return True
    # agents shorten huge messages (Hermes' API server keeps 65,536 characters)
    return len(stored) >= 60000 and sent.startswith(stored[:60000])


class PrivateAgentProcess(AgentProcess):
    """An ``AgentProcess`` started with umask 077: the files the agent writes (memory, sessions, its logs) are
    0600 and its folders 0700 (``engine.run.lock.private_umask``; the engine's own umask is already that once
    it holds a run's lock)."""

    def start(self, argv: list[str], env: dict[str, str], cwd: Path, titles: Sequence[str] = ()) -> None:
        private_umask()  # inherited by the agent process and its children
        super().start(argv, env, cwd, titles)


class ModelBackend:
    """The upstream model the agent calls: a configured endpoint, or the scripted server started here."""

    def __init__(self, ctx: AdapterContext, name: str) -> None:
        self.ctx = ctx
        self.name = name
        self._runner: Any = None
        self.base_url = ""  # the last one handed to the agent: what its sandbox lets it reach

    async def start(self) -> dict[str, str]:
        """``{"base_url", "model", "api_key"}`` reachable by the agent process."""
        name = self.name
        if not is_scripted(name):
            endpoint = self.ctx.model_endpoint(name) or {}
            if endpoint.get("base_url"):
                self.base_url = endpoint["base_url"]
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
        self.base_url = f"http://127.0.0.1:{self._port}/v1"
        return {"base_url": self.base_url, "model": name, "api_key": SCRIPTED_API_KEY}

    async def close(self) -> None:
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()


class LocalAgentAdapter(SandboxedAgent, BaseAdapter):
    """Base of the adapters that run the agent as a local process (subclasses do the agent specifics)."""

    supports_new_conversation = True
    supports_virtual_time = True
    default_start_timeout = 60.0
    reply_timeout: float  # the ``reply_timeout`` run key: the adapter's bound on a reply, and the engine's

    def __init__(self, ctx: AdapterContext) -> None:
        super().__init__(ctx)
        options = ctx.options
        self.model_name = opt_str(options, "model", "scripted/agent") or "scripted/agent"
        self.start_timeout = float(
            opt_number(options, "start_timeout", self.default_start_timeout, 1, 3600) or 60
        )
        self.reply_timeout = float(opt_number(options, "reply_timeout", 600.0, 1, 24 * 3600) or 600)
        self.virtual_time = opt_bool(options, "virtual_time", ctx.virtual_time)  # default: the benchmark's
        self.disk_limit_mb = opt_disk_mb(options)
        self.agent_dir = ctx.run_dir / "agent"
        self.folder = AgentFolder(self.agent_dir)  # every file the engine touches in it
        self.own_dir = ctx.run_dir / OWN_DIR  # hidden from the sandbox, as every run folder but the agent's
        self.process = PrivateAgentProcess(
            f"{self.name} agent", self.own_dir / LOG_FILE, self.own_dir / PID_FILE
        )
        self.refusal = ""  # why the last start failed, until one succeeds (``require_running``)
        self.virtual_clock = VirtualClock(self.agent_dir / "faketime.rc")
        self.init_sandbox(
            options
        )  # ``agent_sandbox``, ``agent_network``, ``agent_limits`` (``SandboxedAgent``)
        self.backend = ModelBackend(ctx, self.model_name)
        self.conversation = 1
        self._observations: list[Observation] = []
        self._context_tokens: int | None = None
        self._finalizer = weakref.finalize(self, self.process.kill_now)

    # --- the engine's interface -------------------------------------------------------------------

    async def create_session(self, name: str) -> None:
        """Start the agent (first start, resume or revive) over its folder, once the folder is checked
        (``check_folder``); subclasses start it in ``start_session``. Why a start failed is kept until one
        succeeds: every request then says it (``require_running``), so the run's waiting reason names it."""
        try:
            await self.check_folder()
            await self.start_session(name)
        except AdapterError as exc:
            self.refusal = str(exc)
            raise
        self.refusal = ""

    async def start_session(self, name: str) -> None:
        raise NotImplementedError  # subclasses: start the process over its folder, open session ``name``

    async def get_status(self) -> AgentStatus | None:
        self.require_running()  # a dead agent is a failure now, not a quiet "sleeping"
        self.collect_observations()
        new, self._observations = self._observations, []
        return AgentStatus(
            state="thinking" if self.thinking else "sleeping",
            context_tokens=self._context_tokens,
            observations=new,
        )

    async def set_virtual_time(self, iso: str) -> None:
        if self.virtual_time:
            with reported(self.virtual_clock.offset_file):
                self.virtual_clock.set_time(iso)
            # the agent reads the new time from its next turn on
            await asyncio.sleep(self.virtual_clock.settle_delay())

    async def close(self) -> None:
        await self.process.stop()
        self.box.close()  # the sandbox's relay and support folder
        await self.backend.close()

    async def check_delivery(self, text: str) -> Delivery:
        """Before ``text`` is sent again after a kill or a timeout (and the revive that follows): did the
        first send reach the agent? Asks the agent's own session (``session_messages``):

        - ``"replied"``: it is there and the agent answered it; the answer is recorded now (read it with
          ``get_responses``): do not send it again;
        - ``"unanswered"``: it is there but the agent never answered (killed mid-turn): sending it again puts it
          twice in the agent's session;
        - ``"absent"``: it never arrived: send it;
        - ``"unknown"``: the agent is not running or cannot say.
        """
        if not self.process.alive():
            return "unknown"
        try:
            session = await self.timed(self.session_messages(), "a look at its own session")
        except (AdapterError, OSError, ValueError, httpx.HTTPError):
            return "unknown"
        if session is None:
            return "unknown"
        found, reply = delivery_in(session, text)
        if reply is not None:
            self.record_reply(reply)
        return found

    async def session_messages(self) -> list[tuple[str, str]] | None:
        """The current session as the agent keeps it, ``(role, text)`` in order (see ``delivery_in``);
        None when it cannot be read (subclasses)."""
        return None

    def export_state(self) -> dict[str, Any]:
        return {
            **super().export_state(),
            "conversation": self.conversation,
            "faketime_offset": self.virtual_clock.offset_seconds,  # the key keeps its old name: saved states read on
        }

    def import_state(self, data: dict[str, Any]) -> None:
        super().import_state(data)
        self.conversation = int(data.get("conversation", self.conversation))
        self.virtual_clock.offset_seconds = float(data.get("faketime_offset", 0.0))

    # --- helpers for subclasses -------------------------------------------------------------------

    def process_env(self, home: Path, own: dict[str, str]) -> dict[str, str]:
        """The agent's whole environment, built from nothing (the engine's own is never handed down: it holds
        the persona's and judge's keys): ``PASSED_ENV`` from the engine when set (``LANG`` defaults to
        ``C.UTF-8``), ``HOME`` = ``home``, the agent's ``own`` variables (its model key under the name it
        expects, its folders), and the clock library's variables when virtual time is on."""
        env = {key: os.environ[key] for key in PASSED_ENV if os.environ.get(key)}
        env.setdefault("PATH", os.defpath)
        env.setdefault("LANG", "C.UTF-8")
        env["HOME"] = str(home)
        env.update(own)
        if not self.virtual_time:
            return env
        with reported(
            self.virtual_clock.offset_file
        ):  # written anew at each start: whatever the agent put there
            self.virtual_clock.write_offset(
                self.virtual_clock.offset_seconds
            )  # goes (a new file renamed over it)
            return self.virtual_clock.env(env)

    def observe(self, observation: Observation) -> None:
        self._observations.append(observation)

    def set_context_tokens(self, tokens: int) -> None:
        self._context_tokens = tokens

    def collect_observations(self) -> None:
        """Read new observations from the agent's logs (subclasses)."""

    async def timed(self, coro: Any, what: str) -> Any:
        """Await ``coro`` within ``reply_timeout``; a timeout becomes an AdapterError saying what is true of the
        agent then (``agent_state``)."""
        with self.working():
            try:
                return await asyncio.wait_for(coro, self.reply_timeout)
            except TimeoutError:
                pass
        state = await self.agent_state()
        raise AdapterError(f"{self.name}: no reply to {what} within {self.reply_timeout:.0f}s; {state}")

    def require_running(self) -> None:
        if not self.process.alive():
            why = f"not started again: {self.refusal}" if self.refusal else self.process.describe_exit()
            raise AdapterError(f"{self.name}: the agent is not running: {why}")

    async def before_message(self) -> None:
        """What a message needs: the agent running, its folder within bounds (``check_folder``)."""
        self.require_running()
        await self.check_folder()

    async def check_folder(self) -> None:
        """The agent's folder holds at most ``agent_disk_mb`` (measured in a worker thread, without following
        a link); else an ``AdapterError`` naming the folder and its size."""
        usage = await asyncio.to_thread(folder_usage, self.agent_dir)
        if problem := size_problem(usage, self.disk_limit_mb, self.agent_dir):
            raise AdapterError(f"{self.name}: {problem}")

    # --- what is true of the agent, for an error and so for the run's waiting reason ----------------

    server_label = "the agent's server"  # what a subclass's ``server_state`` probes ("the gateway")

    async def request_failed(self, what: str, exc: Exception) -> AdapterError:
        """The AdapterError of a request to the agent that failed with ``exc``, with ``agent_state``."""
        return AdapterError(f"{self.name}: {what} failed: {exc!r}; {await self.agent_state()}")

    async def agent_state(self) -> str:
        """What is true of the agent now: ``<server> is down: <process> exited with code …; log …`` (its log's
        tail), or its process runs and ``<server> is up``, or ``<server> <what is wrong>`` (``server_state``:
        nothing listens on its port, it is stopping or restarting, …).

        A killed agent's connections close a moment before its exit can be seen: while its server does not
        answer, its process is given ``STATE_SETTLE`` seconds to show that it is gone."""
        wrong = await self._server_wrong()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STATE_SETTLE
        while wrong is not None and self.process.alive() and loop.time() < deadline:
            await asyncio.sleep(0.05)
        if not self.process.alive():
            return f"{self.server_label} is down: {self.process.describe_exit()}"
        if wrong is None:
            return f"{self.server_label} is up (pid {self.process.pid})"
        return f"{self.server_label} {wrong}, though its process (pid {self.process.pid}) still runs"

    async def server_state(self) -> str | None:
        """What is wrong with the agent's server while its process runs (``"is down: …"``, ``"is restarting
        …"``), None when it answers as it should. Subclasses probe it (``probe``); the base cannot tell."""
        return None

    async def probe(self, url: str) -> httpx.Response | str:
        """``GET url`` within ``PROBE_SECONDS``: the response, or what kept it from answering."""
        try:
            async with httpx.AsyncClient(timeout=PROBE_SECONDS) as client:
                return await client.get(url)
        except httpx.ConnectError:
            return f"is down: nothing listens at {url}"
        except httpx.TimeoutException:
            return f"does not answer {url} within {PROBE_SECONDS:g} s"
        except httpx.HTTPError as exc:
            return f"fails to answer {url}: {exc!r}"

    async def _server_wrong(self) -> str | None:
        if not self.process.alive():
            return "is down"
        try:
            return await asyncio.wait_for(self.server_state(), PROBE_SECONDS + 1)
        except TimeoutError:
            return f"does not answer within {PROBE_SECONDS:g} s"

    def copy_memory(
        self, label: str, files: Sequence[tuple[Path, str]], folders: Sequence[tuple[Path, str, str]] = ()
    ) -> Path:
        """Copy the agent's memory files into ``run_dir/memory/<label>/`` (``adapters/local/files/agent_files.py``: regular
        files only, never through a link; what was left out is said in its ``skipped.txt``)."""
        target = self.ctx.run_dir / "memory" / snapshot_name(label)
        copy_memory(self.folder, target, files, folders)
        return target

    def wipe_agent_dir(self) -> None:
        """Delete everything the agent had (memory, transcripts, config), without following a link it left
        there (``remove_tree``), and its log; the folder is recreated empty."""
        with reported(self.agent_dir):
            remove_tree(self.agent_dir)
            self.agent_dir.mkdir(parents=True)
            self.process.log_path.unlink(missing_ok=True)
