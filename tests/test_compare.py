"""``mmb-tui compare``: runs and groups from their saved state, the table with mean [95 % CI] and pass^k, and
the CSV and JSON exports holding the same figures, computed here from the runs' own grades and tokens."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import shutil
from pathlib import Path

import json5
import pytest
from compare_scene import CHECKS, SCORES, compare_folder, hold_as_playing
from engine_helpers import ROOT

from engine.benchmark.validate import load_benchmark
from engine.comparison.results import load_result
from engine.comparison.stats import bootstrap_ci
from engine.config import parse_config
from engine.events import EvaluationLogged, JudgeGraded
from engine.state import RunState, atomic_write, checkpoint_json, load_state
from mmb_tui.front_ends.cli import main

PRICES = {"demo-persona": {"input": 1.0, "output": 4.0}, "demo-recall": {"input": 0.5, "output": 2.0}}


def _demo_config(tmp_path: Path, prices: bool = False) -> Path:
    """The shipped config with the demo's pace taken out (its latency is for people watching it)."""
    raw = json5.loads((ROOT / "config.jsonc").read_text())
    for name, model in raw["models"].items():
        model.pop("latency", None)
        if prices and name in PRICES:
            model["price"] = PRICES[name]
    raw["runs"]["moody"] = {"benchmark": "demo", "agent": "repeat_agents:MoodyAgent", "repeats": 3}
    (tmp_path / "config.jsonc").write_text(json.dumps(raw))
    shutil.copytree(ROOT / "benchmarks" / "demo", tmp_path / "benchmarks" / "demo")
    return tmp_path / "config.jsonc"


def _states(tmp_path: Path, ids: list[str]) -> list[RunState]:
    states = [load_state(tmp_path / "results" / run_id / "state.json") for run_id in ids]
    return [s for s in states if s is not None]


def _score(state: RunState, checks: list[str]) -> float:
    return sum(state.evaluations[c].effective for c in checks if c in state.evaluations) / len(checks)


