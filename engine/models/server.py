"""An OpenAI-compatible HTTP server for the scripted models, to drive real agents and test the SDK path.

``POST /v1/chat/completions`` (JSON or SSE with ``stream: true``), ``GET /v1/models``, ``GET /health``.
The ``model`` field is a scripted name, possibly with a fault plan (``scripted/recall?faults=1:429``), or a
config key whose spec is scripted. Faults are counted per model-name string, so a client sees the plan in
order; a transport fault's response is ``faults.py``'s, the one a call in process fails with (a hang lasts
``hang_seconds``, then a 504). Any ``Authorization`` is accepted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import signal
import time
import uuid
from collections.abc import Iterator
from typing import Any

from aiohttp import web

from engine.config import Config, ConfigError, load_config
from engine.models.base import Completion, ModelError, Usage
from engine.models.faults import TRANSPORT_FAULTS, FaultyModel
from engine.models.prompt_usage import PrefixCache
from engine.models.registry import SCRIPTED_MODELS, make_scripted, scripted_spec

log = logging.getLogger(__name__)

DEFAULT_HANG_SECONDS = 600.0
MAX_SERVED = 100_000  # usages kept for a test or a bench script to read (``endpoints_of(app).served``)
_ARGUMENT_CHUNK = 16  # characters of tool-call arguments per SSE delta


class _Endpoints:
    """One FaultyModel per requested model-name string, so fault counters follow the name."""

    def __init__(self, config: Config | None, hang_seconds: float) -> None:
        self.config = config
        self.hang_seconds = hang_seconds
        self._models: dict[str, FaultyModel] = {}
        self.caches: dict[str, PrefixCache] = {}  # per model name: usage as a prefix-caching provider's
        self.served: list[Usage] = []  # the usage of every answered request, in order (the latest MAX_SERVED)

    def get(self, name: str) -> FaultyModel:
        if name not in self._models:
            scripted = scripted_spec(name, self.config)
            if scripted is None:
                known = ", ".join(self.names())
                raise ModelError(f"model {name!r} is not served here (scripted models: {known})")
            model = make_scripted(scripted[0], scripted[1])
            model.name = name
            model.hang_seconds = self.hang_seconds  # a hang ends, late, with a 504
            self._models[name] = model
        return self._models[name]

    def names(self) -> list[str]:
        configured = [
            key for key in (self.config.models if self.config else {}) if scripted_spec(key, self.config)
        ]
        return list(SCRIPTED_MODELS) + sorted(configured)


_ENDPOINTS = web.AppKey("endpoints", _Endpoints)


def _error(status: int, message: str, kind: str, code: str | None = None, **headers: str) -> web.Response:
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return web.json_response(body, status=status, headers=headers or None)


def _usage_json(completion: Completion) -> dict[str, Any]:
    usage = completion.usage
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
    }


def _finish_reason(completion: Completion) -> str:
    return "tool_calls" if completion.tool_calls else "stop"


def completion_json(completion: Completion, model: str) -> dict[str, Any]:
    """A non-streaming ``chat.completion`` body."""
    message: dict[str, Any] = completion.as_message()
    if completion.reasoning:
        message["reasoning_content"] = completion.reasoning
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(completion)}],
        "usage": _usage_json(completion),
    }


def stream_chunks(completion: Completion, model: str, include_usage: bool) -> Iterator[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects of a streamed answer, in order (without ``[DONE]``)."""
    base = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    for piece in re.findall(r"\s*\S+\s*", completion.reasoning or ""):
        yield chunk({"reasoning_content": piece})
    for piece in re.findall(r"\s*\S+\s*", completion.content or ""):
        yield chunk({"content": piece})
    for index, call in enumerate(completion.tool_calls):
        head = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        yield chunk({"tool_calls": [head]})
        for start in range(0, len(call.arguments), _ARGUMENT_CHUNK):
            piece = call.arguments[start : start + _ARGUMENT_CHUNK]
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, _finish_reason(completion))
    if include_usage:
        yield {**base, "choices": [], "usage": _usage_json(completion)}


async def _stream(
    request: web.Request, completion: Completion, model: str, include_usage: bool
) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)
    for chunk in stream_chunks(completion, model, include_usage):
        await response.write(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode())
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


