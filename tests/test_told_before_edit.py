"""``validate`` on what the story has told (issue 31, items 5 and 9): an ``Edit`` of a fact not told at its line
is an error at ``file:line`` (engine/benchmark/telling.py), and checks without ``[TYPE]`` tags are warned of
once, their inferred kinds counted apart in the summary (engine/benchmark/validate.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.benchmark.model import BenchmarkError, Problem
from engine.benchmark.validate import load_benchmark, main_validate, summary, validate

ROOT = Path(__file__).resolve().parent.parent
PROFILE = "# Ana\n\n## 1. About me\n1.1 Ana Ruiz, 35, a vet in Porto\n1.2 Lives in a flat in Foz\n"
GARDEN = (
    "# Garden\n\n## 1. The plot\n1.1 The allotment rent is $60 a year\n1.2 Three rows of potatoes\n"
    "1.3 The shed key hangs behind Rui's door\n"
)


def write(tmp_path: Path, *chapters: str, config: str = "") -> Path:
    names = [f"chapter{n}.md" for n in range(1, len(chapters) + 1)]
    for old in tmp_path.glob("chapter*.md"):  # a test writes several benchmarks in its folder
        old.unlink()
    (tmp_path / "benchmark.json").write_text(config or json.dumps({"chapters": names}))
    (tmp_path / "profile.md").write_text(PROFILE)
    (tmp_path / "garden.md").write_text(GARDEN)
    for name, text in zip(names, chapters, strict=True):
        (tmp_path / name).write_text(text)
    return tmp_path


def problems(tmp_path: Path, *chapters: str, config: str = "") -> list[Problem]:
    return validate(write(tmp_path, *chapters, config=config), warnings=False).problems


def where(found: list[Problem]) -> list[tuple[str, int]]:
    return [(Path(p.file).name, p.line) for p in found]


RENT = "Edit garden 1.1: The allotment rent is $75 a year (was $60)\n"


def test_an_edit_before_its_sheet_is_told_is_an_error_at_its_line(tmp_path: Path) -> None:
    found = problems(tmp_path, "## Start\nSay hello.\n" + RENT + "Tell the `garden` sheet.\n")
    assert where(found) == [("chapter1.md", 3)]
    assert found[0].message == (
        "Edit garden 1.1: the `garden` sheet is not told before this line, so the agent would hear the new text "
        "first, then a change from a value it never heard; tell it first ('Tell the `garden` sheet.' on a line "
        'above, or vars.require_all_facts = "garden" in an earlier phase), or write the new text in garden.md'
    )
    assert problems(tmp_path, "## Start\nTell the `garden` sheet.\n" + RENT) == []


def test_a_deletion_of_a_fact_never_told_is_an_error_too(tmp_path: Path) -> None:
    found = problems(tmp_path, "## Start\nSay: the potatoes are off.\nEdit garden 1.2: —\n")
    assert where(found) == [("chapter1.md", 3)]
    assert found[0].message.startswith("Edit garden 1.2: —: the `garden` sheet is not told before this line")
    assert "the cancellation of a fact it never heard" in found[0].message
    assert found[0].message.endswith("or remove the fact from garden.md")


def test_require_all_facts_tells_a_sheet_by_the_end_of_its_phase(tmp_path: Path) -> None:
    told = '## Garden\n```js\nvars.require_all_facts = ["garden"];\n```\nTalk about the allotment.\n'
    assert problems(tmp_path, told, "## Later\n" + RENT) == []
    found = problems(tmp_path, told + RENT)  # the same phase: the gate tells it in any order, maybe after
    assert where(found) == [("chapter1.md", 6)]
    assert "(this phase's vars.require_all_facts tells it only by the phase's end)" in found[0].message
    assert problems(tmp_path, told + "Tell the `garden` sheet.\n" + RENT) == []


def test_a_told_fact_can_be_edited_though_its_sheet_was_not_told(tmp_path: Path) -> None:
    said = "## Start\nSay: My allotment rent is $60 a year.\n" + RENT  # states 1.1: every number, its words
    assert problems(tmp_path, said) == []
    other = "## Start\nSay: My allotment rent is $65 a year.\n" + RENT  # another value: not 1.1
    assert where(problems(tmp_path, other)) == [("chapter1.md", 3)]
    key = "## Start\nMention that the shed key hangs behind Rui's door.\nEdit garden 1.3: The key is in the shed\n"
    assert problems(tmp_path, key) == []  # a fact without numbers: by its words
    prose = "## Start\nThe allotment rent is $60 a year, you think.\n" + RENT  # prose is not sent
    assert where(problems(tmp_path, prose)) == [("chapter1.md", 3)]


def test_an_added_or_edited_fact_is_told_by_its_own_gate(tmp_path: Path) -> None:
    chapter = (
        "## Start\n"
        "Add to garden category 1: A water butt by the shed — $35\n"  # 2: garden 1.4, told by its gate
        "Edit garden 1.4: A bigger water butt by the shed — $50\n"  # 3: fine
        "Edit garden 1.1: The rent is $75 a year\n"  # 4: 1.1 itself was never told
        "Edit garden 1.1: The rent is $80 a year\n"  # 5: told after line 4's change
    )
    found = problems(tmp_path, chapter)
    assert where(found) == [("chapter1.md", 4)]


def test_told_in_an_anchor_line_or_a_later_chapter(tmp_path: Path) -> None:
    config = (
        '{"chapters": ["chapter1.md", "chapter2.md"], "time_master": true, "time_gate": true,'
        ' "start_time": "2026-03-01 08:00"}'
    )
    day1 = "## Day 1\n2026-03-01, Sun\n09:00 — at the plot. Tell the `garden` sheet.\n"
    day2 = "## Day 2\n2026-03-02, Mon\n10:00 — the rent letter came:\n" + RENT
    assert problems(tmp_path, day1, day2, config=config) == []
    early = "## Day 1\n2026-03-01, Sun\n09:00 — the rent letter came:\n" + RENT
    late = "## Day 2\n2026-03-02, Mon\n10:00 — at the plot. Tell the `garden` sheet.\n"
    assert where(problems(tmp_path, early, late, config=config)) == [("chapter1.md", 4)]


def test_the_profile_is_no_exception(tmp_path: Path) -> None:
    moved = "Edit profile 1.2: Lives in a house in Matosinhos (moved from Foz)\n"
    found = problems(tmp_path, "## Start\nSay hello.\n" + moved)
    assert where(found) == [("chapter1.md", 3)]
    assert "the `profile` sheet is not told" in found[0].message
    introduced = "## Start\nIntroduce yourself from your `profile` sheet.\n" + moved
    assert problems(tmp_path, introduced) == []


def test_an_edit_of_no_such_fact_is_reported_once(tmp_path: Path) -> None:
    found = problems(tmp_path, "## Start\nEdit garden 1.9: A pond\n")
    assert len(found) == 1 and found[0].message.startswith("Edit garden 1.9: the sheet has no fact 1.9")


def test_validate_prints_it_and_a_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = ROOT / "tests" / "broken_benchmarks" / "edit_before_told"
    monkeypatch.chdir(ROOT)
    assert main_validate([folder.relative_to(ROOT)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(
        "tests/broken_benchmarks/edit_before_told/chapter1.md:5: Edit garden 1.1: the `garden` sheet is not told"
    )
    with pytest.raises(BenchmarkError):
        load_benchmark(folder)


@pytest.mark.parametrize(
    "name", ["benchmarks/demo", "benchmarks/max", "benchmarks/multiday", "tests/benchmarks/seed_untagged"]
)
def test_the_shipped_benchmarks_tell_before_they_edit(name: str) -> None:
    assert validate(ROOT / name, warnings=False).problems == []


# ---- checks without [TYPE] tags ------------------------------------------------------------------------

CHECKS = (
    "## Start\nTell the `garden` sheet.\n"
    "❓ 1.1 [RECALL] How many rows of potatoes do I have? Correct answer: three.\n"  # 3
    "❓ 1.2 What do the rent and the water butt cost in all? Correct answer: $95.\n"  # 4
    "❓ 1.3 What is my plot number? Correct answer: you never told me.\n"  # 5
)


def test_untagged_checks_are_warned_of_once_and_counted_apart(tmp_path: Path) -> None:
    found = validate(write(tmp_path, CHECKS))
    assert found.problems == []
    untagged = [w for w in found.warnings if "[TYPE] tag" in w.message]
    assert where(untagged) == [("chapter1.md", 4)]  # once, at the first check without one
    assert untagged[0].message == (
        "2 of 3 checks have no [TYPE] tag (the first: 1.2): the report's per-type averages and its type filter "
        "then rest on kinds inferred from each question and correct answer (marked AGG~), which can miss one (a "
        "NEG whose cancellation neither text names); tag each check ('❓ 1.2 [AGG] …') to declare its kinds"
    )
    bench = load_benchmark(tmp_path)  # a warning never refuses a run
    assert summary(bench).splitlines()[-1] == "  checks: 3 (RECALL 1, AGG~ 1, VOID~ 1)"


def test_a_benchmark_with_every_check_tagged_gets_no_such_warning(tmp_path: Path) -> None:
    tagged = CHECKS.replace("❓ 1.2 ", "❓ 1.2 [AGG] ").replace("❓ 1.3 ", "❓ 1.3 [VOID] ")
    found = validate(write(tmp_path, tagged))
    assert not [w for w in found.warnings if "[TYPE] tag" in w.message]
    assert summary(load_benchmark(tmp_path)).splitlines()[-1] == "  checks: 3 (RECALL 1, AGG 1, VOID 1)"


def test_the_seed_format_benchmark_warns_that_none_is_tagged(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    assert main_validate([Path("tests/benchmarks/seed_untagged")]) == 0
    out = capsys.readouterr().out.splitlines()
    warned = [line for line in out if "[TYPE] tag" in line]
    assert len(warned) == 1
    assert warned[0].startswith(
        "tests/benchmarks/seed_untagged/chapter1.md:20: warning: none of the 8 checks has a [TYPE] tag"
    )
    assert "  checks: 8 (RECALL~ 3, AGG~ 2, NEG~ 1, VOID~ 1, HIST~ 1, SERIES~ 1)" in out
    assert out[-1] == "tests/benchmarks/seed_untagged: OK (2 warnings)"
