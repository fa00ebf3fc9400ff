"""A config that cannot work is refused when it is read, on one line naming every bad key (issue 23, item 10):
a model's ``base_url`` that is no http(s) URL (it used to pass and fail at the first call, after every retry),
and all the bad keys of a run at once, the engine's own (``engine/config.py``) and the adapter's
(``adapters/options.py`` ``every_problem``), where only the first used to be named; a run id that is not a
name (issue 32, item 6: ``"../../x"`` played and wrote its folder and a report outside ``results/``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_helpers import make_config
from pydantic import ValidationError

from engine.config import Config, ConfigError, is_http_url, load_config, parse_config, run_id_problem
from engine.run.build import check_run


def _model(base_url: str) -> str:
    return json.dumps({"models": {"m": {"model": "x", "base_url": base_url}}})


@pytest.mark.parametrize(
    "base_url",
    [
        "not a url",
        "localhost:8080/v1",  # no scheme: read as scheme "localhost"
        "127.0.0.1:8080/v1",
        "ftp://example.com/v1",
        "http://",
        "https:///v1",
        "http://exa mple.com/v1",
        "http://example.com:99999/v1",
        "http://example.com:port/v1",
        "",
    ],
)
def test_a_base_url_that_is_no_http_url_is_refused_when_the_config_is_read(base_url: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_config(_model(base_url), "config.jsonc")
    message = str(refused.value)
    assert message.startswith("config.jsonc: models.m.base_url: must be an http(s) URL with a host"), message
    assert repr(base_url) in message and "\n" not in message


@pytest.mark.parametrize(
    "base_url",
    [
        "http://127.0.0.1:8080/v1",
        "https://api.deepseek.com",
        "http://localhost/v1",
        "http://[::1]:9000/v1",
        "https://user:secret@example.com/v1",
    ],
)
def test_http_urls_with_a_host_pass(base_url: str) -> None:
    assert is_http_url(base_url)
    assert parse_config(_model(base_url)).models["m"].base_url == base_url


def test_the_refusal_names_the_config_file(tmp_path: Path) -> None:
    path = tmp_path / "config.jsonc"
    path.write_text('{"models": {"m": {"model": "x", "base_url": "not a url"}}}', encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"^{path}: models\.m\.base_url: "):
        load_config(path)


def test_every_bad_engine_key_of_a_run_is_named_on_one_line() -> None:
    raw = {
        "runs": {"r": {"benchmark": "b", "agent": "a", "max_reply_chars": 5, "ignore_session_break": "often"}}
    }
    with pytest.raises(ConfigError) as refused:
        parse_config(json.dumps(raw), "config.jsonc")
    message = str(refused.value)
    assert "runs.r.max_reply_chars: " in message and "runs.r.ignore_session_break: " in message, message
    assert "\n" not in message and message.count("config.jsonc") == 1


def test_a_bad_key_of_a_repeated_run_is_named_once_where_it_was_written() -> None:
    raw = {"runs": {"r": {"benchmark": "b", "agent": "a", "repeats": 3, "max_reply_chars": 5}}}
    with pytest.raises(ConfigError) as refused:
        parse_config(json.dumps(raw))
    assert str(refused.value).count("runs.r.max_reply_chars") == 1, str(refused.value)


@pytest.mark.parametrize(
    ("agent", "keys", "named"),
    [
        (
            "hermes",
            {"hermes_bogus": 1, "reply_timeout": 0, "hermes_context_length": 5},
            ["hermes_bogus: unknown option", "reply_timeout: must be", "hermes_context_length: must be"],
        ),
        (
            "openclaw",
            {"openclaw_dreaming": 1, "openclaw_host_tools": ["exec"], "start_timeout": "soon"},
            ["openclaw_dreaming: must be", "openclaw_host_tools: must be", "start_timeout: must be"],
        ),
        (
            "hermes",
            {"agent_disk_mb": 0, "reply_timeout": 0},
            ["agent_disk_mb: must be between 1", "reply_timeout"],
        ),
        ("openclaw", {"agent_disk_mb": "2 GB"}, ["agent_disk_mb: must be an integer, got '2 GB'"]),
        ("hermes", {"agent_disk_mb": 1.5}, ["agent_disk_mb: must be an integer, got 1.5"]),
        ("chatbot", {"modle": "m", "system_promt": "x"}, ["modle, system_promt: unknown options"]),
        ("chatbot", {"modle": "m", "system_prompt": 5}, ["modle: unknown option", "system_prompt: must be"]),
        (
            "openclaw",
            {"openclaw_heartbeat": "often", "openclaw_dreaming": 1},
            ["openclaw_heartbeat: a duration", "openclaw_dreaming: must be"],
        ),
        (
            "openai-endpoint",
            {"base_url": "http://127.0.0.1:9/v1", "model": "m", "mode": "both", "reply_timeout": 0},
            ["mode: must be", "reply_timeout: must be"],
        ),
    ],
)
def test_every_bad_adapter_key_of_a_run_is_named_at_once(
    tmp_path: Path, agent: str, keys: dict[str, object], named: list[str]
) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": agent, **keys}})
    reason = check_run(config, "r")
    assert reason.startswith("runs.r: "), reason
    assert all(part in reason for part in named) and "\n" not in reason, reason
    assert reason.count("; ") == len(named) - 1, reason
    assert not (tmp_path / "results").exists()  # refused before anything was written


def test_a_good_run_still_builds(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": "hermes", "hermes_host_tools": True}})
    assert check_run(config, "r") == ""
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": "openclaw", "agent_disk_mb": 512}})
    assert check_run(config, "r") == ""


# --- run ids are names (issue 32, item 6) ------------------------------------------------------------------


@pytest.mark.parametrize(
    "run_id",
    [
        "../../x",
        "..",
        ".",
        ".hidden",
        "a/b",
        "/etc/cron.d/x",
        "results/../../x",
        "a\\b",
        "",
        "my run",
        "tab\there",
        "new\nline",
        "nul\x00",
        "c:drive",
        "é-accent",
        "x" * 201,
    ],
)
def test_a_run_id_that_is_not_a_name_is_refused_when_the_config_is_read(tmp_path: Path, run_id: str) -> None:
    raw = {"runs": {"fine": {"benchmark": "b", "agent": "a"}, run_id: {"benchmark": "b", "agent": "a"}}}
    path = tmp_path / "config.jsonc"
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: runs: the run id {run_id!r} is not a name: "), message
    assert "\n" not in message and "not starting with '.'" in message
    assert not (tmp_path / "results").exists() and sorted(p.name for p in tmp_path.iterdir()) == [
        "config.jsonc"
    ]


def test_every_bad_run_id_is_named_at_once_and_a_repeated_one_as_written() -> None:
    raw = {
        "runs": {
            "../up": {"benchmark": "b", "agent": "a", "repeats": 3},
            "ok": {"benchmark": "b", "agent": "a"},
            "a/b": {"benchmark": "b", "agent": "a"},
        }
    }
    with pytest.raises(ConfigError) as refused:
        parse_config(json.dumps(raw))
    message = str(refused.value)
    assert "'../up'" in message and "'a/b'" in message and ".r1" not in message, message
    assert message.count("runs: the run id") == 2 and "\n" not in message


@pytest.mark.parametrize(
    "run_id", ["r", "hermes-compact-1", "a.b_c-9", "x..y", "1", "_u", "-dash", "x" * 200]
)
def test_run_ids_that_are_names_pass(run_id: str) -> None:
    raw = {"runs": {run_id: {"benchmark": "b", "agent": "a", "repeats": 2}}}
    config = parse_config(json.dumps(raw))
    assert sorted(config.runs) == [f"{run_id}.r1", f"{run_id}.r2"]


def test_the_ids_repeats_and_matrices_make_are_names_whatever_they_are_made_of() -> None:
    # names, models and benchmark paths with separators, dots and spaces: each becomes a part of a run id
    raw = {
        "runs": {"base": {"benchmark": "../../b", "agent": "a", "repeats": 2}},
        "matrices": {
            "study": {
                "agents": [
                    {"agent": "hermes", "model": "../../etc/passwd"},
                    {"agent": "chatbot", "name": ".."},
                    {"agent": "openclaw", "model": "deepseek/v3:free beta"},
                    "../a",
                ],
                "benchmarks": ["../../bench", "/abs/path/..", "./max", "multi day"],
                "repeats": 2,
            }
        },
    }
    config = parse_config(json.dumps(raw))
    assert len(config.runs) == 2 + 4 * 4 * 2
    assert all(run_id_problem(run_id) == "" for run_id in config.runs), sorted(config.runs)
    assert all(not run_id.startswith(".") and "/" not in run_id for run_id in config.runs)


def test_a_run_id_that_is_not_a_name_is_refused_even_without_the_reader() -> None:
    with pytest.raises(ValidationError, match="the run id '../x' is not a name"):
        Config.model_validate({"runs": {"../x": {"benchmark": "b", "agent": "a"}}})
