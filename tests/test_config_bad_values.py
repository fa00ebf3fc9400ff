"""Config values that parse but cannot work are one line naming the key, before anything plays: a key given
twice in one object (the first run definition was dropped without a word), an infinite or NaN latency or timeout
(Infinity hung the run after its first message), JSONC nested too deeply for the parser."""

from __future__ import annotations

import pytest

from engine.config import ConfigError, parse_config

RUN = '{"benchmark": "demo", "agent": "chatbot"}'


@pytest.mark.parametrize(
    "text",
    [
        f'{{"runs": {{"a": {RUN},\n "a": {RUN}}}}}',
        f"{{runs: {{a: {RUN},\n  b: {RUN},\n  a: {RUN}}}}}",
        f"{{runs: {{'a': {RUN},\n  'a': {RUN}}}}}",
        '{"models": {"m": {"model": "scripted/persona", "latency": 1, "latency": 2}}, "runs": {}}',
        '{"persona": {"model": "scripted/persona"},\n "persona": {"model": "scripted/recall"}, "runs": {}}',
    ],
    ids=["run id, quoted", "run id, bare", "run id, single quotes", "a model's key", "a top-level key"],
)
def test_a_key_given_twice_in_one_object_is_refused_naming_it(text: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(text)
    message = str(caught.value)
    assert "\n" not in message and "is given twice in one object" in message
    assert "the first would be dropped" in message


def test_the_same_key_in_two_objects_is_no_duplicate() -> None:
    text = f'{{"runs": {{"a": {RUN}, "b": {RUN}}}, "persona": {{"model": "scripted/persona"}}}}'
    assert set(parse_config(text).runs) == {"a", "b"}


@pytest.mark.parametrize("key", ["latency", "timeout"])
@pytest.mark.parametrize("value", ["Infinity", "-Infinity", "NaN"])
def test_a_number_that_is_not_finite_is_refused_at_its_key(key: str, value: str) -> None:
    text = f'{{"models": {{"slow": {{"model": "scripted/persona", "{key}": {value}}}}}, "runs": {{}}}}'
    with pytest.raises(ConfigError) as caught:
        parse_config(text)
    assert f"models.slow.{key}:" in str(caught.value) and "\n" not in str(caught.value)


def test_a_latency_over_an_hour_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"models\.slow\.latency: .*3600"):
        parse_config('{"models": {"slow": {"model": "scripted/persona", "latency": 1e9}}, "runs": {}}')


def test_jsonc_nested_too_deeply_is_one_line() -> None:
    with pytest.raises(ConfigError, match="not valid JSONC: nested too deeply"):
        parse_config('{"runs": {}, "x": ' + "[" * 50_000 + "]" * 50_000 + "}")
