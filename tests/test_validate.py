"""Validation (SPEC §3.3): every broken benchmark reports its one mistake at the right file and line; warnings
(scripted-persona lints, sheet changes told only in prose, no KEY.md) never fail validate nor refuse a run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from engine_helpers import events, make_config, play

from engine.benchmark.model import BenchmarkError, Problem
from engine.benchmark.validate import (
    load_benchmark,
    main_validate,
    summary,
    validate,
    validate_benchmark,
)

BROKEN = Path(__file__).parent / "broken_benchmarks"
DEMO = Path(__file__).parent.parent / "benchmarks" / "demo"

# kind -> (file, line, message fragment); line 0 means the whole file
EXPECTED: dict[str, tuple[str, int, str]] = {
    "add_to_missing_category": ("chapter1.md", 5, "'garden' has no category 2"),
    "anchors_out_of_order": ("chapter1.md", 6, "time anchor 08:00 is earlier than 18:30"),
    "bad_start_time_format": ("benchmark.json", 3, "start_time '2026-03-01 8pm' is not a valid"),
    "check_malformed_id": ("chapter1.md", 5, "malformed check id 'one'"),
    "check_without_uses": (
        "chapter1.md",
        5,
        "check 1.1 declares no dependencies (add 'uses: <sheet> <id>, …'",
    ),
    "check_without_answer": ("chapter1.md", 5, "check 1.1 has no 'Correct answer:'"),
    "date_before_previous_phase": ("chapter1.md", 8, "date 2026-03-10 is earlier than 2026-03-11 08:00"),
    "date_before_start_time": ("chapter1.md", 4, "before start_time 2026-03-12 20:00"),
    "date_line_not_first": ("chapter1.md", 5, "date line must be the first line"),
    "edit_inside_a_line": ("chapter1.md", 5, "'Edit' in the middle of a line is never carried out"),
    "edit_before_told": ("chapter1.md", 5, "Edit garden 1.1: the `garden` sheet is not told before"),
    "duplicate_chapter_listing": ("benchmark.json", 3, "'chapter1.md' is listed twice"),
    "duplicate_check_id": ("chapter2.md", 5, "duplicate check id 1.1 (first at chapter1.md:5)"),
    "duplicate_fact_id": ("profile.md", 5, "duplicate fact id 1.1 (first on line 4)"),
    "empty_chapter": ("chapter1.md", 0, "no phases"),
    "empty_chapters_list": ("benchmark.json", 3, "chapters is empty"),
    "fact_before_category": ("garden.md", 2, "fact 1.1 before any category"),
    "fact_in_wrong_category": ("profile.md", 5, "fact 2.2 is under category 1"),
    "invalid_anchor_time": ("chapter1.md", 6, "invalid time 25:10"),
    "invalid_date": ("chapter1.md", 4, "invalid date '2026-02-30'"),
    "key_entry_without_answer": ("KEY.md", 3, "entry 1.1 has no 'answer:' line (write 'answer: York.'"),
    "js_bad_require_all_facts_value": ("chapter1.md", 5, "require_all_facts must be a sheet name"),
    "js_block_not_first": ("chapter1.md", 5, "js block runs only at the start of a phase"),
    "js_infinite_loop": ("chapter1.md", 4, "time limit"),
    "js_runtime_error": ("chapter1.md", 6, "ReferenceError: undefinedFunction is not defined"),
    "js_syntax_error": ("chapter1.md", 6, "SyntaxError"),
    "js_unclosed_block": ("chapter1.md", 4, "unclosed ```js block"),
    "js_unknown_bench_member": ("chapter1.md", 6, "unknown bench member 'reset'"),
    "js_unknown_vars_key": ("chapter1.md", 5, "unknown vars key 'require_facts'"),
    "malformed_benchmark_json": ("benchmark.json", 4, "malformed benchmark.json"),
    "malformed_category_heading": ("garden.md", 5, "malformed category heading '## Shed'"),
    "malformed_fact_id": ("profile.md", 5, "malformed fact id '1.x'"),
    "missing_chapter_file": ("benchmark.json", 2, "chapter file 'chapter2.md' does not exist"),
    "missing_chapters_key": ("benchmark.json", 1, "missing required key 'chapters'"),
    "missing_profile": ("profile.md", 0, "missing profile.md"),
    "phase_without_text": ("chapter1.md", 3, "no text for the persona"),
    "phase_without_title": ("chapter1.md", 3, "phase without a title"),
    "require_all_checks_without_checks": (
        "chapter1.md",
        4,
        "require_all_checks is set but phase 'Start' has no checks",
    ),
    "require_all_facts_missing_sheet": ("chapter1.md", 5, "names sheet 'garden', but there is no garden.md"),
    "sheet_without_title": ("garden.md", 1, "missing title"),
    "tell_missing_sheet": ("chapter1.md", 5, "refers to sheet 'garden', but there is no garden.md"),
    "template_bad_unit": ("garden.md", 4, "unknown unit 'fortnights'"),
    "time_gate_anchor_without_date": ("chapter1.md", 3, "time anchors without a date line"),
    "time_gate_without_start_time": ("benchmark.json", 3, "time_gate is on but start_time is missing"),
    "time_master_not_boolean": ("benchmark.json", 3, "time_master must be true or false"),
    "trap_type_as_check_type": ("chapter1.md", 5, "STALE is a trap type"),
    "unclosed_template": ("chapter1.md", 5, "unclosed template"),
    "unknown_benchmark_key": ("benchmark.json", 3, "unknown key 'titel' (did you mean 'title'?)"),
    "unknown_check_type": ("chapter1.md", 5, "unknown check type 'RECAL'"),
    "unknown_template": ("chapter1.md", 4, "unknown template {{TOMORROW}}"),
    "unknown_template_in_instructions": ("instructions.md", 2, "unknown template {{NOW}}"),
    "unknown_template_in_profile": ("profile.md", 5, "unknown template {{CITY}}"),
    "unlisted_chapter_file": ("chapter2.md", 0, "not listed in benchmark.json chapters"),
    "uses_unknown_fact": (
        "KEY.md",
        5,
        "uses names profile 1.3, which is neither in profile.md nor added by any",
    ),
    "weekday_mismatch": ("chapter1.md", 4, "2026-03-10 is a Tuesday, not 'Wed'"),
}


def test_every_broken_benchmark_has_an_expectation() -> None:
    folders = {p.name for p in BROKEN.iterdir() if p.is_dir()}
    assert folders == set(EXPECTED)
    assert len(folders) >= 22


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_broken_benchmark_reports_its_mistake(kind: str) -> None:
    file, line, fragment = EXPECTED[kind]
    _, problems = validate_benchmark(BROKEN / kind)
    assert len(problems) == 1, [str(p) for p in problems]
    problem = problems[0]
    assert Path(problem.file) == BROKEN / kind / file
    assert problem.line == line
    assert fragment in problem.message


@pytest.mark.parametrize("kind", ["missing_profile", "js_syntax_error", "duplicate_check_id"])
def test_load_benchmark_raises_with_every_problem(kind: str) -> None:
    with pytest.raises(BenchmarkError) as caught:
        load_benchmark(BROKEN / kind)
    assert [p.line for p in caught.value.problems] == [EXPECTED[kind][1]]


def test_demo_validates_cleanly() -> None:
    bench, problems = validate_benchmark(DEMO)
    assert problems == []
    assert bench is not None
    assert load_benchmark(DEMO).name == "demo"


def test_summary_counts_everything() -> None:
    bench = load_benchmark(DEMO)
    assert summary(bench).splitlines() == [
        "demo: 3 chapters, 5 phases, 3 js blocks, 0 time anchors",
        "  facts: bike 5, garden 5, profile 3",
        "  checks: 6 (RECALL 1, AGG 1, NEG 1, VOID 1, HIST 1, SERIES 1)",
    ]


def test_problems_collected_not_stopping_at_first(tmp_path: Path) -> None:
    (tmp_path / "benchmark.json").write_text('{"chapters": ["chapter1.md"], "titel": "x"}')
    (tmp_path / "profile.md").write_text("# P\n\n## 1. Me\n1.x bad\n1.1 Pat\n")
    (tmp_path / "chapter1.md").write_text("## A\nSay: {{SOON}}\n❓ 1.1 [FOO] Q?\n```js\nx\n```\n")
    _, problems = validate_benchmark(tmp_path)
    assert [(Path(p.file).name, p.line) for p in problems] == [
        ("benchmark.json", 1),
        ("chapter1.md", 2),
        ("chapter1.md", 3),
        ("chapter1.md", 3),
        ("chapter1.md", 4),
        ("profile.md", 4),
    ]


def test_main_validate_prints_relative_locations_and_exit_status(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(BROKEN.parent.parent)
    status = main_validate([Path("tests/broken_benchmarks/weekday_mismatch"), DEMO])
    out = capsys.readouterr().out.splitlines()
    expected = os.path.join("tests", "broken_benchmarks", "weekday_mismatch", "chapter1.md")
    assert status == 1
    assert out[0] == f"{expected}:4: 2026-03-10 is a Tuesday, not 'Wed'"
    assert "tests/broken_benchmarks/weekday_mismatch: 1 problem" in out
    assert "benchmarks/demo: OK" in out
    assert main_validate([DEMO]) == 0


def test_missing_folder_is_a_problem(tmp_path: Path) -> None:
    bench, problems = validate_benchmark(tmp_path / "nope")
    assert bench is None
    assert "no such benchmark folder" in problems[0].message


# ---- KEY.md dependencies and directive placement, on small benchmarks written here -------------------

SMALL = {
    "benchmark.json": '{"chapters": ["chapter1.md"]}',
    "profile.md": "# Pat\n\n## 1. Me\n1.1 Pat Lee, 40\n1.2 Lives in York\n\n## 2. Pets\n2.1 A cat\n",
    "chapter1.md": (
        "## Start\n"  # 1
        "Tell the `profile` sheet.\n"  # 2
        "\n"  # 3
        "Add to profile category 2: A dog, Rex\n"  # 4
        "❓ 1.1 [RECALL] Where do I live? Correct answer: York.\n"  # 5
        "❓ 1.2 [RECALL] What pets do I have? Correct answer: a cat and a dog.\n"  # 6
    ),
    "KEY.md": (
        "# Key\n\n## 1.1\nanswer: York.\nuses: profile 1.2\n\n"
        "## 1.2\nanswer: a cat and a dog.\nuses: profile 2.1, 2.2\n"
    ),
}


def small(tmp_path: Path, **changes: str) -> list[Problem]:
    for name, text in {**SMALL, **changes}.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return validate_benchmark(tmp_path)[1]


def where(problems: list[Problem]) -> list[tuple[str, int]]:
    return [(Path(p.file).name, p.line) for p in problems]


def test_a_small_benchmark_with_dependencies_is_clean(tmp_path: Path) -> None:
    assert small(tmp_path) == []  # profile 2.2 exists: the Add line creates it


def test_a_check_without_uses_is_an_error_at_its_chapter_line(tmp_path: Path) -> None:
    key = "# Key\n\n## 1.1\nanswer: York.\n\n## 1.2\nanswer: a cat and a dog.\nuses: none\n"
    problems = small(tmp_path, **{"KEY.md": key})
    assert where(problems) == [("chapter1.md", 5)]
    assert problems[0].message == (
        "check 1.1 declares no dependencies (add 'uses: <sheet> <id>, …' naming the facts its answer reads "
        "under '## 1.1' in KEY.md; 'uses: none' only when it reads no fact, e.g. a VOID check)"
    )


def test_without_a_key_a_benchmark_is_valid_and_warned_once(tmp_path: Path) -> None:
    small(tmp_path)
    (tmp_path / "KEY.md").unlink()
    found = validate(tmp_path)
    assert found.problems == []
    [warning] = found.warnings  # once, not per check
    assert (Path(warning.file).name, warning.line) == ("KEY.md", 0)
    assert warning.message.startswith("no KEY.md: the premise of each grade is checked from the checks'")
    for addition in ("'uses:'", "'sum:'", "'trap:'"):
        assert addition in warning.message
    assert load_benchmark(tmp_path).name == tmp_path.name  # a run is not refused


def test_an_entry_without_answer_is_an_error_at_its_key_line(tmp_path: Path) -> None:
    key = SMALL["KEY.md"].replace("answer: a cat and a dog.\n", "")
    problems = small(tmp_path, **{"KEY.md": key})
    assert where(problems) == [("KEY.md", 7)]
    assert problems[0].message == (
        "entry 1.2 has no 'answer:' line (write 'answer: a cat and a dog.', the check's Correct answer)"
    )


def test_uses_naming_an_unknown_fact_or_sheet_is_an_error_at_its_key_line(tmp_path: Path) -> None:
    key = (
        SMALL["KEY.md"].replace("profile 1.2\n", "profile 1.2, 1.9\n").replace("profile 2.1, 2.2", "pets 2.1")
    )
    problems = small(tmp_path, **{"KEY.md": key})
    assert where(problems) == [("KEY.md", 5), ("KEY.md", 9)]
    assert problems[0].message == (
        "entry 1.1: uses names profile 1.9, which is neither in profile.md nor added by any 'Add to profile' line"
    )
    assert problems[1].message.startswith("entry 1.2: uses names sheet 'pets', which does not exist")


def test_uses_naming_a_fact_added_only_after_the_check_is_an_error(tmp_path: Path) -> None:
    chapter = SMALL["chapter1.md"].replace("Add to profile category 2: A dog, Rex\n", "") + (
        "\nAdd to profile category 2: A dog, Rex\n"
    )
    problems = small(tmp_path, **{"chapter1.md": chapter})
    assert where(problems) == [("KEY.md", 9)]
    assert (
        problems[0].message
        == "entry 1.2: uses names profile 2.2, which is added only after check 1.2 is asked"
    )


def test_main_validate_prints_warnings_and_passes(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(BROKEN.parent.parent)
    assert main_validate([Path("tests/benchmarks/prose_seed")]) == 0
    out = capsys.readouterr().out.splitlines()
    warnings = [line for line in out if ": warning: " in line]
    assert [line.split(": warning: ")[0] for line in warnings] == [
        "tests/benchmarks/prose_seed/chapter2.md:8",
        "tests/benchmarks/prose_seed/chapter2.md:14",
        "tests/benchmarks/prose_seed/KEY.md",
    ]
    assert out[-1] == "tests/benchmarks/prose_seed: OK (3 warnings)"


def test_main_validate_skips_a_file_beside_the_benchmark_folders(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cases = tmp_path / "judge_cases.jsonl"
    cases.write_text("{}\n")
    assert main_validate([DEMO, cases]) == 0  # `mmb-tui validate benchmarks/*`
    assert f"{cases}: skipped (a file, not a benchmark folder)" in capsys.readouterr().out.splitlines()
    assert main_validate([tmp_path / "missing"]) == 1  # a folder that is not there is still a problem


@pytest.mark.parametrize("name", ["demo", "max", "multiday"])
def test_the_shipped_benchmarks_have_no_problem_and_no_warning(name: str) -> None:
    found = validate(DEMO.parent / name)
    assert found.problems == [] and found.warnings == [], [str(p) for p in found.problems + found.warnings]


async def test_a_seed_format_benchmark_plays_to_the_end(tmp_path: Path) -> None:
    """No KEY.md, changes in prose, warnings of the scripted persona's lints: `mmb-tui run` plays it."""
    config = make_config(
        tmp_path, {"p": {"benchmark": "prose_seed", "agent": "chatbot", "model": "scripted/recall"}}
    )
    await play(config, "p")
    ended = events(config, "p")[-1]
    assert ended.kind == "run_ended" and ended.reason == "finished", ended
