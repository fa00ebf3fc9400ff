"""The judge in a run (issue 14): every accepted grade gets a second, independent one; the report shows both,
the agreement, every disagreement, and leads with the grades ``judge.lead`` names; a judge that fails is
recorded, never a crash; a kill between the persona's grade and the judge's ends with each judged once."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import FORGETFUL, ROOT, events, fast, headless_command, make_config, play

from engine.config import BuildError, Config, ConfigError, parse_config
from engine.event_summary import summary
from engine.events import EvaluationLogged, Event, JudgeGraded
from engine.judge.role import RunJudge
from engine.models.judges import Grade
from engine.models.rules_judge import judge as rules_judge
from engine.report.answers import ImperfectAnswer
from engine.report.entries import parse_report_entries
from engine.run.build import build_run, check_run
from engine.run.loop import Run
from engine.state import load_state
from engine.transcript import read_events
from mmb_tui.transcript.event_render import body, headline, passes
from mmb_tui.widgets.report_items import answer_fields

FULL = {"r": {"benchmark": "full", "agent": FORGETFUL}}
PASS = 7.0  # a grade of 7/10 or more is a pass, for the persona and the judge alike


class Contrarian:
    """A judge that disagrees with the rules judge (and so with the scripted persona) on every 0 or 10."""

    name = "contrarian"

    async def grade(self, question: str, expected: str, answer: str) -> Grade:
        verdict = rules_judge(question, expected, answer)
        return Grade(10 - verdict.score, f"the opposite of {verdict.score:g}")


class Broken:
    """A judge whose own code fails."""

    name = "broken"

    async def grade(self, question: str, expected: str, answer: str) -> Grade:
        raise RuntimeError("the judge fell over")


def _latest(evts: list[Event]) -> tuple[dict[str, EvaluationLogged], dict[str, JudgeGraded]]:
    evaluations: dict[str, EvaluationLogged] = {}
    judged: dict[str, JudgeGraded] = {}
    for event in evts:
        if isinstance(event, EvaluationLogged):
            evaluations[event.check_id] = event
        elif isinstance(event, JudgeGraded):
            judged[event.check_id] = event
    return evaluations, judged


def _expected_headline(run: Run, lead: str) -> tuple[float, int]:
    """The headline score under ``lead`` and the checks it is over, from the transcript's events alone."""
    evaluations, judged = _latest(events_of(run))
    planned = [c.id for c in run.bench.checks()]
    scores: list[float] = []
    excluded = 0
    for cid in planned:
        e = evaluations.get(cid)
        if e is None:
            continue
        if e.persona_fault:
            excluded += 1
            continue
        factor = 0.5 if e.attempt == 2 else 1.0
        j = judged[cid].score
        judge = None if j is None else j * factor
        if lead == "persona":
            scores.append(e.score * factor)
        elif judge is None:
            excluded += 1
        else:
            scores.append(judge if lead == "judge" else min(e.score * factor, judge))
    over = len(planned) - excluded
    return sum(scores) / over, over


def events_of(run: Run) -> list[Event]:
    return list(read_events(run.run_dir / "transcript.jsonl"))


def _report(config: Config) -> str:
    return (config.results_path() / "report.md").read_text(encoding="utf-8")


async def _play_with(config: Config, judge: Any, lead: str = "persona") -> Run:
    """Play run ``r`` with a judge of the test's own (the config's judge replaced before the run starts)."""
    run = build_run(config, "r", tune=fast)
    run.judge = RunJudge(judge, lead).attach(run.recorder)
    await run.run()
    return run


async def test_each_grade_is_judged_once_right_after_it_and_kept_with_it(tmp_path: Path) -> None:
    config = make_config(tmp_path, FULL, judge={"model": "scripted/judge"})
    run = await play(config, "r")
    evts = events(config, "r")
    evaluations = [e for e in evts if isinstance(e, EvaluationLogged)]
    judged = [e for e in evts if isinstance(e, JudgeGraded)]
    assert len(evaluations) >= 5 and len(judged) == len(evaluations)
    by_n = {e.n: e for e in evts}
    for grade in judged:  # each judges the evaluation just before it, from the agent's verbatim replies
        evaluation = by_n[grade.evaluation_n]
        assert isinstance(evaluation, EvaluationLogged) and grade.n == evaluation.n + 1
        verdict = rules_judge(evaluation.question, evaluation.expected, "\n\n".join(evaluation.replies))
        assert (grade.check_id, grade.score, grade.judge) == (
            evaluation.check_id,
            verdict.score,
            "scripted/judge",
        )
        assert grade.persona_score == evaluation.score
    # the state keeps the judge's grade of each check's latest evaluation, and the journal gives it back
    latest, _ = _latest(evts)
    assert {c: g.evaluation_n for c, g in run.state.judge_grades.items()} == {
        c: e.n for c, e in latest.items()
    }
    loaded = load_state(run.run_dir / "state.json")
    assert loaded is not None and loaded.judge_grades == run.state.judge_grades


