"""The one wrapper around the ``openai`` SDK: any OpenAI-compatible endpoint as a ChatModel.

The SDK's own retries are off (``max_retries=0``); this wrapper retries 429 (honouring ``Retry-After``),
5xx, timeouts, connection errors and malformed answers (a 200 whose body is not JSON or has no choices) with
exponential backoff and jitter, then raises a one-line ModelError naming the model; ``on_retry`` (set by the
run) is told of each retry before its wait. Answers are cleaned on input: a lone surrogate in the text
becomes U+FFFD.
Keys are only ever read from the environment variable the spec names and never appear in messages.
"""

from __future__ import annotations

import asyncio
import email.utils
import os
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

import openai

from engine.config import ModelSpec
from engine.models.base import Completion, Message, ModelError, Retry, Role, ToolCall, ToolSchema, Usage
from engine.models.tokens import count_text, count_tokens
from engine.models.usage import UsageMeter
from engine.sanitize import printable, valid_text

BACKOFF_BASE = 1.0  # seconds before the first retry
BACKOFF_CAP = 30.0  # longest backoff between two attempts
RETRY_AFTER_CAP = 60.0  # longest Retry-After we honour
DUMMY_KEY = "unused"  # local servers without authentication
_REASON_MAX = 200

Sleep = Callable[[float], Awaitable[None]]


