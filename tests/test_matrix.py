"""Run groups in config.jsonc: ``repeats`` and ``matrices`` expanded into ordinary runs, errors naming the
declared key path, ``mmb-tui run --matrix NAME --headless`` and ``--repeats``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from engine_helpers import ROOT

from engine.config import ConfigError, parse_config
from engine.expand import Group, repeat_base
from engine.state import load_state
from mmb_tui.front_ends.cli import main

MATRIX = {
    "persona": {"model": "scripted/persona"},
    "runs": {"solo": {"benchmark": "demo", "agent": "chatbot", "model": "scripted/recall"}},
    "matrices": {
        "study": {
            "agents": ["chatbot", {"name": "recall", "agent": "chatbot", "model": "scripted/recall"}],
            "benchmarks": ["demo", "tests/benchmarks/full"],
            "repeats": 2,
            "max_reply_chars": 5000,
        }
    },
}


def test_a_run_with_repeats_becomes_numbered_runs_and_a_group() -> None:
    config = parse_config(
        json.dumps({"runs": {"x": {"benchmark": "demo", "agent": "chatbot", "repeats": 3}}})
    )
    assert list(config.runs) == ["x.r1", "x.r2", "x.r3"]
    assert config.groups == {"x": Group(("x.r1", "x.r2", "x.r3"))}
    assert all(
        run.benchmark == "demo" and "repeats" not in run.adapter_options() for run in config.runs.values()
    )
    assert repeat_base("x.r3") == "x" and repeat_base("x") is None
    single = parse_config(
        json.dumps({"runs": {"x": {"benchmark": "demo", "agent": "chatbot", "repeats": 1}}})
    )
    assert list(single.runs) == ["x"] and single.groups == {}


def test_repeats_given_on_the_command_line_override_the_config() -> None:
    raw = json.dumps({"runs": {"x": {"benchmark": "demo", "agent": "chatbot", "repeats": 3}}})
    assert list(parse_config(raw, repeats={"x": 2}).runs) == ["x.r1", "x.r2"]
    assert list(parse_config(raw, repeats={"x": 1}).runs) == ["x"]


def test_a_matrix_is_one_run_per_agent_benchmark_and_repeat() -> None:
    config = parse_config(json.dumps(MATRIX))
    cells = ["study.chatbot.demo", "study.chatbot.full", "study.recall.demo", "study.recall.full"]
    assert list(config.runs) == ["solo", *(f"{cell}.r{k}" for cell in cells for k in (1, 2))]
    assert config.groups["study"].cells == tuple(cells)
    assert config.groups["study.recall.full"] == Group(("study.recall.full.r1", "study.recall.full.r2"))
    run = config.runs["study.recall.full.r2"]
    assert (run.agent, run.benchmark, run.max_reply_chars) == ("chatbot", "tests/benchmarks/full", 5000)
    assert run.adapter_options() == {"model": "scripted/recall"}  # "name" is the id part, not a run key
    assert config.runs["study.chatbot.demo.r1"].adapter_options() == {}


def test_the_default_id_of_an_agent_names_its_model_and_unsafe_characters_are_replaced() -> None:
    raw = {
        "matrices": {
            "m": {"agents": [{"agent": "chatbot", "model": "scripted/recall"}], "benchmarks": ["demo"]}
        }
    }
    assert list(parse_config(json.dumps(raw)).runs) == ["m.chatbot-scripted-recall.demo"]


@pytest.mark.parametrize(
    ("matrix", "fragment"),
    [
        ({"agents": [{"model": "x"}], "benchmarks": ["demo"]}, "matrices.m.agents.0.agent: Field required"),
        ({"agents": [], "benchmarks": ["demo"]}, "matrices.m.agents"),
        ({"agents": ["chatbot"]}, "matrices.m.benchmarks: Field required"),
        ({"agents": ["chatbot"], "benchmarks": ["demo"], "repeats": 0}, "matrices.m.repeats"),
        (
            {"agents": ["chatbot", "chatbot"], "benchmarks": ["demo"]},
            "matrices.m.agents: two entries make the id part",
        ),
        ({"agents": ["chatbot"], "benchmarks": ["demo"], "agent": "x"}, "matrices.m.agent: not a matrix key"),
        (
            {"agents": [{"agent": "chatbot", "repeats": 2}], "benchmarks": ["demo"]},
            "matrices.m.agents.0.repeats: set by the matrix",
        ),
        (
            {"agents": [{"agent": "chatbot", "max_reply_chars": 5}], "benchmarks": ["demo"]},
            "matrices.m.agents.0.max_reply_chars",
        ),
        (
            {"agents": ["chatbot"], "benchmarks": ["demo"], "ignore_session_break": "often"},
            "matrices.m.ignore_session_break",
        ),
    ],
)
def test_matrix_errors_name_the_declared_key_path(matrix: dict[str, object], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment.replace(".", r"\.")):
        parse_config(json.dumps({"matrices": {"m": matrix}}))


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ({"runs": {"x": {"benchmark": "demo", "agent": "chatbot", "repeats": "3"}}}, "runs.x.repeats"),
        ({"runs": {"x": {"agent": "chatbot", "repeats": 2}}}, "runs.x.benchmark: Field required"),
        (
            {
                "runs": {"m.chatbot.demo": {"benchmark": "demo", "agent": "chatbot"}},
                "matrices": {"m": {"agents": ["chatbot"], "benchmarks": ["demo"]}},
            },
            "matrices.m: makes run 'm.chatbot.demo'",
        ),
        ({"matrices": ["m"]}, "matrices: must be an object"),
    ],
)
def test_repeat_and_clash_errors_name_the_key(raw: dict[str, object], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment.replace(".", r"\.")):
        parse_config(json.dumps(raw))


def _matrix_folder(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "benchmarks" / "demo", tmp_path / "benchmarks" / "demo")
    raw = {
        "persona": {"model": "scripted/persona"},
        "runs": {"solo": {"benchmark": "demo", "agent": "chatbot", "model": "scripted/recall"}},
        "matrices": {
            "pair": {
                "agents": [{"agent": "chatbot", "model": "scripted/recall"}, "fixture_agents:ForgetfulAgent"],
                "benchmarks": ["demo"],
            }
        },
    }
    (tmp_path / "config.jsonc").write_text(json.dumps(raw))
    return tmp_path / "config.jsonc"


def test_run_matrix_headless_plays_every_run_of_the_matrix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _matrix_folder(tmp_path)
    assert main(["--config", str(config), "run", "--matrix", "pair", "--headless"]) == 0
    out = capsys.readouterr().out
    ids = ["pair.chatbot-scripted-recall.demo", "pair.fixture_agents-ForgetfulAgent.demo"]
    for run_id in ids:
        assert f"[{run_id}]" in out
        state = load_state(tmp_path / "results" / run_id / "state.json")
        assert state is not None and state.finished and len(state.evaluations) == 6
    assert not (tmp_path / "results" / "solo").exists()
    report = (tmp_path / "results" / "report.md").read_text()
    assert report.count("## ") == 2 and "Summary of" not in report  # one run per cell: no summary
    assert main(["--config", str(config), "compare", "pair"]) == 0
    table = capsys.readouterr().out
    assert all(any(line.startswith(run_id) for line in table.splitlines()) for run_id in ids)


def test_unknown_matrix_and_run_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _matrix_folder(tmp_path)
    assert main(["--config", str(config), "run", "--matrix", "nope", "--headless"]) == 2
    assert "matrices.nope: no such matrix (have: pair)" in capsys.readouterr().err
    assert main(["--config", str(config), "run", "nope", "--headless"]) == 2
    err = capsys.readouterr().err
    assert "runs.nope: no such run or group" in err and err.count("\n") == 1
    assert main(["--config", str(config), "run", "--headless"]) == 2
    assert main(["--config", str(config), "run", "solo", "--repeats", "0", "--headless"]) == 2