def test_demo_repeated_three_times_then_compared_prints_the_mean_its_interval_and_pass_k(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _demo_config(tmp_path)
    assert main(["--config", str(config), "run", "demo", "--repeats", "3", "--headless"]) == 0
    capsys.readouterr()
    assert main(["--config", str(config), "compare", "demo"]) == 0
    out = capsys.readouterr().out
    checks = [c.id for c in load_benchmark(tmp_path / "benchmarks" / "demo").checks()]
    states = _states(tmp_path, ["demo.r1", "demo.r2", "demo.r3"])
    assert len(states) == 3
    scores = [_score(s, checks) for s in states]
    low, high = bootstrap_ci(scores)
    right = [sum(1 for s in states if s.evaluations[c].effective >= 7) for c in checks]
    pass_k = [sum(math.comb(r, k) / math.comb(3, k) for r in right) / len(checks) for k in (1, 2, 3)]
    row = next(line for line in out.splitlines() if line.startswith("demo "))
    assert f"{sum(scores) / 3:.2f} [{low:.2f}, {high:.2f}]" in row
    assert " ".join(f"{v:.2f}" for v in pass_k) in row
    assert "18/18" in row
    assert "score [95% CI]" in out and "pass^k" in out


def test_exports_hold_the_same_figures_as_the_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _demo_config(tmp_path, prices=True)
    assert main(["--config", str(config), "run", "moody", "demo", "--headless"]) == 0
    out_csv, out_json = tmp_path / "c.csv", tmp_path / "c.json"
    assert (
        main(
            [
                "--config",
                str(config),
                "compare",
                "moody",
                "demo",
                "--csv",
                str(out_csv),
                "--json",
                str(out_json),
            ]
        )
        == 0
    )
    checks = load_benchmark(tmp_path / "benchmarks" / "demo").checks()
    ids = [c.id for c in checks]
    moody = _states(tmp_path, ["moody.r1", "moody.r2", "moody.r3"])
    demo = _states(tmp_path, ["demo"])
    data = {row["name"]: row for row in json.loads(out_json.read_text())}
    rows = list(csv.DictReader(io.StringIO(out_csv.read_text())))
    headline = {row["name"]: row for row in rows if row["check_type"] == "ALL"}
    for name, states in (("moody", moody), ("demo", demo)):
        scores = [_score(s, ids) for s in states]
        mean, (low, high) = sum(scores) / len(scores), bootstrap_ci(scores)
        assert data[name]["n"] == len(states) and data[name]["runs"] == [s.run_id for s in states]
        assert data[name]["score"] == pytest.approx({"mean": mean, "ci_low": low, "ci_high": high})
        assert float(headline[name]["mean"]) == pytest.approx(mean, abs=1e-4)
        assert (float(headline[name]["ci_low"]), float(headline[name]["ci_high"])) == pytest.approx(
            (low, high), abs=1e-4
        )
        right = {c: sum(1 for s in states if s.evaluations[c].effective >= 7) for c in ids}
        n = len(states)
        expected_k = [
            sum(math.comb(right[c], k) / math.comb(n, k) for c in ids) / len(ids) for k in range(1, n + 1)
        ]
        assert data[name]["pass_k"] == pytest.approx(expected_k)
        assert [float(headline[name][f"pass^{k}"]) for k in range(1, n + 1)] == pytest.approx(
            expected_k, abs=1e-4
        )
        assert data[name]["coverage"] == {"graded": 6 * n, "planned": 6 * n}
        for check_type in {t for c in checks for t in c.types}:
            of_type = [c.id for c in checks if check_type in c.types]
            per_run = [_score(s, of_type) for s in states]
            typed = next(r for r in rows if r["name"] == name and r["check_type"] == check_type)
            assert float(typed["mean"]) == pytest.approx(sum(per_run) / n, abs=1e-4)
            assert data[name]["types"][check_type]["mean"] == pytest.approx(sum(per_run) / n)
    # tokens and cost: the demo's persona and agent models have prices; the moody agent uses no model
    usage = demo[0].usage
    persona = (usage["persona"]["prompt_tokens"] * 1.0 + usage["persona"]["completion_tokens"] * 4.0) / 1e6
    agent = (usage["agent"]["prompt_tokens"] * 0.5 + usage["agent"]["completion_tokens"] * 2.0) / 1e6
    assert data["demo"]["cost"] == pytest.approx(
        {"total": persona + agent, "persona": persona, "agent": agent}
    )
    assert float(headline["demo"]["cost_usd"]) == pytest.approx(persona + agent, abs=1e-6)
    assert data["demo"]["tokens"]["persona"]["prompt_tokens"] == usage["persona"]["prompt_tokens"]
    assert data["moody"]["cost"] is None  # the scripted persona has no price
    assert "written: " in capsys.readouterr().out


def test_compare_names_an_unknown_argument_and_a_run_without_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _demo_config(tmp_path)
    assert main(["--config", str(config), "compare", "nope"]) == 2
    assert "no run, group or matrix 'nope'" in capsys.readouterr().err
    assert main(["--config", str(config), "compare", "max"]) == 1  # in the config, never played
    assert "max: no results yet" in capsys.readouterr().err


def test_a_run_is_counted_as_its_report_counts_it_under_the_judges_lead(tmp_path: Path) -> None:
    """With ``judge.lead`` = judge the judge's grades count; a check it could not grade is left out (as in
    the report), and so is a persona fault."""
    shutil.copytree(ROOT / "benchmarks" / "demo", tmp_path / "benchmarks" / "demo")
    persona = [10, 10, 10, 0, 10, 10]  # 3.4 graded 0 by the persona, judged 10
    judge: list[float | None] = [10, 0, None, 10, 10, 10]  # 3.2 judged 0; 3.3 the judge failed on
    evaluations = {
        c: EvaluationLogged(
            check_id=c, score=s, attempt=1, effective=s, types=[t], n=i, persona_fault="x" * (c == "3.6")
        )
        for i, ((c, t), s) in enumerate(zip(CHECKS.items(), persona, strict=True))
    }
    grades = {
        c: JudgeGraded(check_id=c, evaluation_n=i, judge="scripted/judge", score=j)
        for i, (c, j) in enumerate(zip(CHECKS, judge, strict=True))
    }
    state = RunState(
        run_id="r",
        benchmark="demo",
        agent="chatbot",
        start_date="2026-08-19",
        finished=True,  # type: ignore[arg-type]
        evaluations=evaluations,
        judge_grades=grades,
    )
    atomic_write(tmp_path / "results" / "r" / "state.json", checkpoint_json(state))
    raw = {"runs": {"r": {"benchmark": "demo", "agent": "chatbot"}}, "results_dir": "results"}
    by_persona = load_result(parse_config(json.dumps(raw), base_dir=tmp_path), "r")
    by_judge = load_result(
        parse_config(
            json.dumps({**raw, "judge": {"model": "scripted/judge", "lead": "judge"}}), base_dir=tmp_path
        ),
        "r",
    )
    assert by_persona is not None and by_judge is not None
    # persona: 3.6 is a persona fault: (10 + 10 + 10 + 0 + 10) over 5 checks
    assert by_persona.score == pytest.approx(40 / 5)
    # judge: 3.6 a persona fault, 3.3 not judged: (10 + 0 + 10 + 10) over 4 checks
    assert by_judge.score == pytest.approx(30 / 4)
    assert [by_judge.passed(c) for c in CHECKS] == [True, False, None, True, True, None]
    assert [by_persona.passed(c) for c in CHECKS] == [True, True, True, False, True, None]


def test_a_run_still_playing_is_marked_and_left_out_of_the_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 25, point 7: its unasked checks would count 0 in every figure until it ends."""
    config = compare_folder(tmp_path)
    lock = hold_as_playing(tmp_path / "results", "demo.r3")
    solo = hold_as_playing(tmp_path / "results", "solo")
    try:
        exported = tmp_path / "c.json"
        assert main(["--config", str(config), "compare", "demo", "solo", "--json", str(exported)]) == 0
        captured = capsys.readouterr()
        ended = [sum(SCORES[run_id]) / 6 for run_id in ("demo.r1", "demo.r2")]
        (row,) = [line for line in captured.out.splitlines() if line.startswith("demo ")]
        assert re.split(r"\s{2,}", row)[1] == "2 +1 playing"
        assert f"{sum(ended) / 2:.2f} [{min(ended):.2f}, {max(ended):.2f}]" in row
        assert "compare: solo: still playing (solo): no figures until it ends" in captured.err
        (demo,) = json.loads(exported.read_text())
        assert (demo["runs"], demo["playing"]) == (["demo.r1", "demo.r2"], ["demo.r3"])
    finally:
        lock.release()
        solo.release()
    assert main(["--config", str(config), "compare", "demo"]) == 0  # ended: counted again (it stopped)
    (row,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("demo ")]
    assert re.split(r"\s{2,}", row)[1] == "3"


def test_a_benchmark_without_type_tags_is_compared_by_the_kinds_its_report_infers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a seed-format benchmark: no [TYPE] on its check lines; the report marks the kinds it infers (AGG~)
    shutil.copytree(
        ROOT / "tests" / "benchmarks" / "seed_untagged", tmp_path / "benchmarks" / "seed_untagged"
    )
    raw = {
        "models": {"persona": {"model": "scripted/persona"}, "agent": {"model": "scripted/recall"}},
        "persona": {"model": "persona"},
        "runs": {"u": {"benchmark": "seed_untagged", "agent": "chatbot", "model": "agent", "repeats": 2}},
    }
    (tmp_path / "config.jsonc").write_text(json.dumps(raw))
    config = str(tmp_path / "config.jsonc")
    assert main(["--config", config, "run", "u", "--headless"]) == 0
    capsys.readouterr()
    assert main(["--config", config, "compare", "u", "--json", str(tmp_path / "c.json")]) == 0
    out = capsys.readouterr().out
    checks = load_benchmark(tmp_path / "benchmarks" / "seed_untagged").checks()
    assert checks and not any(c.types for c in checks)
    report = (tmp_path / "results" / "report.md").read_text()
    kinds = set(re.findall(r"\b([A-Z]+)~ [\d.]+ \(\d+\)", report))  # the report's "Average per type: AGG~ …"
    assert kinds
    header = next(line for line in out.splitlines() if line.startswith("run / group"))
    assert {f"{kind}~" for kind in kinds} <= set(header.split())  # a column per inferred kind
    [group] = json.loads((tmp_path / "c.json").read_text())
    assert set(group["types"]) == {f"{kind}~" for kind in kinds}
    assert sum(t["coverage"]["planned"] for t in group["types"].values()) >= len(checks) * 2
