"""A model server for the real-agent tests that can force any tool call: ``scripted/agent`` plus one command.

A user message ``MMB-CALL <tool> <json arguments>`` makes the model call ``<tool>`` with those arguments —
whether or not the agent offered that tool — and, once the tool result is back, reply
``Tool result: <the result>`` (the results are kept in ``tool_results``). Every other message is answered
by ``scripted/agent``. The tool names each request offered are kept in ``offered`` (one set per request), the
``Authorization`` header of each in ``authorizations``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from aiohttp import web

from engine.models.base import Completion, ToolCall, Usage
from engine.models.scripted_agent import last_user_index, respond, text_of
from engine.models.server import completion_json, stream_chunks

_CALL = re.compile(r"MMB-CALL (?P<tool>[\w.-]+) (?P<args>\{.*\})", re.S)
_STAMPED = re.compile(r"^\s*\[[^\]\n]{4,80}\]")  # a user's own message, as the agent stamps it


def _last_turn(messages: list[dict[str, Any]]) -> int:
    """The index of the latest message the user wrote: OpenClaw stamps them (``[Tue 2026-12-01 01:31 UTC]``)
    and its own follow-up prompts ("The previous assistant turn ...") are not."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "user" and _STAMPED.match(text_of(messages[index].get("content"))):
            return index
    return last_user_index(messages)  # an agent that does not stamp its user's messages (Hermes)


class ToolModelServer:
    """``await start()`` -> base URL; ``await stop()``."""

    def __init__(self) -> None:
        self.offered: list[set[str]] = []
        self.tool_results: list[str] = []  # what the agent answered to the forced calls
        self.authorizations: list[str] = []
        self._runner: web.AppRunner | None = None
        self._calls = 0
        self.base_url = ""

    async def start(self) -> str:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)  # Letta Code looks its model up there first
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = next(a[1] for a in self._runner.addresses if isinstance(a, tuple))
        return f"http://127.0.0.1:{port}/v1"

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def _answer(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Completion:
        index = _last_turn(messages)
        match = _CALL.search(text_of(messages[index].get("content"))) if index >= 0 else None
        if match is None:
            step = respond(messages, tools)
        else:
            results = [text_of(m.get("content")) for m in messages[index + 1 :] if m.get("role") == "tool"]
            if results:
                self.tool_results.append(results[-1])
                step = "Tool result: " + results[-1][:2000]
            else:
                self._calls += 1
                step = ToolCall(id=f"call_force_{self._calls}", name=match["tool"], arguments=match["args"])
        if isinstance(step, ToolCall):
            return Completion(
                content=None, tool_calls=[step], usage=Usage(prompt_tokens=1, completion_tokens=1)
            )
        return Completion(content=step, usage=Usage(prompt_tokens=1, completion_tokens=1))

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "tools", "object": "model"}]})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.authorizations.append(request.headers.get("Authorization", ""))
        tools = body.get("tools") if isinstance(body.get("tools"), list) else None
        self.offered.append({str(t.get("function", {}).get("name")) for t in tools or []})
        completion = self._answer(body.get("messages") or [], tools)
        model = str(body.get("model"))
        if not body.get("stream"):
            return web.json_response(completion_json(completion, model))
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        for chunk in stream_chunks(completion, model, include_usage):
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response
