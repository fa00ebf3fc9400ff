"""Letta Code (PyPI ``letta`` 0.34.12, Node 22 bundled) as the agent under test, run as is: headless, one sandboxed
process per message.

Letta Code has no gateway to keep running: each message is one call of its CLI in headless mode
(``letta --backend local … -p -- <message> --output-format json``), started in the agent's sandbox like Hermes'
gateway (``SandboxedAgent.start_agent``: its pid recorded, tied to the engine's life, the model endpoint its only
network), on virtual time through the preloaded clock library (which the bundled Node honours). Its state lives in
its own home, ``run_dir/agent/home`` (``HOME``: ``.letta/lc-local-backend``, read by ``adapters/letta/store.py``).
Its output goes to the process log and its result is read from there: ``json``, not ``stream-json``, which makes a
line per streamed token of a real model (what it did is in its transcript anyway).

- **Agent and conversations.** The first message makes the agent (``--new-agent -m openai-compatible/<model>``);
  the next ones go to its conversation (``--conversation <id>``); ``start_new_conversation`` makes the next
  message open a new one over the same memory (``--agent <id> --new``). The ids come from the call's result and
  are kept in ``state.json``; a call killed before its result was read is found again in Letta's store (its one
  agent, a conversation the run did not know: ``_adopt``).
- **Its model** is its ``openai-compatible`` provider, read from ``providers/auth.json`` (Letta takes its key from no
  environment variable). The run folder's copy holds a blank key; in the sandbox each call sees the keyed one, a
  file of its start's support folder shown over it (``start_agent``'s ``secrets``), so the key never reaches the
  run folder. Without a sandbox it is written there for the call and blanked after it. Letta looks the model up in the endpoint's
  ``GET /v1/models``: a scripted model with options (``scripted/agent?faults=…``) is served under a plain name.
- **Reminders.** Letta prefixes a session's first message with ``<system-reminder>`` blocks (device, agent,
  MCP servers, permission mode). A headless call is a session of its own, so its device and agent blocks are
  asked for on a conversation's first message only (``--no-system-info-reminder`` after it), as a chat app shows
  them once; the short MCP and permission blocks come with every message, as Letta sends them.
- **Delivery.** Letta appends the user's message to ``conversations/<id>/messages.jsonl`` before it calls the
  model: ``check_delivery`` reads it there (``adapters/local/agent.py`` ``delivery_in``).
- **Status.** The context size of each call's last model request (its result's ``usage.context_tokens``) and
  Letta's compactions (``compaction`` entries of the transcript, tokens before and after).
- **Memory.** Its MemFS folder, ``memfs/<agent id>/memory`` (a git repository of Markdown files the agent edits
  with its own ``Write``/``Edit``/``Bash`` and commits itself): snapshots copy its working tree (regular files
  only, never ``.git``); its tool calls are read from the transcript (``adapters/letta/actions.py``).
- **Tools.** All of Letta Code's own, in the sandbox. Without a sandbox they would run with your rights, and
  its memory needs them: ``agent_sandbox: "none"`` is refused unless ``letta_host_tools`` is true; false in the
  sandbox takes its shell away (``--disallowedTools Bash``), its file tools kept.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from adapters.base import AdapterContext, AdapterError, Delivery, Observation, usage_of
from adapters.letta.actions import actions_after
from adapters.letta.call import BLANK_KEY, Whereabouts, call_result, context_tokens, fit, provider_json
from adapters.letta.model import LettaModel
from adapters.letta.store import (
    STORE,
    Conversation,
    agent_ids,
    compactions,
    conversations,
    entries,
    memory_dir,
    memory_files,
    session_of,
)
from adapters.local.agent import COMMON_OPTIONS, LocalAgentAdapter, delivery_in
from adapters.local.files.memory_read import read_memory
from adapters.local.install import install_helpers, install_letta, letta_command
from adapters.options import check_known, every_problem, opt_bool, problem
from engine.agents import AgentAction

HOST_TOOLS_KEY = "letta_host_tools"
OPTIONS = {HOST_TOOLS_KEY}
HOME = Path("home")
WORKSPACE = HOME / "workspace"  # its working directory (Letta writes ``.letta/settings.local.json`` there)
AUTH = STORE / "providers" / "auth.json"
# its tools in 0.34.12, as its headless init lists them
TOOLS = (
    "Bash Read Write Edit Memory Skill Agent SendAgentMessage Workflow Monitor Wake WatchPR TaskCreate TaskGet "
    "TaskList TaskUpdate TaskStop EnterWorktree ExitWorktree SetWorkingDirectory"
).split()
POLL = 0.05  # seconds between two looks at a running call


class LettaAdapter(LocalAgentAdapter):
    """Drives Letta Code's headless CLI, one sandboxed process per message, over its local backend."""

    name = "letta"

    @classmethod
    def install(cls) -> None:
        """The pinned install on this machine (a no-op once done; ``adapters/local/install.py``), and the sandbox and
        virtual clock where this machine can have them."""
        install_letta()
        install_helpers()

    def __init__(self, ctx: AdapterContext) -> None:
        with every_problem():  # one ValueError naming every bad run key
            check_known(ctx.options, COMMON_OPTIONS | OPTIONS, self.name)
            super().__init__(ctx)
            self.host_tools = opt_bool(ctx.options, HOST_TOOLS_KEY, self.sandboxed)
            if not self.sandboxed and not (self.host_tools and HOST_TOOLS_KEY in ctx.options):
                # no tool subset of it is safe unboxed: even without its shell, Write and Edit reach any file
                problem(
                    f'{HOST_TOOLS_KEY}: agent_sandbox "none" runs Letta Code\'s own tools (Bash, Write, Edit), '
                    f"which its memory needs, with your rights: set {HOST_TOOLS_KEY}: true to accept that, or "
                    "keep the sandbox",
                    None,
                )
        self.backend = LettaModel(ctx, self.model_name)
        self.home = self.agent_dir / HOME
        self.endpoint: dict[str, str] = {}
        self.started = False
        self.where = Whereabouts()
        self._seen_compactions: set[str] = set()

    # --- lifecycle --------------------------------------------------------------------------------

    async def start_session(self, name: str) -> None:
        """Nothing runs between messages: check the install, start the model, end a call a killed engine left
        running, and take up what Letta's store holds (a call killed before its result was read)."""
        letta_command()
        self.endpoint = await self.backend.start()
        self.folder.make_dirs(WORKSPACE)
        await self.process.end_stale()
        await asyncio.to_thread(self._adopt)
        self._seen_compactions |= {key for key, *_ in await asyncio.to_thread(self._compactions)}
        self.started = True

    async def close(self) -> None:
        self.started = False
        await super().close()

    async def destroy_session(self) -> None:
        await self.close()
        await self.process.end_stale()  # before its pid file is wiped
        self.wipe_agent_dir()
        self.conversation = 1
        self.where = Whereabouts()
        self._seen_compactions = set()

    async def start_new_conversation(self) -> None:
        self.require_running()
        self.conversation += 1
        self.where.pending_new = bool(self.where.agent_id)  # before the agent exists its first one is new

    def require_running(self) -> None:
        if not self.started:
            why = f": {self.refusal}" if self.refusal else ""
            raise AdapterError(f"{self.name}: the agent is not started{why}")

    # --- chat -------------------------------------------------------------------------------------

    async def send_message(self, text: str) -> None:
        await self.before_message()
        result = await self.timed(self._call(self._command(text)), "a message")
        if (usage := usage_of(result)) is not None:
            self.ctx.record_usage(usage)
        self.where.took(result)
        if (tokens := context_tokens(result)) is not None:
            self.set_context_tokens(tokens)
            self.observe(
                Observation(kind="context", tokens_before=tokens, detail="its last model call's context")
            )
        self.record_reply(result.get("result"))
        await asyncio.to_thread(self._observe_compactions)

    def _command(self, text: str) -> list[str]:
        """The call of one message: where it goes, its reminders, its tools, the message."""
        return [
            *letta_command(),
            "--backend",
            "local",
            *self.where.selection(self.endpoint["model"]),
            *([] if self.where.opens else ["--no-system-info-reminder"]),
            *([] if self.host_tools else ["--disallowedTools", "Bash"]),
            "--output-format",
            "json",
            "-p",
            "--",  # a message starting with "-" is the message, not an option
            fit(text),
        ]

    async def _call(self, argv: list[str]) -> dict[str, Any]:
        """Run one call in the sandbox to its end and return its result; a cancelled or timed-out call is killed
        at once (its partial turn stays in Letta's store, where ``check_delivery`` finds it)."""
        path = os.environ.get("PATH") or os.defpath
        own = {
            "LETTA_CODE_TELEM": "0",  # else DNS look-ups of its telemetry host
            "DISABLE_AUTOUPDATER": "1",
            "LETTA_CODE_DISTRIBUTION": "pypi",  # as its wheel's launcher sets it
            "PATH": f"{Path(argv[0]).parent}{os.pathsep}{path}",  # its own Node first, for its children
        }
        env = self.process_env(self.home, own)
        keyed = provider_json(self.endpoint["base_url"], self.endpoint["api_key"] or "none")
        blank = provider_json(self.endpoint["base_url"], BLANK_KEY)
        # the key never lands in the run folder: the sandbox shows it over the blank file during the call
        self.folder.write_text(AUTH, blank if self.secrets_shown else keyed)
        log = self.process.log_path
        start = log.stat().st_size if log.exists() else 0
        try:
            self.start_agent(argv, env, self.agent_dir / WORKSPACE, secrets={self.agent_dir / AUTH: keyed})
            while self.process.alive():
                await asyncio.sleep(POLL)
        finally:
            if self.process.alive():
                self.process.kill_now()
            await self.process.stop()  # its group's leftovers, its pid file
            self.folder.write_text(AUTH, blank)
        with log.open("rb") as printed:
            printed.seek(start)
            text = printed.read().decode("utf-8", errors="replace")
        return call_result(text, self.process.describe_exit().splitlines()[0])

    # --- what Letta's store says --------------------------------------------------------------------

    def _adopt(self) -> None:
        """Take up the agent and a new conversation a call made before it was killed (its result unread)."""
        where = self.where
        if not where.agent_id:
            found = agent_ids(self.folder)
            if not found:
                return
            where.agent_id, where.pending_new = found[0], True
        if where.opens:
            new = [c for c in conversations(self.folder, where.agent_id) if c.id not in where.known]
            if new:
                where.adopt(new[-1].id)

    def _current(self) -> Conversation | None:
        where = self.where
        if where.opens:
            return None
        found = conversations(self.folder, where.agent_id)
        return next((c for c in found if c.id == where.conversation_id), None)

    def _compactions(self) -> list[tuple[str, int | None, int | None, str]]:
        conversation = self._current()
        return [] if conversation is None else compactions(entries(self.folder, conversation))

    def _observe_compactions(self) -> None:
        for key, before, after, detail in self._compactions():
            if key not in self._seen_compactions:
                self._seen_compactions.add(key)
                said = f"conversation {self.where.conversation_id}: {detail}"
                self.observe(
                    Observation(kind="compaction", tokens_before=before, tokens_after=after, detail=said)
                )

    async def check_delivery(self, text: str) -> Delivery:
        """Did the message in flight at a kill or a timeout reach Letta? Its conversation's transcript says
        (``replied``: its reply is recorded now; ``unanswered``; ``absent``); ``unknown`` when it cannot be read."""
        if not self.started or self.process.alive():
            return "unknown"
        try:
            await asyncio.to_thread(self._adopt)
            session = await self.session_messages()
        except (AdapterError, OSError):
            return "unknown"
        found, reply = delivery_in(session or [], text)
        if reply is not None:
            self.record_reply(reply)
        return found

    async def session_messages(self) -> list[tuple[str, str]] | None:
        """The current conversation as Letta keeps it: the user's messages and its final replies ([] before the
        conversation exists)."""

        def read() -> list[tuple[str, str]]:
            conversation = self._current()
            return [] if conversation is None else session_of(entries(self.folder, conversation))

        return await asyncio.to_thread(read)

    async def agent_actions(self) -> list[AgentAction] | None:
        """Its tool calls since the last look, read from the current conversation's transcript."""

        def read() -> list[AgentAction]:
            conversation = self._current()
            if conversation is None:
                return []
            cursor = self.where.actions
            after = cursor[1] if cursor[0] == conversation.id else ""
            memory = self.agent_dir.resolve() / memory_dir(self.where.agent_id)
            done, last = actions_after(entries(self.folder, conversation), after, memory)
            self.where.actions = (conversation.id, last)
            return done

        return await asyncio.to_thread(read)

    # --- memory and state ---------------------------------------------------------------------------

    def tools_offered(self) -> list[str]:
        return [tool for tool in TOOLS if self.host_tools or tool != "Bash"]

    def snapshot_memory(self, label: str) -> Path | None:
        return self.copy_memory(label, memory_files(self.folder, self.where.agent_id))

    def memory_files(self) -> dict[str, bytes] | None:
        return read_memory(self.folder, memory_files(self.folder, self.where.agent_id))

    def export_state(self) -> dict[str, Any]:
        return {**super().export_state(), "letta": self.where.export()}

    def import_state(self, data: dict[str, Any]) -> None:
        super().import_state(data)
        self.where = Whereabouts.restore(data.get("letta"))

    async def agent_state(self) -> str:
        """What is true of the agent when a call fails: its call still runs, or how it ended."""
        if self.process.alive():
            return f"its call (pid {self.process.pid}) still runs"
        return f"its last call: {self.process.describe_exit()}"
