"""Directive lines and the replay of the expected sheets (engine/benchmark/directives.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.benchmark.directives import (
    Directive,
    directives_of,
    ever_existing_facts,
    expected_fact,
    expected_facts,
    phase_directives,
    phase_lines,
)
from engine.benchmark.loader import load_with_problems
from engine.benchmark.model import Benchmark
from engine.benchmark.validate import validate_benchmark

ROOT = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(scope="module")
def max_bench() -> Benchmark:
    bench, problems = validate_benchmark(ROOT / "max")
    assert problems == [] and bench is not None
    return bench


def phase_titled(bench: Benchmark, title: str) -> int:
    return next(p.index for p in bench.phases if p.title == title)


def line_of(bench: Benchmark, index: int, start: str) -> int:
    return next(n for n, text in phase_lines(bench, bench.phases[index]) if text.startswith(start))


def test_adds_get_the_ids_of_the_replay_reusing_deleted_ones(max_bench: Benchmark) -> None:
    directives = phase_directives(max_bench)
    assert set(directives) == {p.index for p in max_bench.phases}  # every phase, most with no directives
    wine = directives[phase_titled(max_bench, "Renovation — a wine fridge")]
    assert wine == [
        Directive(
            "add",
            "kitchen",
            "1.8",
            "Built-in wine fridge, 45 cm wide — $330",
            line_of(max_bench, phase_titled(max_bench, "Renovation — a wine fridge"), "Add to"),
            1,
        )
    ]
    fridge_out = directives[phase_titled(max_bench, "Renovation — kitchen, the wine fridge")]
    assert [(d.kind, d.sheet, d.fact_id, d.category) for d in fridge_out] == [
        ("edit", "kitchen", "1.8", None),
        ("add", "kitchen", "1.8", 1),  # the pantry unit takes the wine fridge's freed id
    ]
    assert fridge_out[0].text == "—" and fridge_out[1].text.startswith("Pull-out pantry unit")
    assert fridge_out[0].line < fridge_out[1].line
    led = directives[phase_titled(max_bench, "Renovation — kitchen lighting")]
    assert [(d.kind, d.fact_id) for d in led] == [("add", "1.9")]  # no deleted id left: highest + 1
    insurance = directives[phase_titled(max_bench, "Trip — reconciling the budget")]
    assert [(d.sheet, d.fact_id) for d in insurance] == [("trip", "2.6")]  # the Red Tour's freed id


def test_directive_text_keeps_templates_and_file_lines(max_bench: Benchmark) -> None:
    index = phase_titled(max_bench, "Health — a return")
    found = phase_directives(max_bench)[index]
    assert [(d.kind, d.sheet, d.fact_id) for d in found] == [
        ("edit", "health", "3.1"),
        ("add", "health", "2.5"),
        ("edit", "health", "1.4"),
    ]
    assert found[2].text.startswith("Next GP check-up — {{FUTURE:10:days}}")  # templates not rendered
    chapter = (ROOT / "max" / "chapter8.md").read_text(encoding="utf-8").splitlines()
    assert all(chapter[d.line - 1].startswith(("Edit ", "Add to ")) for d in found)


def test_vitamin_d_is_2000_iu_at_check_8_1_and_4000_at_20_3(max_bench: Benchmark) -> None:
    def expected_at(check_id: str) -> str:
        phase = next(p for p in max_bench.phases if any(c.id == check_id for c in p.checks))
        check = max_bench.check(check_id)
        assert check is not None
        return expected_facts(max_bench, phase.index, before_line=check.line)[("health", "3.1")]

    assert expected_at("8.1") == "Vitamin D — 2000 IU a day"
    assert expected_at("20.3").startswith("Vitamin D — 4000 IU a day")


def test_expected_facts_before_and_after_a_directive_line_within_a_phase(max_bench: Benchmark) -> None:
    index = phase_titled(max_bench, "Renovation — kitchen, the wine fridge")
    edit, add = phase_directives(max_bench)[index]
    before = expected_facts(max_bench, index, before_line=edit.line)
    between = expected_facts(max_bench, index, before_line=add.line)
    after = expected_facts(max_bench, index)
    assert before[("kitchen", "1.8")] == "Built-in wine fridge, 45 cm wide — $330"
    assert between[("kitchen", "1.8")] == "—"  # deleted facts are included
    assert after[("kitchen", "1.8")] == add.text
    assert expected_facts(max_bench, index + 1, before_line=0) == after  # the next phase starts from there
    assert ("kitchen", "1.9") not in after  # added only in chapter 16
    assert expected_facts(max_bench, len(max_bench.phases) - 1)[("kitchen", "1.9")].startswith("LED strip")


def test_expected_facts_cover_every_fact_of_every_sheet(max_bench: Benchmark) -> None:
    start = expected_facts(max_bench, 0, before_line=0)
    originals = {
        (name, f.id): f.text for name, s in max_bench.sheets.items() for c in s.categories for f in c.facts
    }
    assert start == originals
    end = expected_facts(max_bench, len(max_bench.phases) - 1)
    assert set(originals) <= set(end)
    assert end[("balcony", "1.3")] == "—" and end[("trip", "2.6")] == "Travel insurance for both of us — $70"
    end[("health", "3.1")] = "changed"  # callers get their own dict
    assert expected_facts(max_bench, len(max_bench.phases) - 1)[("health", "3.1")] != "changed"
    known = ever_existing_facts(max_bench)
    assert {"1.8", "1.9"} <= known["kitchen"] and "4.3" in known["car"] and "2.6" in known["health"]


def test_phase_directives_are_computed_once_per_benchmark(
    max_bench: Benchmark, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = phase_directives(max_bench)
    monkeypatch.setattr("engine.benchmark.directives.phase_lines", lambda *_: [])  # no second read
    assert phase_directives(max_bench) == first
    first[0].append(Directive("edit", "x", "1.1", "y", 1))
    assert phase_directives(max_bench)[0] == []


FILES = {
    "benchmark.json": '{"chapters": ["chapter1.md"], "time_master": true, "time_gate": true, '
    '"start_time": "2026-03-01 07:00"}',
    "profile.md": "# Pat\n\n## 1. Me\n1.1 Pat Lee, 40\n1.2 Lives in York\n\n## 2. Pets\n2.1 A cat\n2.2 —\n",
    "chapter1.md": (
        "## Day 1\n"  # 1
        "```js\n"  # 2
        'vars.require_all_facts = "profile";\n'  # 3
        "```\n"  # 4
        "2026-03-01, Sun\n"  # 5
        "08:00 — Edit profile 1.2: Lives in Leeds\n"  # 6  an anchor's action line is read too
        "- Add to profile category 2: A dog, Rex\n"  # 7  list marks are stripped
        "  * Add to profile category 2: A goldfish\n"  # 8
        "Add to profile category 9: no such category\n"  # 9  its id cannot be given
        "Mention that Edit profile 1.1: is not a directive\n"  # 10
    ),
}


def write(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_list_marks_and_anchors_are_stripped_and_bad_adds_get_no_id(tmp_path: Path) -> None:
    bench, _ = load_with_problems(write(tmp_path, FILES))
    assert bench is not None
    assert [n for n, _ in phase_lines(bench, bench.phases[0])] == [5, 6, 7, 8, 9, 10]  # the js block left out
    assert [(d.kind, d.sheet, d.fact_id, d.line, d.category) for d in phase_directives(bench)[0]] == [
        ("edit", "profile", "1.2", 6, None),
        ("add", "profile", "2.2", 7, 2),  # the lowest deleted id
        ("add", "profile", "2.3", 8, 2),
        ("add", "profile", "", 9, 9),
    ]
    facts = expected_facts(bench, 0)
    assert facts[("profile", "1.2")] == "Lives in Leeds" and facts[("profile", "2.3")] == "A goldfish"
    assert expected_facts(bench, 0, before_line=8)[("profile", "2.2")] == "A dog, Rex"
    assert ("profile", "2.3") not in expected_facts(bench, 0, before_line=8)


def test_an_edit_of_a_fact_that_does_not_exist_yet_is_a_problem(tmp_path: Path) -> None:
    files = dict(
        FILES,
        **{
            "chapter1.md": FILES["chapter1.md"].replace(
                "Add to profile category 9: no such category\n",
                "Edit profile 2.4: too early\nAdd to profile category 2: Fish\n",
            )
        },
    )
    _, problems = validate_benchmark(write(tmp_path, files))
    lines = [(Path(p.file).name, p.line) for p in problems]
    assert lines == [("chapter1.md", 6), ("chapter1.md", 9), ("chapter1.md", 11)]
    # line 6 edits profile 1.2 before the phase's require_all_facts has told it (engine/benchmark/telling.py)
    assert problems[0].message.startswith("Edit profile 1.2: the `profile` sheet is not told before")
    assert problems[1].message.startswith("Edit profile 2.4: the sheet has no fact 2.4 at this point")
    assert problems[2].message.startswith("'Edit' in the middle of a line is never carried out")


@pytest.mark.parametrize("name", ["demo", "max", "multiday"])
def test_one_facts_expected_text_agrees_with_the_whole_replay_at_every_check(name: str) -> None:
    bench, problems = validate_benchmark(ROOT / name)
    assert problems == [] and bench is not None
    directed = {(d.sheet, d.fact_id) for p in bench.phases for d in directives_of(bench, p.index)}
    for phase in bench.phases:
        for check in phase.checks:
            replayed = expected_facts(bench, phase.index, before_line=check.line)
            known = replayed.keys() | directed  # facts added only later too: absent at this point
            for sheet, fact_id in known:
                assert expected_fact(bench, phase.index, check.line, sheet, fact_id) == replayed.get(
                    (sheet, fact_id)
                ), (name, check.id, sheet, fact_id)
    assert directives_of(bench, len(bench.phases) + 5) == []