async def test_the_report_shows_both_grades_and_the_agreement_computed_from_the_events(
    tmp_path: Path,
) -> None:
    config = make_config(tmp_path, FULL, judge={"model": "scripted/judge"})
    run = await _play_with(config, Contrarian())
    evaluations, judged = _latest(events_of(run))
    both = [
        (e, judged[c]) for c, e in evaluations.items() if not e.persona_fault and judged[c].score is not None
    ]
    disputed = sorted(e.check_id for e, j in both if (e.score >= PASS) != ((j.score or 0) >= PASS))
    agreed = len(both) - len(disputed)
    assert disputed, "the contrarian should disagree somewhere"
    entry = parse_report_entries(_report(config))[-1]
    assert entry.judge == "contrarian" and entry.agreement == (agreed, len(both))
    percent = f"({100 * agreed / len(both):.0f}%)"
    assert any(
        line.startswith(f"Judge: contrarian · agreement {agreed} of {len(both)} {percent}")
        for line in entry.lines
    )
    assert sorted(d.check_id for d in entry.disagreements) == disputed
    for d in entry.disagreements:  # in full: the whole verbatim reply, both grades and both comments
        e, j = evaluations[d.check_id], judged[d.check_id]
        factor = 0.5 if e.attempt == 2 else 1.0
        assert d.got == " ‖ ".join(" ".join(r.split()) for r in e.replies)
        assert (d.persona_score, d.judge_score) == (e.effective, (j.score or 0) * factor)
        assert d.judge == j.comment and d.comment == e.comment and d.transcript_n == e.n
    for answer in entry.imperfect:  # each imperfect answer with both grades side by side
        e, j = evaluations[answer.check_id], judged[answer.check_id]
        assert answer.persona_score == e.effective and answer.judge == j.comment
    assert entry.lead == "persona"
    assert entry.score == pytest.approx(round(_expected_headline(run, "persona")[0], 2))


@pytest.mark.parametrize("lead", ["judge", "both"])
async def test_the_lead_changes_the_headline_and_says_so(tmp_path: Path, lead: str) -> None:
    config = make_config(tmp_path, FULL, judge={"model": "scripted/judge", "lead": lead})
    run = await _play_with(config, Contrarian(), lead)
    score, over = _expected_headline(run, lead)
    persona_score, _ = _expected_headline(run, "persona")
    assert score != pytest.approx(persona_score)  # the contrarian makes the lead matter
    words = {"judge": "the judge's grades", "both": "the lower of the persona's and the judge's grades"}[lead]
    headline = next(line for line in _report(config).splitlines() if line.startswith("📊 Score:"))
    assert headline.startswith(f"📊 Score: {score:.2f}/10 by {words} over {over} planned checks")
    entry = parse_report_entries(_report(config))[-1]
    assert (entry.lead, entry.score) == (lead, round(score, 2))
    assert entry.lead_scores == {
        "persona": round(persona_score, 2),
        "judge": round(_expected_headline(run, "judge")[0], 2),
        "both": round(_expected_headline(run, "both")[0], 2),
    }


async def test_a_judge_that_returns_garbage_is_an_error_on_its_event_and_never_a_crash(
    tmp_path: Path,
) -> None:
    # scripted/recall answers in prose, never the JSON the judge prompt asks for
    config = make_config(tmp_path, FULL, judge={"model": "scripted/recall", "lead": "judge"})
    run = await play(config, "r")
    assert run.termination is not None and run.termination.value == "finished"
    evts = events(config, "r")
    evaluations, judged = _latest(evts)
    assert judged.keys() == evaluations.keys()
    assert all(j.score is None and j.error.startswith("no JSON object in the reply") for j in judged.values())
    assert "[no grade]" in summary(next(iter(judged.values())))
    report = _report(config)
    # every check is left out of a judge-led score and named; the persona's figures are kept beside it
    assert f"not graded by the judge {len(evaluations)} excluded" in report
    in_order = [c.id for c in run.bench.checks() if c.id in evaluations]
    named = report.partition("· not graded by the judge: ")[2].splitlines()[0]
    at = [named.find(f"{cid} (no JSON object in the reply: ") for cid in in_order]  # each with why
    assert -1 not in at and at == sorted(at)
    calls = sum(1 for e in evts if isinstance(e, EvaluationLogged))
    assert run.meter.get("judge").calls == calls  # one call a grade, its tokens metered under "judge"
    assert run.meter.get("judge").prompt_tokens > 0


