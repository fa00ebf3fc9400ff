"""Repeats: N independent runs of one config (own folders, each resumable) and a summary entry written once
when the last one finishes — mean with its 95 % interval, per check type, pass^k — whose figures the test
computes from the runs' own saved grades."""

from __future__ import annotations

import json
import math
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from engine_helpers import ROOT

from engine.benchmark.validate import load_benchmark
from engine.comparison.results import load_result
from engine.comparison.stats import bootstrap_ci
from engine.comparison.summary import sample_line, write_group_summaries
from engine.config import load_config
from engine.state import RunState, load_state
from mmb_tui.front_ends.cli import main

N = 3


def _folder(tmp_path: Path, repeats: int = N) -> Path:
    shutil.copytree(ROOT / "benchmarks" / "demo", tmp_path / "benchmarks" / "demo")
    run = {"benchmark": "demo", "agent": "repeat_agents:MoodyAgent", "repeats": repeats}
    (tmp_path / "config.jsonc").write_text(
        json.dumps({"persona": {"model": "scripted/persona"}, "runs": {"m": run}})
    )
    return tmp_path / "config.jsonc"


def _states(tmp_path: Path, n: int = N) -> list[RunState]:
    states = [load_state(tmp_path / "results" / f"m.r{k}" / "state.json") for k in range(1, n + 1)]
    assert all(s is not None and s.finished for s in states)
    return [s for s in states if s is not None]


def _summaries(tmp_path: Path) -> list[str]:
    report = (tmp_path / "results" / "report.md").read_text()
    return [chunk for chunk in report.split("\n## ") if "Summary of" in chunk]


def _line(entry: str, prefix: str) -> str:
    return next(line.removeprefix("📊 ") for line in entry.splitlines() if line.startswith(f"📊 {prefix}"))


def test_repeats_write_one_summary_with_the_mean_its_interval_and_pass_k(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _folder(tmp_path)
    assert main(["--config", str(config), "run", "m", "--headless"]) == 0
    states = _states(tmp_path)
    checks = load_benchmark(tmp_path / "benchmarks" / "demo").checks()
    # each run's headline: the effective grades over every planned check (no persona faults here)
    scores = [
        sum(s.evaluations[c.id].effective for c in checks if c.id in s.evaluations) / len(checks)
        for s in states
    ]
    assert len(set(scores)) > 1, "the moody agent should make the repeats differ"
    summaries = _summaries(tmp_path)
    assert len(summaries) == 1
    entry = summaries[0]
    assert entry.splitlines()[0].endswith("— m: demo @ repeat_agents:MoodyAgent")
    assert "Summary of 3 runs: m.r1, m.r2, m.r3" in entry
    mean = sum(scores) / N
    low, high = bootstrap_ci(scores)
    assert min(scores) <= low <= mean <= high <= max(scores)
    assert _line(entry, "Score:").startswith(
        f"Score: {mean:.2f}/10 mean over 3 runs, 95% CI [{low:.2f}, {high:.2f}]"
    )
    assert _line(entry, "Per run:") == "Per run: " + ", ".join(
        f"m.r{k} {s:.2f}" for k, s in enumerate(scores, 1)
    )
    # pass^k per check: C(c, k) / C(N, k), c = runs whose grade is 7/10 or more
    right = {c.id: sum(1 for s in states if s.evaluations[c.id].effective >= 7) for c in checks}
    per_k = [
        sum(math.comb(right[c.id], k) / math.comb(N, k) for c in checks) / len(checks)
        for k in range(1, N + 1)
    ]
    assert _line(entry, "pass^k (k = 1..3").endswith(": " + " ".join(f"{v:.2f}" for v in per_k))
    for c in checks:
        values = " ".join(f"{math.comb(right[c.id], k) / math.comb(N, k):.2f}" for k in range(1, N + 1))
        assert _line(entry, f"Check {c.id} ") == f"Check {c.id} [{c.types[0]}]: {right[c.id]}/3 · {values}"
    # per type: the same headline rule over the checks of the type, averaged over the runs
    for check_type in {t for c in checks for t in c.types}:
        of_type = [c for c in checks if check_type in c.types]
        per_run = [sum(s.evaluations[c.id].effective for c in of_type) / len(of_type) for s in states]
        assert _line(entry, f"Type {check_type}:").startswith(f"Type {check_type}: {sum(per_run) / N:.2f} [")
    assert "Check coverage: 18/18" in entry


def test_the_summary_is_written_once_across_restarts_and_a_repeat_resumes_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _folder(tmp_path)
    assert main(["--config", str(config), "run", "m", "--headless"]) == 0
    assert len(_summaries(tmp_path)) == 1
    assert write_group_summaries(load_config(config), "m.r2") == []  # already in the report
    assert main(["--config", str(config), "run", "m", "--headless"]) == 0  # finished runs end at once
    assert len(_summaries(tmp_path)) == 1
    # a repeat id is a run of its own, even once the config no longer has repeats of it
    config.write_text(config.read_text().replace('"repeats": 3', '"repeats": 1'))
    assert main(["--config", str(config), "run", "m.r2", "--headless"]) == 0
    assert len(_summaries(tmp_path)) == 1


def test_no_summary_until_every_repeat_has_finished(tmp_path: Path) -> None:
    config = _folder(tmp_path)
    assert main(["--config", str(config), "run", "m.r1", "m.r3", "--headless"]) == 0
    assert not (tmp_path / "results" / "m.r2").exists()
    assert _summaries(tmp_path) == []
    assert main(["--config", str(config), "run", "m.r2", "--headless"]) == 0
    assert len(_summaries(tmp_path)) == 1


def test_repeats_on_the_command_line_override_the_config(tmp_path: Path) -> None:
    config = _folder(tmp_path, repeats=1)
    assert main(["--config", str(config), "run", "m", "--repeats", "2", "--headless"]) == 0
    assert sorted(p.name for p in (tmp_path / "results").iterdir() if p.is_dir()) == ["m.r1", "m.r2"]
    (entry,) = _summaries(tmp_path)
    assert re.search(r"Summary of 2 runs: m\.r1, m\.r2 · sample [0-9a-f]{12}", entry)


def test_the_sample_hash_is_over_the_grades_not_where_they_stand_in_the_transcript(tmp_path: Path) -> None:
    config = _folder(tmp_path, repeats=2)
    assert main(["--config", str(config), "run", "m", "--headless"]) == 0
    loaded = load_config(config)
    results = [load_result(loaded, run_id) for run_id in ("m.r1", "m.r2")]
    assert all(r is not None for r in results)
    first = [r for r in results if r is not None]
    resumed = [  # the same grades, played again after a resume: at other transcript positions
        replace(r, grades={c: e.model_copy(update={"n": e.n + 40}) for c, e in r.grades.items()})
        for r in first
    ]
    assert sample_line(resumed) == sample_line(first)
    check = next(iter(first[0].grades))
    regraded = replace(first[0].counted, scores={**first[0].counted.scores, check: 0.5})
    assert sample_line([replace(first[0], counted=regraded), first[1]]) != sample_line(first)
