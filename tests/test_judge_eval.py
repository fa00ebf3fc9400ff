"""``judge-eval`` (issue 14): the printed report, bad case lines, and judge models whose output cannot be read;
the labeled sets themselves are held in ``tests/test_judge_sets.py``."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest

from engine.benchmark.model import CHECK_TYPES
from engine.config import Config, ModelSpec
from engine.judge.evaluate import evaluate, format_report, main_judge_eval, read_cases
from engine.models.base import Completion, Message, ModelError, ToolSchema
from engine.models.judges import (
    PASS_SCORE,
    Grade,
    ModelJudge,
    RulesJudge,
    grading_rules,
    judge_messages,
    make_judge,
    parse_judge_reply,
)
from engine.models.server import start_server

ROOT = Path(__file__).resolve().parent.parent


def run_eval(
    path: Path | None, judge_name: str | None = None, config: Config | None = None
) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main_judge_eval(path, judge_name, config, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def write_cases(path: Path, cases: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    return path


def case(answer: str, correct: bool, **extra: Any) -> dict[str, Any]:
    return {
        "check": "max 20.10",
        "question": "How much food a day are we giving Boss in the end?",
        "expected": "50 g.",
        "answer": answer,
        "correct": correct,
        **extra,
    }


# --- the report ----------------------------------------------------------------------------------


class ScoreFromAnswer:
    """A judge that grades what the answer says: 'score N'."""

    name = "fake/judge"

    async def grade(self, question: str, expected: str, answer: str) -> Grade:
        if "broken" in answer:
            return Grade(None, error="malformed JSON")
        return Grade(float(answer.split()[-1]), "as told")


def test_the_report_gives_agreement_false_accepts_and_rejects_per_type_and_ends_with_the_percentage(
    tmp_path: Path,
) -> None:
    path = write_cases(
        tmp_path / "cases.jsonl",
        [
            case("score 10", True, type="RECALL", kind="plain"),
            case("score 8", False, type="RECALL", note="stale value"),  # false accept
            case(
                "score 2", True, type="AGG, NEG", kind="shown working", note="72 km × 3 EUR"
            ),  # false reject
            case("score 0", False, type="AGG", kind="shown working"),
            case("broken", True, type="VOID"),  # a judge error
            case("score 7", True, kind="plain"),  # no type; 7 is the pass mark
        ],
    )
    evaluation = asyncio.run(evaluate(read_cases(path), ScoreFromAnswer()))
    lines = format_report(evaluation, str(path))
    text = "\n".join(lines)
    assert lines[-1] == "agreement: 50.0% (3/6)"
    assert lines[0].startswith(f"judge-eval: {path}: 6 cases, judge fake/judge")
    rows = {line.split()[0]: line.split() for line in lines if line.startswith("  ") and line.split()}
    assert rows["RECALL"][1:5] == ["2", "50.0%", "(1/2)", "1"] and rows["RECALL"][5:] == ["0", "0"]
    assert rows["AGG"][1:] == ["2", "50.0%", "(1/2)", "0", "1", "0"]
    assert rows["NEG"][1:] == ["1", "0.0%", "(0/1)", "0", "1", "0"]
    assert rows["VOID"][1:] == ["1", "0.0%", "(0/1)", "0", "0", "1"]
    assert rows["all"][1:] == ["6", "50.0%", "(3/6)", "1", "1", "1"]
    assert "HIST" not in rows and "SERIES" not in rows
    start = lines.index(
        next(line for line in lines if line.startswith("  kind "))
    )  # per case kind, as first seen
    kind_rows = lines[start + 1 : lines.index("", start)]
    assert [" ".join(r.split()[:-6]) for r in kind_rows] == ["plain", "shown working", "(no kind)", "all"]
    assert kind_rows[0].split()[1:] == ["2", "100.0%", "(2/2)", "0", "0", "0"]
    assert kind_rows[1].split()[2:] == ["2", "50.0%", "(1/2)", "0", "1", "0"]
    assert kind_rows[2].split()[2:] == ["2", "0.0%", "(0/2)", "1", "0", "1"]  # the rows add up
    assert kind_rows[3].split()[1:] == rows["all"][1:]
    assert "disagreements: 3" in text
    assert "- line 2: max 20.10 [RECALL]: false accept — labeled wrong, judged 8/10 (stale value)" in text
    assert (
        "- line 3: max 20.10 [AGG, NEG]: false reject — labeled correct, judged 2/10 (shown working; 72 km × 3 EUR)"
        in text
    )
    assert "- line 5: max 20.10 [VOID]: judge error — labeled correct, judged no grade" in text
    assert "    judge:    malformed JSON" in text
    assert "    answer:   score 8" in text and "    expected: 50 g." in text


def test_the_command_prints_the_report_with_the_rules_judge_by_default(tmp_path: Path) -> None:
    path = write_cases(
        tmp_path / "cases.jsonl",
        [case("50 g a day.", True), case("Either 55 or 50 g.", False, score=0), case("55 g.", True)],
    )
    code, out, err = run_eval(path)
    assert (code, err) == (0, "")
    assert "judge scripted/judge (a score of 7/10 or more counts as correct)" in out
    assert out.splitlines()[-1] == "agreement: 66.7% (2/3)"
    assert "- line 3: max 20.10: false reject — labeled correct, judged 0/10" in out
    assert "score: mean difference from the labeled score 0.0 points over 1 cases" in out
    assert run_eval(path, "scripted/judge")[1] == out
    config = Config(models={"offline": ModelSpec(model="scripted/judge")})
    assert run_eval(path, "offline", config)[1].splitlines()[-1] == "agreement: 66.7% (2/3)"


def test_the_command_prints_agreement_per_kind_with_the_cases_without_one_and_all(tmp_path: Path) -> None:
    path = write_cases(
        tmp_path / "cases.jsonl",
        [
            case("50 g a day.", True, kind="plain"),
            case("Either 55 or 50 g.", False, kind="hedge"),
            case("50 g — or 55 g on Sundays.", False, kind="hedge"),
            case("It was 55 g; now 50 g.", True, kind="old value named"),
            case("55 g.", True),  # labeled against the judge, no kind
        ],
    )
    code, out, _ = run_eval(path)
    lines = out.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("  kind ")))
    rows = [line.split() for line in lines[start + 1 : lines.index("", start)]]
    assert code == 0
    assert [r[:-6] for r in rows] == [
        ["plain"],
        ["hedge"],
        ["old", "value", "named"],
        ["(no", "kind)"],
        ["all"],
    ]
    assert rows[1][-6:] == ["2", "100.0%", "(2/2)", "0", "0", "0"]
    assert rows[3][-6:] == ["1", "0.0%", "(0/1)", "0", "1", "0"]
    assert rows[4][-6:] == ["5", "80.0%", "(4/5)", "0", "1", "0"]


def test_a_case_file_without_kinds_prints_no_kind_table(tmp_path: Path) -> None:
    path = write_cases(tmp_path / "cases.jsonl", [case("50 g.", True), case("55 g.", False)])
    code, out, _ = run_eval(path)
    assert code == 0 and "  kind " not in out and out.splitlines()[-1] == "agreement: 100.0% (2/2)"


# --- bad input -----------------------------------------------------------------------------------


def test_bad_lines_are_one_line_errors_naming_file_line_and_field(tmp_path: Path) -> None:
    good = case("50 g.", True)
    path = tmp_path / "bad.jsonl"
    lines = [
        json.dumps(good),
        "{not json",
        json.dumps({k: v for k, v in good.items() if k != "answer"}),
        json.dumps({**good, "correct": "yes"}),
        "",
        json.dumps({**good, "type": "FACT"}),
        json.dumps({**good, "score": 11}),
        json.dumps({**good, "score": 9, "correct": False}),
        json.dumps({**good, "question": ""}),
        "[1, 2]",
        json.dumps({**good, "kind": " "}),
        json.dumps({**good, "kind": ["hedge"]}),
    ]
    path.write_text("\n".join(lines) + "\n")
    code, out, err = run_eval(path)
    assert code == 2 and out == ""
    assert err.splitlines() == [
        f"{path}:2: (line): not valid JSON: Expecting property name enclosed in double quotes at column 2",
        f"{path}:3: answer: missing",
        f"{path}:4: correct: must be true or false",
        f"{path}:6: type: unknown check type 'FACT' (known: {', '.join(CHECK_TYPES)})",
        f"{path}:7: score: must be a number from 0 to 10",
        f"{path}:8: score: 9 contradicts correct: false (a score of 7 or more is correct)",
        f"{path}:9: question: must be a non-empty string",
        f"{path}:10: (line): not a JSON object",
        f"{path}:11: kind: must be a non-empty string",
        f"{path}:12: kind: must be a non-empty string",
    ]


def test_a_missing_file_or_an_unknown_judge_is_a_one_line_error(tmp_path: Path) -> None:
    code, _, err = run_eval(tmp_path / "none.jsonl")
    assert code == 2 and err.count("\n") == 1 and "none.jsonl: cannot read" in err
    path = write_cases(tmp_path / "cases.jsonl", [case("50 g.", True)])
    code, out, err = run_eval(path, "gpt-nowhere")
    assert code == 2 and out == ""
    assert err.startswith("--judge: unknown model 'gpt-nowhere'") and err.count("\n") == 1
    assert "scripted/judge" in err


# --- model judges --------------------------------------------------------------------------------


class Scripted:
    """A ChatModel answering from a list, one reply per call; an exception in the list is raised."""

    name = "fake/model"

    def __init__(self, replies: list[str | Exception]) -> None:
        self.replies = replies
        self.prompts: list[list[Message]] = []

    async def complete(self, messages: list[Message], tools: list[ToolSchema] | None = None) -> Completion:
        self.prompts.append(messages)
        reply = self.replies[len(self.prompts) - 1]
        if isinstance(reply, Exception):
            raise reply
        return Completion(content=reply)


def test_a_model_judge_that_answers_malformed_output_is_counted_and_listed_not_a_crash(
    tmp_path: Path,
) -> None:
    path = write_cases(tmp_path / "cases.jsonl", [case(f"answer {i}", i % 2 == 0) for i in range(6)])
    model = Scripted(
        [
            '{"score": 9, "comment": "right"}',
            "I'd give it a 3",
            '```json\n{"score": "8", "comment": "fine"}\n```',
            '{"score": 9,',
            ModelError("model 'fake/model': HTTP 500 after 3 attempts"),
            '{"score": 42}',
        ]
    )
    evaluation = asyncio.run(evaluate(read_cases(path), ModelJudge(model), concurrency=1))
    text = "\n".join(format_report(evaluation, str(path)))
    total = evaluation.total()
    assert (total.agreed, total.errors, total.false_accepts, total.false_rejects) == (2, 4, 0, 0)
    assert text.splitlines()[-1] == "agreement: 33.3% (2/6)"
    assert "judge:    no JSON object in the reply: I'd give it a 3" in text
    assert "judge:    malformed JSON" in text
    assert "judge:    model error: model 'fake/model': HTTP 500 after 3 attempts" in text
    assert "judge:    score 42 is not a number from 0 to 10" in text
    system = model.prompts[0][0]["content"]
    assert "Implied is not stated" in system and '"score"' in system
    assert "Correct answer: 50 g." in model.prompts[0][1]["content"]


class Exploding:
    name = "fake/exploding"

    async def grade(self, question: str, expected: str, answer: str) -> Grade:
        raise RuntimeError("boom")


def test_a_judge_that_raises_is_an_error_per_case(tmp_path: Path) -> None:
    path = write_cases(tmp_path / "cases.jsonl", [case("50 g.", True)])
    evaluation = asyncio.run(evaluate(read_cases(path), Exploding()))
    assert evaluation.graded[0][1] == Grade(None, error="RuntimeError: boom")


async def test_judge_eval_with_a_configured_model_over_http_counts_unreadable_replies(tmp_path: Path) -> None:
    """The real path: ``--judge`` names a config model served by the scripted server, which does not
    answer in JSON; every case is a judge error, the run goes on and reports it."""
    runner, port = await start_server("127.0.0.1", 0)
    try:
        config = Config(
            models={
                "served": ModelSpec(
                    model="scripted/recall", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0, timeout=10
                )
            }
        )
        path = write_cases(tmp_path / "cases.jsonl", [case("50 g.", True), case("55 g.", False)])
        code, out, err = await asyncio.to_thread(run_eval, path, "served", config)
    finally:
        await runner.cleanup()
    assert (code, err) == (0, "")
    assert "judge served" in out and "disagreements: 2" in out
    assert out.count("judge error") == 2
    assert "judge tokens: " in out and "2 calls" in out
    assert out.splitlines()[-1] == "agreement: 0.0% (0/2)"


def test_judge_replies_are_parsed_robustly() -> None:
    assert parse_judge_reply('{"score": 7.5, "comment": "3 of 4"}') == Grade(7.5, "3 of 4")
    assert parse_judge_reply('Sure!\n```json\n{"score": 10}\n```') == Grade(10.0, "")
    assert parse_judge_reply('Grade: {"score": "0", "comment": "stale"} — done') == Grade(0.0, "stale")
    for bad in (None, "", "10/10", "{score: 8}", '{"comment": "x"}', '{"score": true}', '{"score": -1}'):
        grade = parse_judge_reply(bad)
        assert grade.score is None and grade.error, bad
    assert not Grade(None, error="x").passed and Grade(PASS_SCORE).passed and not Grade(6.5).passed


def test_the_judge_prompt_carries_the_personas_grading_rules() -> None:
    rules = grading_rules((ROOT / "engine" / "persona" / "system.md").read_text())
    assert rules.startswith("- A question with a single number or single item scores 0 or 10.")
    assert "3 of 4 → 7.5" in rules and "never told it" in rules
    system, user = judge_messages("Q?", "E.", "A.")
    assert rules in system["content"] and "either 55 or 50 g" in system["content"]
    assert user["content"] == "Question: Q?\nCorrect answer: E.\nThe assistant's reply:\nA."
    with pytest.raises(ValueError, match="grading rules"):
        grading_rules("# nothing here")


def test_make_judge_picks_the_rules_judge_offline() -> None:
    assert isinstance(make_judge(None, None), RulesJudge)
    assert isinstance(make_judge("scripted/judge", None), RulesJudge)
    assert isinstance(make_judge("scripted/recall", None), ModelJudge)
