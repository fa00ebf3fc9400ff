"""A generic OpenAI-compatible chat endpoint as the agent under test (your own agent behind an HTTP API).

Options: ``base_url`` (…/v1), ``model``, ``api_key_env`` (the variable holding the key; optional),
``mode``: ``"stateless"`` (default: the adapter keeps the history and sends it whole every turn) or
``"stateful"`` (the endpoint keeps the conversation: only the new user turn is sent, tagged with a session
id through ``session_header`` such as ``"X-Session-Id"`` or ``session_field: "user"``), ``reply_timeout``.
A new conversation is a new session id (stateful) or a cleared history (stateless). The stateless history lives
in ``results/<run>/agent/openai-endpoint.jsonl`` (``adapters/history_file.py``: a new conversation is a reset
line); state.json keeps only how many of its lines a checkpoint covers, so it stays bounded and a resume sends
exactly what an uninterrupted run sends.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from adapters.base import AdapterContext, AdapterError, BaseAdapter
from adapters.history_file import HistoryFile
from adapters.options import check_known, every_problem, opt_choice, opt_number, opt_str, require
from engine.sanitize import valid_text

OPTIONS = {"base_url", "model", "api_key_env", "mode", "session_header", "session_field", "reply_timeout"}


class OpenAIEndpointAdapter(BaseAdapter):
    """Talks to ``POST {base_url}/chat/completions``."""

    name = "openai-endpoint"
    supports_new_conversation = True
    reply_timeout: float  # the ``reply_timeout`` run key: the adapter's bound on a reply, and the engine's

    def __init__(self, ctx: AdapterContext) -> None:
        super().__init__(ctx)
        options = ctx.options
        with every_problem():  # every bad key named at once
            check_known(options, OPTIONS, self.name)
            self.base_url = require(opt_str(options, "base_url", None), "base_url", self.name).rstrip("/")
            self.model = require(opt_str(options, "model", None), "model", self.name)
            self.api_key_env = opt_str(options, "api_key_env", None)
            self.mode = opt_choice(options, "mode", "stateless", ("stateless", "stateful"))
            self.session_header = opt_str(options, "session_header", None)
            self.session_field = opt_str(options, "session_field", None)
            if self.session_field not in (None, "user"):
                raise ValueError(f"session_field: only 'user' is supported, got {self.session_field!r}")
            if self.mode == "stateful" and not (self.session_header or self.session_field):
                raise ValueError("mode: 'stateful' needs session_header or session_field")
            self.reply_timeout = float(opt_number(options, "reply_timeout", 300.0, 1, 24 * 3600) or 300)
        self.log = HistoryFile(ctx.run_dir / "agent" / "openai-endpoint.jsonl")
        # stateless: the history (its lines counted by the checkpoint) gains a turn only with its reply;
        # stateful: the endpoint's memory is out of reach
        self.checkpointed = self.mode == "stateless"
        self.session_id = uuid.uuid4().hex

    def _api_key(self) -> str:
        return self.env_key(self.api_key_env) if self.api_key_env else ""

    async def create_session(self, name: str) -> None:
        self._api_key()  # a missing key fails at start, not at the first message

    async def send_message(self, text: str) -> None:
        turn = {"role": "user", "content": valid_text(text)}
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [*self.log.messages, turn] if self.mode == "stateless" else [turn],
        }
        headers = {"Authorization": f"Bearer {self._api_key()}"} if self.api_key_env else {}
        if self.mode == "stateful":
            if self.session_header:
                headers[self.session_header] = self.session_id
            if self.session_field:
                body[self.session_field] = self.session_id
        with self.working():
            try:
                async with httpx.AsyncClient(timeout=self.reply_timeout) as client:
                    response = await client.post(
                        f"{self.base_url}/chat/completions", json=body, headers=headers
                    )
            except httpx.TimeoutException:
                raise AdapterError(f"openai-endpoint: no reply within {self.reply_timeout:.0f}s") from None
            except httpx.HTTPError as exc:
                raise AdapterError(f"openai-endpoint: request to {self.base_url} failed: {exc!r}") from None
        reply = self.record_reply(self.read_chat_reply(response, "choices", 0, "message", "content"))
        if self.mode == "stateless":
            self.log.append(turn, {"role": "assistant", "content": reply.text})

    async def start_new_conversation(self) -> None:
        self.log.reset()
        self.session_id = uuid.uuid4().hex

    async def destroy_session(self) -> None:
        """The endpoint's own memory is out of reach: a full reset here is a new conversation."""
        await self.start_new_conversation()

    def export_state(self) -> dict[str, Any]:
        return {**super().export_state(), "history_lines": self.log.lines, "session_id": self.session_id}

    def import_state(self, data: dict[str, Any]) -> None:
        super().import_state(data)
        if "history" in data:  # saved whole in state.json by an older version: moved to its file
            self.log.start_from(list(data["history"]))
        else:
            self.log.restore(int(data.get("history_lines", 0)))
        self.session_id = str(data.get("session_id", self.session_id))