async def test_a_judge_whose_code_fails_is_recorded_too(tmp_path: Path) -> None:
    config = make_config(tmp_path, FULL)
    run = await _play_with(config, Broken())
    assert run.termination is not None and run.termination.value == "finished"
    grades = list(run.state.judge_grades.values())
    assert grades and all(g.error == "RuntimeError: the judge fell over" for g in grades)
    assert "| judge: [error] RuntimeError: the judge fell over" in _report(config)


def test_the_summary_of_a_judge_grade_says_when_it_disagrees() -> None:
    agreeing = JudgeGraded(
        check_id="3.2", evaluation_n=9, judge="j", score=10, comment="right", persona_score=10
    )
    disagreeing = agreeing.model_copy(update={"score": 0.0, "comment": "wrong"})
    assert summary(agreeing) == "[10/10] (3.2) judge j · persona 10/10 — right"
    assert summary(disagreeing) == "[0/10] (3.2) judge j · persona 10/10 ≠ disagrees — wrong"


async def test_without_a_judge_nothing_changes(tmp_path: Path) -> None:
    config = make_config(tmp_path, FULL)
    run = await play(config, "r")
    assert run.judge is None and not run.state.judge_grades
    assert not [e for e in events(config, "r") if isinstance(e, JudgeGraded)]
    report = _report(config)
    assert "Judge:" not in report and " by the " not in report and "| judge:" not in report


async def test_a_judge_added_to_a_played_run_grades_its_evaluations_when_it_resumes(tmp_path: Path) -> None:
    await play(make_config(tmp_path, FULL), "r")
    config = make_config(tmp_path, FULL, judge={"model": "scripted/judge"})
    run = await play(config, "r")
    evts = events(config, "r")
    evaluations, _ = _latest(evts)
    judged = [e for e in evts if isinstance(e, JudgeGraded)]
    assert sorted(g.evaluation_n for g in judged) == sorted(e.n for e in evaluations.values())
    assert run.state.judge_grades.keys() == evaluations.keys()
    loaded = load_state(run.run_dir / "state.json")  # journaled with the grades they judge
    assert loaded is not None and loaded.judge_grades == run.state.judge_grades
    await play(config, "r")  # and never again
    assert len([e for e in events(config, "r") if isinstance(e, JudgeGraded)]) == len(judged)


async def test_a_judge_that_gave_no_grade_grades_again_when_the_run_resumes(tmp_path: Path) -> None:
    failing = make_config(tmp_path, FULL, judge={"model": "scripted/recall"})  # replies no JSON grade
    run = await play(failing, "r")
    assert run.state.judge_grades and all(g.score is None for g in run.state.judge_grades.values())
    failures = [e for e in events(failing, "r") if isinstance(e, JudgeGraded)]
    run = await play(make_config(tmp_path, FULL, judge={"model": "scripted/judge"}), "r")
    assert run.state.judge_grades.keys() == run.state.evaluations.keys()
    assert all(g.score is not None and g.judge == "scripted/judge" for g in run.state.judge_grades.values())
    graded = [e for e in events(failing, "r") if isinstance(e, JudgeGraded)]
    assert graded[: len(failures)] == failures  # the failures stay on record, each check graded once more
    assert sorted(g.check_id for g in graded[len(failures) :]) == sorted(run.state.evaluations)


def test_an_unknown_judge_model_is_an_error_naming_its_key(tmp_path: Path) -> None:
    models = {"deepseek-flash": {"model": "deepseek-chat", "base_url": "http://127.0.0.1:9/v1"}}
    config = make_config(tmp_path, FULL, models=models, judge={"model": "deepseek-flsh"})
    assert check_run(config, "r").startswith(
        "judge.model: unknown model 'deepseek-flsh' (did you mean 'deepseek-flash'?"
    )
    with pytest.raises(BuildError, match=r"^judge\.model: unknown model"):
        build_run(config, "r")
    runs = {"r": {**FULL["r"], "judge": "scripted/juge"}}
    config = make_config(tmp_path, runs)
    assert check_run(config, "r").startswith(
        "runs.r.judge: unknown model 'scripted/juge' (did you mean 'scripted/judge'?"
    )


def test_the_judge_section_is_checked_with_the_config(tmp_path: Path) -> None:
    text = json.dumps({"judge": {"model": "scripted/judge", "lead": "jury"}})
    with pytest.raises(ConfigError, match=r"judge\.lead: Input should be 'persona', 'judge' or 'both'"):
        parse_config(text)
    with pytest.raises(ConfigError, match=r"judge\.model: Field required"):
        parse_config(json.dumps({"judge": {"lead": "both"}}))
    parsed = parse_config(json.dumps({"judge": {"model": "scripted/judge"}}))
    assert parsed.judge is not None and parsed.judge.lead == "persona"


