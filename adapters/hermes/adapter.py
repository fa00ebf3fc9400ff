"""Hermes Agent (PyPI ``hermes-agent`` 0.19.0) as the agent under test, through its API server.

One gateway process per run with ``HERMES_HOME`` under ``run_dir/agent/home`` (kept across resumes, wiped
by ``destroy_session``). Chat goes to ``POST /api/sessions/{id}/chat``; a new conversation is a new session
id over the same home (memory kept: Hermes freezes memory into a session's system prompt at its start).
Compactions and per-call context sizes are read from ``logs/agent.log``.

What Hermes 0.19.0 needs and does (verified headless against the scripted model server):

- Install: a venv with ``hermes-agent==0.19.0`` and ``aiohttp`` (its API server needs it but does not depend
  on it); ``hermes gateway run`` runs in the foreground, ready on ``GET /health`` in about a second; SIGTERM
  stops it in ~2 s (exit code 1 by design).
- ``$HERMES_HOME/.env``: ``API_SERVER_ENABLED``, ``API_SERVER_KEY`` (16+ characters, mandatory even on
  loopback; every request sends ``Authorization: Bearer <key>``), ``API_SERVER_HOST``, ``API_SERVER_PORT``.
- ``$HERMES_HOME/config.yaml`` is re-read on every request: ``model.context_length`` must be >= 64000 and
  ``max_tokens`` set (else 65536 is sent upstream); ``security.tirith_enabled: false`` avoids a download at
  start; ``platform_toolsets.api_server`` chooses the tools (host tools off here); ``compression`` and
  ``memory.nudge_interval`` (a background "review and save" call every N turns, 0 = off).
- API: ``POST /api/sessions {"id", "title"}`` answers 201, or 409 when the id exists (a resumed run);
  ``POST /api/sessions/{id}/chat {"message"}`` answers ``{"session_id", "message": {"content"}, "usage"}``.
  Slash commands are not interpreted over HTTP: a new conversation is a new session id. A full reset needs a
  fresh home, ``state.db`` included (its ``session_search`` tool recalls old transcripts from it).
- Memory: ``memories/MEMORY.md`` (2,200 characters) and ``USER.md`` (1,375), entries separated by a line ``§``,
  written by its ``memory`` tool; a write shows up in the next session, not the current one.
- ``logs/agent.log`` lines read here: ``context compression started: session=S messages=9 tokens=~94,436``,
  ``context compression done: session=S messages=9->7 rough_tokens=~78,809`` and ``API call #1: … in=12719
  out=8``. Compression never triggers below 64K tokens (about 54,400 with ``context_length`` 64000).
- Upstream it streams chat completions (``stream: true``): the model server must speak SSE. Messages over
  65,536 characters are truncated by its API server.
- Boxing: without the ``terminal`` and ``file`` toolsets a forced call of their tools is answered "Tool
  'terminal' does not exist"; the process gets a minimal environment (``LocalAgentAdapter.process_env``)
  with ``HOME`` = ``HERMES_HOME``. It keeps every user message in ``state.db`` before answering it, which
  ``GET /api/sessions/{id}/messages`` shows (``session_messages``, for ``check_delivery``), its tool calls with
  their results and message ids (``agent_actions``: ``adapters/hermes/actions.py``, the last id read kept in
  the adapter's state); its memory files are read for the run's memory history by ``memory_files``.
- Restarts: the port of ``.env`` is kept while free; a gateway left running by a killed engine is ended
  first (``AgentProcess.end_stale``), else Hermes refuses to start ("Another gateway instance is already
  running").
- Its home is the agent's to write in (with its terminal and file tools): ``.env``, ``config.yaml``, its log
  and its memories are read and written through ``LocalAgentAdapter.folder``, never through a link it put
  there (such a link is refused and the run waits, naming it).
"""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path
from typing import Any

import httpx

from adapters.base import AdapterContext, AdapterError, Observation
from adapters.hermes.actions import actions_of
from adapters.local.agent import COMMON_OPTIONS, LocalAgentAdapter
from adapters.local.files.memory_read import read_memory
from adapters.local.install import hermes_dir, hermes_executable, install_helpers, install_hermes
from adapters.local.ports import free_port, port_is_free
from adapters.local.sandbox.policy import venv_base
from adapters.options import check_known, every_problem, opt_bool, opt_number
from engine.agents import AgentAction