async def chat_completions(request: web.Request) -> web.StreamResponse:
    """``POST /v1/chat/completions``: answer with the scripted model, or serve its planned fault."""
    endpoints = request.app[_ENDPOINTS]
    try:
        body = await request.json()
    except ValueError:
        return _error(400, "the request body is not JSON", "invalid_request_error")
    model_name, messages, tools = body.get("model"), body.get("messages"), body.get("tools")
    if not isinstance(model_name, str) or not isinstance(messages, list):
        return _error(400, "'model' (string) and 'messages' (list) are required", "invalid_request_error")
    try:
        model = endpoints.get(model_name)
    except ModelError as exc:
        return _error(404, str(exc), "invalid_request_error", "model_not_found")
    kind = model.next_fault()
    if kind is not None and kind in TRANSPORT_FAULTS:  # served as a provider would fail (``faults.py``)
        fault = await model.transport(kind)
        return web.Response(
            status=fault.status, text=fault.body, content_type="application/json", headers=fault.headers
        )
    try:
        completion = await model.answer(kind, messages, tools if isinstance(tools, list) else None)
    except Exception as exc:  # noqa: BLE001 - a scripted model bug is the client's 500, not a dead server
        log.exception("scripted model %s failed", model_name)
        return _error(500, f"scripted model failed: {type(exc).__name__}: {exc}", "server_error")
    # usage as a prefix-caching provider reports it: counted from what was sent, the prefix shared with the
    # previous request of this model cached
    cache = endpoints.caches.setdefault(model_name, PrefixCache())
    usage = cache.usage(messages, tools if isinstance(tools, list) else None, completion)
    completion = completion.model_copy(update={"usage": usage})
    endpoints.served = [*endpoints.served[-MAX_SERVED + 1 :], usage]
    if body.get("stream"):
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        return await _stream(request, completion, model_name, include_usage)
    return web.json_response(completion_json(completion, model_name))


async def list_models(request: web.Request) -> web.Response:
    """``GET /v1/models``: the scripted names served here."""
    names = request.app[_ENDPOINTS].names()
    data = [{"id": name, "object": "model", "created": 0, "owned_by": "mmb-scripted"} for name in names]
    return web.json_response({"object": "list", "data": data})


async def health(request: web.Request) -> web.Response:
    """``GET /health``."""
    return web.json_response({"status": "ok"})


def make_app(config: Config | None = None, hang_seconds: float = DEFAULT_HANG_SECONDS) -> web.Application:
    """The aiohttp application (no socket yet)."""
    app = web.Application()
    app[_ENDPOINTS] = _Endpoints(config, hang_seconds)
    app.router.add_post("/v1/chat/completions", chat_completions)
    app.router.add_get("/v1/models", list_models)
    app.router.add_get("/health", health)
    return app


def served_usage(runner: web.AppRunner) -> list[Usage]:
    """The usage of every request a server started by ``start_server`` answered, in order."""
    return list(runner.app[_ENDPOINTS].served)


async def start_server(
    host: str, port: int, config: Config | None = None, *, hang_seconds: float = DEFAULT_HANG_SECONDS
) -> tuple[web.AppRunner, int]:
    """Serve on ``host:port`` (0 = a free port); returns the runner (``await runner.cleanup()``) and the port."""
    runner = web.AppRunner(
        make_app(config, hang_seconds), handler_cancellation=True, shutdown_timeout=1.0, access_log=None
    )
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError:
        await runner.cleanup()
        raise
    bound = port
    for address in runner.addresses:
        if isinstance(address, tuple):
            bound = int(address[1])
            break
    return runner, bound


async def _serve_forever(host: str, port: int, config: Config | None) -> None:
    runner, bound = await start_server(host, port, config)
    print(f"Scripted models served at http://{host}:{bound}/v1 (Ctrl-C to stop)", flush=True)
    stop = asyncio.Event()
    with contextlib.suppress(NotImplementedError):  # no signal handlers on Windows loops
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


def main_serve(port: int, host: str = "127.0.0.1", config_path: str | None = None) -> int:
    """Run the server until Ctrl-C (or SIGTERM); exit status 1 (with a one-line error) if it cannot start."""
    try:
        config = load_config(config_path) if config_path else None
    except ConfigError as exc:
        print(f"error: {exc}", flush=True)
        return 1
    try:
        asyncio.run(_serve_forever(host, port, config))
    except KeyboardInterrupt:
        return 0
    except OSError as exc:
        print(f"error: cannot serve on {host}:{port}: {exc.strerror or exc}", flush=True)
        return 1
    return 0