# ---- kill -9 between the persona's grade and the judge's ------------------------------------------------


def _kill_setup(folder: Path) -> Path:
    shutil.copytree(ROOT / "benchmarks" / "demo", folder / "benchmarks" / "demo")
    config = {
        "models": {"slow-judge": {"model": "scripted/judge", "latency": 0.4}},
        "persona": {"model": "scripted/persona"},
        "judge": {"model": "slow-judge", "lead": "both"},
        "runs": {"r": {"benchmark": "demo", "agent": "chatbot", "model": "scripted/recall"}},
    }
    (folder / "config.jsonc").write_text(json.dumps(config))
    return folder / "config.jsonc"


def _last_kind(transcript: Path) -> str:
    lines = transcript.read_bytes().splitlines() if transcript.exists() else []
    try:
        return str(json.loads(lines[-1])["kind"]) if lines else ""
    except ValueError:  # a line being written
        return ""


def _kill_after_an_evaluation(process: subprocess.Popen[bytes], transcript: Path, skip: int) -> bool:
    """SIGKILL once the transcript ends with the ``skip``-th new ``evaluation_logged`` (its judge asleep)."""
    seen, deadline = 0, time.monotonic() + 120
    before = transcript.read_bytes().count(b'"evaluation_logged"') if transcript.exists() else 0
    while process.poll() is None and time.monotonic() < deadline:
        count = transcript.read_bytes().count(b'"evaluation_logged"') if transcript.exists() else 0
        if count - before > seen and _last_kind(transcript) == "evaluation_logged":
            seen = count - before
            if seen > skip:
                process.send_signal(signal.SIGKILL)
                process.wait()
                return True
        time.sleep(0.01)
    return False


def test_killed_between_a_grade_and_its_judge_every_grade_is_judged_exactly_once(tmp_path: Path) -> None:
    config = _kill_setup(tmp_path)
    transcript = tmp_path / "results" / "r" / "transcript.jsonl"
    command = headless_command(config)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    kills = 0
    for skip in (0, 1, 0):  # killed while the judge grades the 1st evaluation, then the 2nd after, …
        process = subprocess.Popen(
            command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        if _kill_after_an_evaluation(process, transcript, skip):
            kills += 1
            assert _last_kind(transcript) == "evaluation_logged"  # the judge's grade had not come yet
    finished = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, timeout=300)
    assert finished.returncode == 0, finished.stderr.decode()
    assert kills == 3
    evts = list(read_events(transcript))
    assert [e.n for e in evts] == list(range(len(evts)))
    evaluations = [e for e in evts if isinstance(e, EvaluationLogged)]
    judged = [e.evaluation_n for e in evts if isinstance(e, JudgeGraded)]
    assert sorted(judged) == sorted(e.n for e in evaluations)  # each exactly once, none of a rolled-back one
    state = load_state(tmp_path / "results" / "r" / "state.json")
    assert state is not None and state.judge_grades.keys() == state.evaluations.keys()
    assert all(state.judge_grades[c].evaluation_n == e.n for c, e in state.evaluations.items())
    report = (tmp_path / "results" / "report.md").read_text()
    assert len(re.findall(r"^## ", report, re.M)) == 1 and "📊 Judge: slow-judge · agreement" in report


def test_the_transcripts_evaluation_filter_shows_the_judges_grades_styled_by_score() -> None:
    agrees = JudgeGraded(check_id="3.1", evaluation_n=41, judge="scripted/judge", score=10, persona_score=10)
    failed = JudgeGraded(check_id="3.2", evaluation_n=43, judge="m", error="malformed JSON: " + "x" * 300)
    assert passes(agrees, "evaluations") and passes(failed, "evaluations")
    assert not passes(agrees, "messages")
    line = headline(agrees)
    assert "[10/10] (3.1) judge scripted/judge · persona 10/10" in line.plain
    assert any(span.style == "bold green" for span in line.spans)
    assert body(failed).endswith("of the persona's grade #43") and "malformed JSON" in body(failed)
    assert body(agrees) == ""


def test_the_report_browser_shows_the_judges_grade_of_an_answer_beside_the_persona() -> None:
    answer = ImperfectAnswer(
        10, "3.3", "Rent and service?", "$155", "$95", "adds up", judge_score=0, judge="no sum"
    )
    assert answer_fields(answer)[-1] == ("judge", "bold", "[0/10] no sum")
    unjudged = ImperfectAnswer(0, "3.3", "Rent and service?", "$155", "$95", "wrong")
    assert [label for label, _, _ in answer_fields(unjudged)] == ["question", "expected", "got", "comment"]