OPTIONS = {
    "hermes_compression_threshold",
    "hermes_compression_target_ratio",
    "hermes_compression_protect_first_n",
    "hermes_compression_protect_last_n",
    "hermes_context_length",
    "hermes_host_tools",
    "hermes_memory_nudge_interval",
}
MEMORY_TOOLSETS = ["memory", "session_search", "todo"]
HOST_TOOLSETS = ["terminal", "file"]
API_KEY_ENV = "MMB_HERMES_UPSTREAM_KEY"
# in the agent's folder (``LocalAgentAdapter.folder``)
HOME = Path("home")
ENV_FILE = HOME / ".env"
CONFIG_FILE = HOME / "config.yaml"
AGENT_LOG = HOME / "logs" / "agent.log"
MEMORIES = HOME / "memories"
MEMORY_FOLDERS = [(MEMORIES, ".md", "")]  # its memory: MEMORY.md and USER.md
ENV_LIMIT = 64 * 1024  # bytes of .env read at most

_STARTED = re.compile(r"context compression started: session=(\S+) messages=(\d+) tokens=~([\d,]+)")
_DONE = re.compile(r"context compression done: session=(\S+) messages=(\d+)->(\d+) rough_tokens=~([\d,]+)")
_CALL = re.compile(r"API call #\d+: .*? in=(\d+) out=(\d+)")


def _int(text: str) -> int:
    return int(text.replace(",", ""))


