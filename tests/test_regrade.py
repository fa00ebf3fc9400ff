"""``mmb-tui regrade RUN [--judge MODEL]`` (issue 14): a saved run graded again from its transcript, without
replaying it; the entry appended to the report is marked as a regrade of the run's entry, leads with the judge's
grades over the planned checks, gives the agreement with the persona and every disagreement in full."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import json5
import pytest
from engine_helpers import FORGETFUL, ROOT, make_config, play
from textual.widgets import Tree
from tui_fakes import Scene

from engine.benchmark.validate import load_benchmark
from engine.events import EvaluationLogged, RunStarted
from engine.judge.regrade import regrade
from engine.models.judges import Grade
from engine.models.rules_judge import judge as rules_judge
from engine.report.entries import ReportEntry, load_report, parse_report_entries, reprint
from engine.transcript import read_events
from mmb_tui.front_ends.cli import main
from mmb_tui.screens.report_screen import ReportScreen

PASS = 7.0


class Contrarian:
    """Disagrees with the rules judge (and so with the scripted persona) on every 0 or 10."""

    name = "contrarian"

    async def grade(self, question: str, expected: str, answer: str) -> Grade:
        verdict = rules_judge(question, expected, answer)
        return Grade(10 - verdict.score, f"the opposite of {verdict.score:g}")


def _demo_config(tmp_path: Path, **extra: object) -> Path:
    """The shipped config at full speed (its latency is for people watching the demo), with ``extra`` keys."""
    raw = json5.loads((ROOT / "config.jsonc").read_text())
    for model in raw["models"].values():
        model.pop("latency", None)
    raw.update(extra)
    (tmp_path / "config.jsonc").write_text(json.dumps(raw))
    shutil.copytree(ROOT / "benchmarks" / "demo", tmp_path / "benchmarks" / "demo")
    return tmp_path / "config.jsonc"


def _latest(transcript: Path) -> dict[str, EvaluationLogged]:
    latest: dict[str, EvaluationLogged] = {}
    for event in read_events(transcript):
        if isinstance(event, EvaluationLogged):
            latest[event.check_id] = event
    return latest


def test_a_finished_demo_run_regraded_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _demo_config(tmp_path, judge={"model": "scripted/judge"})  # the demo with a judge, offline
    assert main(["--config", str(config), "run", "demo", "--headless"]) == 0
    report = tmp_path / "results" / "report.md"
    original = parse_report_entries(report.read_text())[-1]
    assert original.judge == "scripted/judge" and not original.regrade
    capsys.readouterr()
    assert main(["--config", str(config), "regrade", "demo"]) == 0
    printed = capsys.readouterr().out
    entries = parse_report_entries(report.read_text())
    assert len(entries) == 2 and printed == entries[1].text()
    entry = entries[1]
    assert entry.title.endswith(
        f"demo: demo @ chatbot · regrade by scripted/judge of the entry of {original.date}"
    )
    # the figures, from the transcript: the rules judge on each check's latest verbatim replies
    every = _latest(tmp_path / "results" / "demo" / "transcript.jsonl")
    latest = {cid: e for cid, e in every.items() if not e.persona_fault}
    planned = [c.id for c in load_benchmark(tmp_path / "benchmarks" / "demo").checks()]
    judged = {}
    for cid, e in latest.items():
        raw = rules_judge(e.question, e.expected, "\n\n".join(e.replies)).score
        judged[cid] = (raw, raw * (0.5 if e.attempt == 2 else 1.0))
    score = sum(effective for _, effective in judged.values()) / (len(planned) - (len(every) - len(latest)))
    assert entry.score == round(score, 2) and entry.lead == "judge"
    agreed = sum(1 for cid, e in latest.items() if (e.score >= PASS) == (judged[cid][0] >= PASS))
    assert entry.agreement == (agreed, len(latest))
    assert f"Score: {score:.2f}/10 by the judge's grades over {len(planned)} planned checks" in printed


async def test_a_judge_that_disagrees_has_every_disagreement_listed_in_full(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    await play(config, "r")
    entry_text = await regrade(config, "r", Contrarian())
    latest = _latest(config.results_path() / "r" / "transcript.jsonl")
    disputed = []
    for cid, e in latest.items():
        judge = 10 - rules_judge(e.question, e.expected, "\n\n".join(e.replies)).score
        if (e.score >= PASS) != (judge >= PASS):
            disputed.append((cid, judge * (0.5 if e.attempt == 2 else 1.0)))
    assert disputed
    entry = parse_report_entries(entry_text)[0]
    assert "regrade by contrarian of the entry of " in entry.title
    assert f"Disagreements ({len(disputed)} of {len(latest)}), each in full:" in entry.lines
    assert [(d.check_id, d.judge_score) for d in entry.disagreements] == disputed
    for d in entry.disagreements:
        e = latest[d.check_id]
        assert d.got == " ‖ ".join(" ".join(r.split()) for r in e.replies)  # the whole reply
        assert (
            d.persona_score == e.effective
            and d.comment == e.comment
            and d.judge.startswith("the opposite of")
        )
        assert d.question == e.question and d.expected == e.expected and d.transcript_n == e.n
    assert entry.agreement == (len(latest) - len(disputed), len(latest))


async def test_the_report_browser_and_reprint_read_a_regrade_entry(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    await play(config, "r")
    written = await regrade(config, "r", Contrarian())
    path = config.results_path() / "report.md"
    newest = load_report(path)[0]  # newest first
    assert (
        newest.run_id == "r" and newest.agent == "forgetful" and newest.regrade.startswith("contrarian of ")
    )
    assert newest.text() == written.removesuffix("\n") + "\n"
    assert newest.summary_lines()[0].startswith("Regrade: 5 of 5 answers")
    assert reprint(path, "r").decode().endswith(written)


def test_bad_input_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _demo_config(tmp_path)
    results = tmp_path / "results"

    def error(*args: str) -> str:
        assert main(["--config", str(config), "regrade", *args]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0
        return err

    assert "results/nope: no such run folder" in error("nope")
    (results / "empty").mkdir(parents=True)
    assert "empty/transcript.jsonl: no transcript" in error("empty")
    started = RunStarted(run_id="demo", benchmark="demo", agent="chatbot").model_dump_json()
    (results / "demo").mkdir()
    (results / "demo" / "transcript.jsonl").write_text(started + "\n")
    assert "no evaluations to regrade" in error("demo")
    assert "--judge: unknown model 'scripted/juge' (did you mean 'scripted/judge'?" in error(
        "demo", "--judge", "scripted/juge"
    )


def test_the_judge_is_the_option_then_the_configs_then_the_rules_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    models = {"slow-judge": {"model": "scripted/judge", "latency": 0.01}}
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}}, models=models)
    asyncio.run(play(config, "r"))
    path = str(tmp_path / "config.jsonc")
    assert main(["--config", path, "regrade", "r"]) == 0
    assert "· regrade by scripted/judge of " in capsys.readouterr().out
    assert main(["--config", path, "regrade", "r", "--judge", "slow-judge"]) == 0
    assert "· regrade by slow-judge of " in capsys.readouterr().out
    make_config(
        tmp_path,
        {"r": {"benchmark": "full", "agent": FORGETFUL}},
        models=models,
        judge={"model": "slow-judge"},
    )
    assert main(["--config", path, "regrade", "r"]) == 0
    assert "· regrade by slow-judge of " in capsys.readouterr().out


async def test_the_report_browser_shows_a_judged_entry_and_its_regrade(tmp_path: Path, scene: Scene) -> None:
    config = make_config(
        tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}}, judge={"model": "scripted/judge"}
    )
    await play(config, "r")
    regraded = await regrade(config, "r", Contrarian())
    text = (config.results_path() / "report.md").read_text()
    (scene.results / "report.md").write_text(text, encoding="utf-8")
    app = scene.app()
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("r")
        screen = app.screen
        assert isinstance(screen, ReportScreen)
        tree = screen.query_one(Tree)
        newest, judged = tree.root.children[:2]
        assert "r: full @ forgetful · regrade by contrarian of the entry of " in newest.label.plain
        assert judged.label.plain.split(" — ", 1)[1].startswith("r: full @ forgetful  score ")
        for node in (newest, judged):
            node.expand()
            await pilot.pause()
        leaves = [child.label.plain for child in newest.children]
        assert any(leaf.startswith("📊 Judge: contrarian · agreement") for leaf in leaves)
        assert any(leaf.startswith("📊 ≠ (") for leaf in leaves)  # each disagreement in full
        imperfect = parse_report_entries(regraded)[0].imperfect
        shown = [c for c in newest.children if c.label.plain.startswith("📊 Imperfect answers")]
        assert shown and len(shown[0].children) == len(imperfect)
        assert any(leaf.label.plain.startswith("📊 Judge: scripted/judge") for leaf in judged.children)


def _fault_in_transcript(transcript: Path, check_id: str, fault: str) -> EvaluationLogged:
    """Mark the latest grade of ``check_id`` in a saved transcript as a persona fault (as a run records one)."""
    lines = transcript.read_text().splitlines()
    index = max(
        i
        for i, line in enumerate(lines)
        if f'"check_id":"{check_id}"' in line and "evaluation_logged" in line
    )
    graded = EvaluationLogged.model_validate_json(lines[index])
    graded.persona_fault = fault
    lines[index] = graded.model_dump_json()
    transcript.write_text("\n".join(lines) + "\n")
    return graded


async def test_a_regrade_grades_the_faulted_checks_too_and_keeps_them_out_of_the_score(
    tmp_path: Path,
) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    await play(config, "r")
    faulted = _fault_in_transcript(
        config.results_path() / "r" / "transcript.jsonl", "2.1", "'250 g' never sent"
    )
    entry = parse_report_entries(await regrade(config, "r", Contrarian()))[0]
    (fault,) = entry.persona_faults
    judge = 10 - rules_judge(faulted.question, faulted.expected, "\n\n".join(faulted.replies)).score
    assert (fault.check_id, fault.fault, fault.judge_score) == (
        "2.1",
        "'250 g' never sent",
        judge * 0.5 ** (faulted.attempt - 1),
    )
    assert fault.judge.startswith("the opposite of")
    assert entry.summary_lines()[0].startswith("Regrade: 5 of 5 answers")  # the faulted one among them
    assert "over 4 of 5 planned checks" in entry.lines[1] and "persona faults 1 excluded" in entry.lines[1]
    assert entry.agreement is not None and entry.agreement[1] == 4  # agreement: over the counted checks


async def test_a_regrade_entry_carries_the_runs_provenance(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    await play(config, "r")
    report = config.results_path() / "report.md"
    run_entry = parse_report_entries(report.read_text())[0]
    regraded = parse_report_entries(await regrade(config, "r", Contrarian()))[0]

    def lines(entry: ReportEntry, *prefixes: str) -> list[str]:
        return [line for line in entry.lines if line.startswith(prefixes)]

    same = ("Persona:", "Agent:", "Config:", "Tokens:", "Context:", "Persona reliability:")
    assert lines(regraded, *same) == lines(run_entry, *same) and len(lines(regraded, *same)) == len(same)
    assert (regraded.persona_model, regraded.config_hash) == (run_entry.persona_model, run_entry.config_hash)
    assert regraded.summary_lines()[0].endswith(f"; its provenance from the run's entry of {run_entry.date}")
    assert (
        regraded.memory_checks == run_entry.memory_checks == 4
    )  # led by the judge's grades, as the headline
    report.unlink()  # no entry of the run: as config.jsonc makes it now, and said so
    fresh = parse_report_entries(await regrade(config, "r", Contrarian()))[0]
    assert (fresh.persona_model, fresh.config_hash, fresh.prompt_hash) == (
        run_entry.persona_model,
        run_entry.config_hash,
        run_entry.prompt_hash,
    )
    assert fresh.summary_lines()[0].endswith(
        "; its provenance from config.jsonc as it is now (no entry of the run)"
    )
