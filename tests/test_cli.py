"""The command line: the help of every command, the demo headless, validation, reports, config errors."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import json5
import pytest

from engine.config import ConfigError, parse_config
from mmb_tui.front_ends.cli import _parser, main

ROOT = Path(__file__).resolve().parent.parent


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command line's words before ``--help``: the program's, and each subcommand's (at any depth), as
    the parser declares them."""
    found = [path]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _commands(sub, (*path, name))
    return found


@pytest.mark.parametrize("command", _commands(_parser()), ids=lambda c: " ".join(("mmb-tui", *c)))
def test_help_works_for_the_program_and_every_command(
    command: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as leaving:
        main([*command, "--help"])
    assert leaving.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: mmb-tui") and "--config" in out


def test_the_help_lists_every_command_and_the_program_prints_it() -> None:
    commands = [c[0] for c in _commands(_parser()) if len(c) == 1]
    assert len(commands) >= 7  # run, validate, compare, report, judge-eval, regrade, serve-scripted
    done = subprocess.run(
        [sys.executable, "-m", "mmb_tui.front_ends.cli", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and done.stderr == ""
    assert all(command in done.stdout for command in commands) and "95%" in done.stdout


def _demo_config(tmp_path: Path) -> Path:
    """The shipped config with the demo's pace taken out (its latency is for people watching it)."""
    raw = json5.loads((ROOT / "config.jsonc").read_text())
    for model in raw["models"].values():
        model.pop("latency", None)
    (tmp_path / "config.jsonc").write_text(json.dumps(raw))
    shutil.copytree(ROOT / "benchmarks" / "demo", tmp_path / "benchmarks" / "demo")
    return tmp_path / "config.jsonc"


def test_demo_runs_headless_offline_with_full_coverage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _demo_config(tmp_path)
    assert main(["--config", str(config), "run", "demo", "--headless"]) == 0
    out = capsys.readouterr().out
    for marker in ("📋", "🔧", "👤", "🤖", "progress: phase"):  # the TUI's markers (issue 35)
        assert marker in out
    report = (tmp_path / "results" / "report.md").read_text()
    assert "demo: demo @ chatbot" in report
    assert "Check coverage: 6/6" in report
    assert main(["--config", str(config), "report", "demo"]) == 0
    assert "Check coverage: 6/6" in capsys.readouterr().out


def test_unknown_run_and_bad_config_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _demo_config(tmp_path)
    assert main(["--config", str(config), "run", "nope", "--headless"]) == 2
    assert "runs.nope" in capsys.readouterr().err
    config.write_text('{"runs": {"x": {"agent": "chatbot"}}}')
    assert main(["--config", str(config), "report"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "runs.x.benchmark" in err and "config.jsonc" in err


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ('{"persona": {"modle": "x"}}', "persona.modle"),
        ('{"compaction": {"max_tokens": 10, "trim_to_tokens": 20}}', "compaction"),
        ('{"models": {"m": {"base_url": "http://x"}}}', "models.m.model"),
        ('{"runs": {"r": {"benchmark": 3, "agent": "chatbot"}}}', "runs.r.benchmark"),
        ("{runs: ", "not valid JSONC"),
        ('{"hooks": {"echo_guard": "maybe"}}', "hooks.echo_guard"),
    ],
)
def test_config_errors_name_the_key(raw: str, fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment.replace(".", r"\.")):
        parse_config(raw, "config.jsonc")


def test_config_accepts_comments_and_trailing_commas() -> None:
    config = parse_config(
        '{\n // c\n "runs": {"a": {"benchmark": "demo", "agent": "chatbot", "model": "m",},},\n}'
    )
    assert config.runs["a"].adapter_options() == {"model": "m"}
    assert json.loads(config.model_dump_json())["runs"]["a"]["benchmark"] == "demo"


def test_validate_shipped_benchmarks(capsys: pytest.CaptureFixture[str]) -> None:
    paths = [str(p) for p in sorted((ROOT / "benchmarks").iterdir()) if (p / "benchmark.json").exists()]
    code = main(["validate", *paths])
    out = capsys.readouterr().out
    assert code == 0, out


def test_validate_takes_a_benchmarks_name_as_runs_name_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(ROOT / "benchmarks" / "demo", tmp_path / "mine" / "garden")
    (tmp_path / "config.jsonc").write_text(json.dumps({"benchmarks_dir": "mine", "runs": {}}))
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "garden"]) == 0  # the name a run's "benchmark" key gives
    assert "mine/garden: OK" in capsys.readouterr().out
    (tmp_path / "garden").mkdir()  # a folder of that name here is what was meant
    assert main(["validate", "garden"]) == 1
    assert "garden: " in capsys.readouterr().out
    assert main(["validate", "nowhere"]) == 1
    assert "nowhere: no such benchmark folder" in capsys.readouterr().out


def test_the_headless_printer_prints_an_error_once_not_again_in_the_status_and_the_end() -> None:
    import io

    from engine.events import ErrorOccurred, RunEnded, StatusChanged, TerminationReason
    from mmb_tui.front_ends.headless import HeadlessPrinter

    out = io.StringIO()
    printer = HeadlessPrinter(None, out)  # type: ignore[arg-type]  # no progress events are printed here
    reason = "model 'p': cannot reach http://127.0.0.1:9/v1"
    printer.on_event(
        "r", ErrorOccurred(message=f"{reason} (attempt 2/2; no retries left)", where="persona model")
    )
    printer.on_event("r", StatusChanged(status="waiting", reason=f"persona model: {reason}"))
    printer.on_event("r", RunEnded(reason=TerminationReason.WAITING, detail=f"persona model: {reason}"))
    assert out.getvalue().count("cannot reach") == 1
    assert "• waiting\n" in out.getvalue() and "run ended: waiting\n" in out.getvalue()


def test_the_shipped_demo_plays_at_a_pace_a_person_can_follow() -> None:
    """About a minute: the scripted models' latency times the calls the demo makes (measured in the run)."""
    config = parse_config((ROOT / "config.jsonc").read_text(), "config.jsonc", ROOT)
    demo = config.runs["demo"]
    persona, agent = config.models[demo.persona or ""], config.models[demo.model]
    assert persona.model == "scripted/persona" and agent.model == "scripted/recall"
    # the demo makes ~47 persona calls and ~19 agent calls (65 s measured with the shipped values)
    assert 40 <= 47 * persona.latency + 19 * agent.latency <= 120


def test_judge_eval_runs_offline_and_ends_with_the_agreement(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["judge-eval"]) == 0  # the shipped cases, beside the rules judge
    default = capsys.readouterr().out
    assert "judge_cases.jsonl: " in default.splitlines()[0] and "\n  kind " in default
    assert main(["judge-eval", "--cases", str(ROOT / "engine" / "models" / "judge_cases.jsonl")]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("agreement: ") and "%" in last and last == default.strip().splitlines()[-1]


def test_detach_without_runs_says_how_to_name_them(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--detach"]) == 2
    assert "mmb-tui --detach run RUN-ID" in capsys.readouterr().err