class HermesAdapter(LocalAgentAdapter):
    """Drives a local Hermes gateway (``hermes gateway run``) over its HTTP API."""

    name = "hermes"
    default_start_timeout = 90.0
    server_label = "the gateway"

    @classmethod
    def install(cls) -> None:
        """The pinned install on this machine (a no-op once done; ``adapters/local/install.py``), and the sandbox
        and virtual clock where this machine can have them (else a run that needs them says how to get them)."""
        install_hermes()
        install_helpers()

    def __init__(self, ctx: AdapterContext) -> None:
        with every_problem():  # one ValueError naming every bad run key
            check_known(ctx.options, COMMON_OPTIONS | OPTIONS, self.name)
            super().__init__(ctx)
            self._read_options(ctx.options)
        self.home = self.agent_dir / HOME
        self.port = 0
        self.api_key = ""
        self.session_id = ""
        self._log_offset = 0
        self._compression_before: dict[str, int] = {}
        self._actions_after = 0  # the last message id of its store whose tool calls were read

    def _read_options(self, options: dict[str, Any]) -> None:
        """The ``hermes_*`` run keys (their problems named by ``every_problem``)."""
        self.compression: dict[str, Any] = {
            "enabled": True,
            "threshold": opt_number(options, "hermes_compression_threshold", 0.50, 0.01, 1.0),
            "target_ratio": opt_number(options, "hermes_compression_target_ratio", 0.20, 0.01, 1.0),
            "protect_first_n": opt_number(
                options, "hermes_compression_protect_first_n", 3, 0, 1000, integer=True
            ),
            "protect_last_n": opt_number(
                options, "hermes_compression_protect_last_n", 20, 0, 1000, integer=True
            ),
        }
        self.context_length = int(
            opt_number(options, "hermes_context_length", 131072, 64000, 10**7, True) or 0
        )
        self.host_tools = opt_bool(options, "hermes_host_tools", self.sandboxed)
        self.nudge_interval = int(opt_number(options, "hermes_memory_nudge_interval", 0, 0, 10**4, True) or 0)

    # --- lifecycle --------------------------------------------------------------------------------

    async def start_session(self, name: str) -> None:
        executable = hermes_executable()
        endpoint = await self.backend.start()
        self.folder.make_dirs(HOME)
        previous = self._configured_port()
        await self.process.end_stale([previous] if previous else [])  # a gateway an engine killed left behind
        self.port = previous if previous and port_is_free(previous) else free_port()
        self.api_key = secrets.token_urlsafe(24)
        self._write_config(endpoint)
        env = self.process_env(
            self.home,
            {
                "HERMES_HOME": str(self.home),
                API_KEY_ENV: endpoint["api_key"] or "none",
                "PYTHONUNBUFFERED": "1",
            },
        )
        self._log_offset = self._log_size()
        self.start_agent([str(executable), "gateway", "run"], env, self.home)
        await self.process.wait_ready(self._healthy, self.start_timeout)
        await self._open_session(name)

    async def destroy_session(self) -> None:
        await self.close()
        previous = self._configured_port()
        await self.process.end_stale([previous] if previous else [])  # before its pid file is wiped
        self.wipe_agent_dir()
        self.conversation = 1
        self.session_id = ""
        self._log_offset = 0
        self._actions_after = 0

    async def start_new_conversation(self) -> None:
        self.require_running()
        self.conversation += 1
        await self._open_session(f"conversation {self.conversation}")

    # --- chat -------------------------------------------------------------------------------------

    async def send_message(self, text: str) -> None:
        await self.before_message()
        if not self.session_id:
            raise AdapterError("hermes: send_message before create_session")
        url = f"{self._base()}/api/sessions/{self.session_id}/chat"
        try:
            response = await self.timed(self._post(url, {"message": text}), "a message")
        except httpx.HTTPError as exc:
            raise await self.request_failed("chat request", exc) from None
        self.record_reply(self.read_chat_reply(response, "message", "content"))

    async def session_messages(self) -> list[tuple[str, str]] | None:
        """``GET /api/sessions/{id}/messages`` (from Hermes' state.db): user messages and final replies."""
        stored = await self._stored_messages()
        if stored is None:
            return None
        session: list[tuple[str, str]] = []
        for message in stored:
            role, content = message.get("role"), message.get("content")
            if not isinstance(content, str):
                continue
            if role == "user" or (role == "assistant" and not message.get("tool_calls")):
                session.append((role, content))
        return session

    async def agent_actions(self) -> list[AgentAction] | None:
        """Its tool calls stored since the last look (``adapters/hermes/actions.py``); [] while it cannot say."""
        if not self.session_id or not self.process.alive():
            return []
        try:
            stored = await self.timed(self._stored_messages(), "a look at its own session")
        except httpx.HTTPError as exc:  # the gateway died meanwhile: an error of the agent, not of the engine
            raise await self.request_failed("a look at its own session", exc) from None
        if stored is None:
            return []
        found, self._actions_after = actions_of(stored, self._actions_after)
        return found

    async def _stored_messages(self) -> list[dict[str, Any]] | None:
        """The current session's messages as its store keeps them ([] for a session never created)."""
        if not self.session_id:
            return None
        async with httpx.AsyncClient(timeout=httpx.Timeout(30, connect=10)) as client:
            response = await client.get(
                f"{self._base()}/api/sessions/{self.session_id}/messages", headers=self._headers()
            )
        if response.status_code == 404:
            return []  # the session was never created: nothing arrived
        if response.status_code != 200:
            return None
        data = response.json().get("data")
        return [m for m in data if isinstance(m, dict)] if isinstance(data, list) else []

    def export_state(self) -> dict[str, Any]:
        return {**super().export_state(), "actions_after": self._actions_after}

    def import_state(self, data: dict[str, Any]) -> None:
        super().import_state(data)
        self._actions_after = int(data.get("actions_after", 0))

    # --- memory and observations ------------------------------------------------------------------

    def readable_installs(self) -> list[Path]:
        base = venv_base(hermes_dir())  # the venv's interpreter may live in the hidden home (pyenv)
        return [*super().readable_installs(), *([base] if base else [])]

    def tools_offered(self) -> list[str]:
        return self.toolsets()

    def toolsets(self) -> list[str]:
        """Hermes' toolsets for the API server: its memory tools, and its terminal and file tools unless
        ``hermes_host_tools`` is false (the default without a sandbox)."""
        return MEMORY_TOOLSETS + (HOST_TOOLSETS if self.host_tools else [])

    def snapshot_memory(self, label: str) -> Path | None:
        return self.copy_memory(label, [], MEMORY_FOLDERS)

    def memory_files(self) -> dict[str, bytes] | None:
        return read_memory(self.folder, [], MEMORY_FOLDERS)

    def collect_observations(self) -> None:
        self._log_offset, chunk = self.folder.read_appended(AGENT_LOG, self._log_offset)
        complete = chunk[: chunk.rfind(b"\n") + 1]
        self._log_offset += len(complete)
        for line in complete.decode("utf-8", errors="replace").splitlines():
            self._parse_line(line)

    def _parse_line(self, line: str) -> None:
        if match := _STARTED.search(line):
            self._compression_before[match.group(1)] = _int(match.group(3))
        elif match := _DONE.search(line):
            session, before_n, after_n, after = match.groups()
            self.observe(
                Observation(
                    kind="compaction",
                    tokens_before=self._compression_before.pop(session, None),
                    tokens_after=_int(after),
                    detail=f"session {session}: messages {before_n}->{after_n}",
                )
            )
        elif match := _CALL.search(line):
            tokens = int(match.group(1))
            self.set_context_tokens(tokens)
            self.observe(Observation(kind="context", tokens_before=tokens, detail="model call input tokens"))

    # --- internals --------------------------------------------------------------------------------

    def _write_config(self, endpoint: dict[str, str]) -> None:
        """``.env`` and ``config.yaml``, each a new file (0600) renamed over its name: never written through a
        link the agent put there (refused, naming it)."""
        self.folder.write_text(
            ENV_FILE,
            "API_SERVER_ENABLED=true\n"
            f"API_SERVER_KEY={self.api_key}\n"
            "API_SERVER_HOST=127.0.0.1\n"
            f"API_SERVER_PORT={self.port}\n",
        )
        config = {
            "model": {
                "provider": "custom",
                "default": endpoint["model"],
                "base_url": endpoint["base_url"],
                "api_key": "${" + API_KEY_ENV + "}",  # the key itself never lands in the run folder
                "context_length": self.context_length,
                "max_tokens": 4096,
            },
            "security": {"tirith_enabled": False},
            "platform_toolsets": {"api_server": self.toolsets()},
            "compression": self.compression,
            "memory": {"nudge_interval": self.nudge_interval},
        }
        # YAML is a superset of JSON: no YAML writer needed
        self.folder.write_text(CONFIG_FILE, json.dumps(config, indent=2) + "\n")

    def _configured_port(self) -> int | None:
        """The port of the last start of this run (``.env``), to keep it across restarts (None when it cannot
        be read safely: the write that follows refuses what is wrong)."""
        try:
            text = self.folder.read_text(ENV_FILE, ENV_LIMIT) or ""
        except AdapterError:
            return None
        match = re.search(r"^API_SERVER_PORT=(\d{1,5})$", text, re.M)
        return int(match.group(1)) if match and 0 < int(match.group(1)) < 65536 else None

    def _base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"}

    async def _post(self, url: str, body: dict[str, Any]) -> httpx.Response:
        async with httpx.AsyncClient(timeout=httpx.Timeout(self.reply_timeout + 5, connect=10)) as client:
            return await client.post(url, json=body, headers=self._headers())

    async def server_state(self) -> str | None:
        """The API server's ``/health``: None when it answers 200, else what it answers or why it does not."""
        response = await self.probe(f"{self._base()}/health")
        if isinstance(response, str):
            return response
        return None if response.status_code == 200 else f"answers /health with HTTP {response.status_code}"

    async def _healthy(self) -> bool:
        async with httpx.AsyncClient(timeout=2) as client:
            response = await client.get(f"{self._base()}/health")
        return response.status_code == 200

    async def _open_session(self, title: str) -> None:
        session_id = f"mmb-{self.ctx.run_id}-{self.conversation}"
        session_id = re.sub(r"[^A-Za-z0-9_.-]", "-", session_id)
        try:
            response = await self.timed(
                self._post(f"{self._base()}/api/sessions", {"id": session_id, "title": title}),
                "session creation",
            )
        except httpx.HTTPError as exc:
            raise await self.request_failed("session creation", exc) from None
        if response.status_code not in (200, 201, 409):  # 409: the session exists (a resumed run)
            raise AdapterError(
                f"hermes: session creation answered HTTP {response.status_code}: {response.text[:300]}"
            )
        self.session_id = session_id

    def _log_size(self) -> int:
        return self.folder.size(AGENT_LOG)