class _Retryable(Exception):
    """A failed attempt worth another try; ``delay`` is the server's Retry-After, if any."""

    def __init__(self, reason: str, delay: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.delay = delay


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` / ``Retry-After`` (seconds or an HTTP date), capped; None if absent."""
    if headers is None:
        return None
    try:
        if headers.get("retry-after-ms"):
            return min(RETRY_AFTER_CAP, max(0.0, float(headers["retry-after-ms"]) / 1000))
        value = headers.get("retry-after")
        if not value:
            return None
        try:
            seconds = float(value)
        except ValueError:
            seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
        return min(RETRY_AFTER_CAP, max(0.0, seconds))
    except (TypeError, ValueError, OverflowError):
        return None


def longest_call(spec: ModelSpec) -> float:
    """The longest one ``complete`` may take under ``spec`` (seconds): each of its ``max_retries + 1``
    attempts timing out after ``timeout``, and each wait between two at its longest (the capped backoff with
    its jitter, or a Retry-After up to its cap). Whoever waits for such a call waits at least this long, or
    cuts short the retries the entry asks for."""
    attempts = spec.max_retries + 1
    waits = sum(
        max(min(BACKOFF_CAP, BACKOFF_BASE * 2 ** (attempt - 1)) * 1.25, RETRY_AFTER_CAP)
        for attempt in range(1, attempts)
    )
    return attempts * spec.timeout + waits


class OpenAIModel:
    """A ChatModel over ``openai.AsyncOpenAI`` with its own retry loop and usage accounting."""

    def __init__(
        self,
        name: str,
        spec: ModelSpec,
        api_key: str,
        role: Role,
        meter: UsageMeter | None = None,
        *,
        sleep: Sleep = asyncio.sleep,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.name = name
        self.spec = spec
        self.role = role
        self.meter = meter
        self._api_key = api_key
        self._sleep = sleep
        self._jitter = jitter
        self.on_retry: Callable[[Retry], None] | None = None  # told of each retry (the run records it)
        self._client = openai.AsyncOpenAI(
            base_url=spec.base_url, api_key=api_key, max_retries=0, timeout=spec.timeout
        )

    @property
    def longest_call(self) -> float:
        """The longest one ``complete`` may take with this entry's ``timeout`` and ``max_retries``."""
        return longest_call(self.spec)

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._client.close()

    async def complete(self, messages: list[Message], tools: list[ToolSchema] | None = None) -> Completion:
        """One completion, retried on transient failures; ModelError once the retries are spent."""
        attempts = self.spec.max_retries + 1
        for attempt in range(1, attempts + 1):
            try:
                completion = await self._attempt(messages, tools)
            except _Retryable as exc:
                if attempt == attempts:
                    raise ModelError(
                        f"model {self.name!r}: {exc.reason} (after {attempts} attempts)"
                    ) from None
                delay = exc.delay if exc.delay is not None else self._backoff(attempt)
                if self.on_retry is not None:
                    self.on_retry(
                        Retry(attempt=attempt + 1, attempts=attempts, delay=delay, reason=exc.reason)
                    )
                await self._sleep(delay)
                continue
            if self.meter is not None:
                self.meter.add(self.role, completion.usage)
            return completion
        raise AssertionError("unreachable")

    def _backoff(self, attempt: int) -> float:
        delay = min(BACKOFF_CAP, BACKOFF_BASE * 2 ** (attempt - 1))
        return delay * (1 + 0.25 * self._jitter())

    def _reason(self, text: str) -> str:
        line = printable(" ".join(str(text).split()), newlines=False)  # a server's error text is data
        if len(self._api_key) >= 4:
            line = line.replace(self._api_key, "***")
        return line if len(line) <= _REASON_MAX else line[: _REASON_MAX - 1] + "…"

    def _request(self, messages: list[Message], tools: list[ToolSchema] | None) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.spec.model, "messages": messages}
        if tools:
            request["tools"] = tools
        if self.spec.temperature is not None:
            request["temperature"] = self.spec.temperature
        if self.spec.max_tokens is not None:
            request["max_tokens"] = self.spec.max_tokens
        return request

    async def _attempt(self, messages: list[Message], tools: list[ToolSchema] | None) -> Completion:
        try:
            response = await self._client.chat.completions.create(**self._request(messages, tools))
        except openai.APITimeoutError:
            raise _Retryable(f"timed out after {self.spec.timeout:g}s") from None
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise _Retryable(self._reason(f"cannot reach {self.spec.base_url}: {cause}")) from None
        except openai.APIStatusError as exc:
            reason = self._reason(f"HTTP {exc.status_code}: {exc.message}")
            if exc.status_code in (408, 429) or exc.status_code >= 500:
                raise _Retryable(reason, retry_after_seconds(exc.response.headers)) from None
            if exc.status_code in (401, 403) and self.spec.api_key_env:
                reason += f" (check {self.spec.api_key_env})"
            raise ModelError(f"model {self.name!r}: {reason}") from None
        except openai.APIResponseValidationError as exc:
            raise _Retryable(self._reason(f"malformed response: {exc.message}")) from None
        except ValueError as exc:  # a 200 whose body is not JSON (the SDK's json.JSONDecodeError)
            raise _Retryable(self._reason(f"malformed response: the body is not JSON: {exc}")) from None
        try:
            return self._parse(response, messages)
        except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
            # a 200 with JSON of the wrong shape (a choice without a message, a string for a list …)
            raise _Retryable(self._reason(f"malformed response: {type(exc).__name__}: {exc}")) from None

    def _parse(self, response: Any, messages: list[Message]) -> Completion:
        choices = getattr(response, "choices", None)
        if not choices or not isinstance(choices, list):
            raise _Retryable("malformed response: no choices")
        message = choices[0].message
        extra = message.model_extra or {}
        reasoning = extra.get("reasoning_content") or extra.get("reasoning")
        tool_calls = [
            ToolCall(
                id=call.id,
                name=valid_text(call.function.name),
                arguments=valid_text(call.function.arguments or ""),
            )
            for call in message.tool_calls or []
            if getattr(call, "function", None) is not None
        ]
        content = message.content
        if content is not None and not isinstance(content, str):
            raise _Retryable(f"malformed response: message content is {type(content).__name__}, not text")
        content = valid_text(content) if content is not None else None
        reasoning = valid_text(reasoning) if isinstance(reasoning, str) else None
        usage = response.usage
        if usage is not None:
            counted = provider_usage(usage)
        else:  # some servers omit usage: estimate it
            spent = count_text(content) + sum(count_text(c.arguments) for c in tool_calls)
            counted = Usage(prompt_tokens=count_tokens(messages), completion_tokens=spent)
        return Completion(
            content=content,
            reasoning=reasoning or None,
            tool_calls=tool_calls,
            usage=counted,
        )


def make_openai_model(
    name: str, spec: ModelSpec, role: Role, meter: UsageMeter | None = None, *, sleep: Sleep = asyncio.sleep
) -> OpenAIModel:
    """An OpenAIModel with its key from ``os.environ[spec.api_key_env]`` (a dummy key when none is named)."""
    env = spec.api_key_env
    if env is None:
        api_key = DUMMY_KEY
    else:
        api_key = os.environ.get(env, "")
        if not api_key:
            raise ModelError(f"model {name!r}: environment variable {env} is not set")
    return OpenAIModel(name, spec, api_key, role, meter, sleep=sleep)


def _field(obj: Any, name: str) -> Any:
    """A usage field by name, declared by the SDK or extra (``prompt_cache_hit_tokens``); None when absent."""
    value = getattr(obj, name, None)
    if value is None and isinstance(getattr(obj, "model_extra", None), dict):
        value = obj.model_extra.get(name)
    if value is None and isinstance(obj, dict):
        value = obj.get(name)
    return value


def provider_usage(usage: Any) -> Usage:
    """A response's usage as the provider bills it: every input token, and the part served from its prefix
    cache, in any of the shapes providers report it — OpenAI's ``prompt_tokens_details.cached_tokens``,
    DeepSeek's ``prompt_cache_hit_tokens`` (``prompt_tokens`` = hits + misses), an Anthropic-compatible
    gateway's ``cache_read_input_tokens`` (added to ``prompt_tokens`` where that leaves them out)."""
    prompt = int(_field(usage, "prompt_tokens") or 0)
    details = _field(usage, "prompt_tokens_details")
    cached = _field(details, "cached_tokens") if details is not None else None
    if cached is None:
        cached = _field(usage, "prompt_cache_hit_tokens")
    if cached is None:
        cached = _field(usage, "cache_read_input_tokens")
        if cached is not None and int(cached) > 0 and _field(usage, "prompt_cache_miss_tokens") is None:
            if prompt < int(cached):  # Anthropic's input_tokens leave cache reads and writes out
                prompt += int(cached) + int(_field(usage, "cache_creation_input_tokens") or 0)
    cached_tokens = min(int(cached or 0), prompt)
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=int(_field(usage, "completion_tokens") or 0),
        cached_tokens=cached_tokens,
    )
