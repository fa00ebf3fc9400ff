"""Lints of a phase's text (engine/benchmark/lints.py): directive words the scripted persona would misread
and sheet changes told only in prose are warnings at ``file:line``, never problems; an ``Edit`` inside a line
stays an error."""

from __future__ import annotations

from pathlib import Path

from engine.benchmark.model import Problem
from engine.benchmark.validate import load_benchmark, validate

PROSE_SEED = Path(__file__).parent / "benchmarks" / "prose_seed"

FILES = {
    "benchmark.json": '{"chapters": ["chapter1.md"]}',
    "profile.md": "# Pat\n\n## 1. Me\n1.1 Pat Lee, 40\n1.2 Lives in York\n\n## 2. Pets\n2.1 A cat\n",
    "oven.md": "# Oven\n\n## 1. Purchase\n1.1 A Wachtel Piccolo deck oven\n1.2 The oven costs 4,800 EUR\n",
    "KEY.md": "# Key\n",  # a key without checks: no warning about a missing key
}


def warnings(tmp_path: Path, chapter: str, **changes: str) -> list[Problem]:
    for name, text in {**FILES, "chapter1.md": chapter, **changes}.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    found = validate(tmp_path)
    assert found.problems == [], [str(p) for p in found.problems]
    load_benchmark(tmp_path)  # warnings never refuse a run
    return found.warnings


def where(found: list[Problem]) -> list[tuple[str, int]]:
    return [(Path(p.file).name, p.line) for p in found]


# ---- directive placement: only the scripted persona misreads these --------------------------------

WRAPPED = (
    "## Day\n"  # 1
    "You send nothing at all today. You ran 5 km on the farm lanes; you will\n"  # 2
    "tell the assistant tomorrow. Just wait and move on.\n"  # 3  lower-case wrap
    "Lena measured the niche and the fridge does not fit, so\n"  # 4
    "Say it is struck out.\n"  # 5  a Say continuing prose
    "\n"  # 6
    "Giorgi measured the niche — it doesn't fit. Say\n"  # 7  a Say at the end of prose
    "the wine fridge is struck out of the kitchen.\n"  # 8
    "\n"  # 9
    'Then decide, and send the deposit. Say: "We take it."\n'  # 10 a Say inside prose
    "\n"  # 11
    "Say: \"I misremembered back then — the vet's note says\n"  # 12
    '50 g a day."\n'  # 13 a Say on two lines
    "\n"  # 14
    "Prose before an edit.\n"  # 15
    "Edit profile 1.2: Lives in Leeds\n"  # 16 an Edit right after prose
)
FINE = (
    "## Day\n"
    "Say hello.\n"  # the first line
    "Ask how it is going.\n"  # after a directive
    "Edit profile 1.2: Lives in Leeds\n"
    "\n"
    "Some prose that ends here.\n"
    "\n"
    "Tell the `profile` sheet: every fact, with the numbers, and the\n"
    "pets at the end.\n"  # a sheet to tell may wrap
    "- Say one thing.\n"  # list items are their own lines
    "- Say another.\n"
    "Introduce yourself; tell it only what the sheet says.\n"
    "❓ 1.1 [RECALL] Where do I live? Correct answer: Leeds.\n"
    "Say you're done.\n"  # after a check
)


def test_directive_words_where_the_scripted_persona_misreads_them_are_warnings(tmp_path: Path) -> None:
    found = warnings(tmp_path, WRAPPED)
    assert where(found) == [("chapter1.md", n) for n in (3, 5, 7, 10, 13, 16)]
    wrapped = (
        "a directive word starts a wrapped line: the scripted persona would send a fragment of the prose; put "
        "the directive on its own line (blank line before) or re-wrap the paragraph"
    )
    assert [p.message for p in found if p.line in (3, 5, 16)] == [wrapped] * 3
    assert found[2].message.startswith(
        "'Say' in the middle of a line is never carried out as a directive by the scripted persona"
    )
    assert found[3].message.startswith("'Say' in the middle of a line")
    assert found[4].message.startswith("a Say/Tell line continues on this line")
    key = "# Key\n\n## 1.1\nanswer: Leeds.\nuses: profile 1.2\n"
    assert warnings(tmp_path, FINE, **{"KEY.md": key}) == []


def test_the_directive_lints_apply_to_anchor_lines_too(tmp_path: Path) -> None:
    chapter = (
        "## Day 1\n2026-03-05, Thu\n"
        "18:30 — office day. The launch moved to Tuesday. Tell the assistant the new date.\n"  # 3 inside
        "19:00 — Tell the `profile` sheet.\n"  # a sheet mention is fine
        "21:00 — no signal:\n"
        "tell the assistant tomorrow.\n"  # 6 a wrap after an anchor
    )
    config = '{"chapters": ["chapter1.md"], "time_master": true, "time_gate": true, "start_time": "2026-03-05 08:00"}'
    found = warnings(tmp_path, chapter, **{"benchmark.json": config})
    assert where(found) == [("chapter1.md", 3), ("chapter1.md", 6)]
    assert found[0].message.startswith("'Tell' in the middle of a line")


def test_an_edit_inside_a_line_stays_an_error(tmp_path: Path) -> None:
    for name, text in {
        **FILES,
        "chapter1.md": "## Day\nYou moved. Edit profile 1.2: Lives in Leeds\n",
    }.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    found = validate(tmp_path)
    assert where(found.problems) == [("chapter1.md", 2)]
    assert found.problems[0].message.startswith("'Edit' in the middle of a line is never carried out")
    assert found.warnings == []  # not reported a second time as a prose change


# ---- sheet changes told only in prose --------------------------------------------------------------


def test_the_prose_seed_warns_of_its_two_prose_changes_and_the_missing_key() -> None:
    found = validate(PROSE_SEED)
    assert found.problems == []
    assert where(found.warnings) == [("chapter2.md", 8), ("chapter2.md", 14), ("KEY.md", 0)]
    oven, staff, key = (p.message for p in found.warnings)
    assert oven == (
        "the text changes oven 1.2 (it holds 'The oven costs 4,800 EUR from the supplier Bakeline' here) in "
        "prose, with no directive line for it: the engine has no expected text to hold the persona's sheet to "
        "and the scripted persona never makes the change; add 'Edit oven 1.2: <the new text>' on its own line"
    )
    assert "'Edit staff 1.3: <the new text>'" in staff  # named by the sheet, found by its words
    assert key.startswith("no KEY.md")
    assert load_benchmark(PROSE_SEED).name == "prose_seed"


def test_a_fact_named_in_prose_in_several_ways(tmp_path: Path) -> None:
    chapter = (
        "## Prices\n"  # 1
        "The supplier called. Update the oven sheet fact 1.2 to 5,100 EUR.\n"  # 2
        "\n"
        "Also fact 1.1 of the `oven` sheet is now a Piccolo Plus; oven 1.2 again.\n"  # 4: 1.1 new, 1.2 seen
        "\n"
        "Pat moved: change profile.md 1.2 and add a dog as profile 2.2.\n"  # 6: an edit and a new fact
        "\n"
        "The oven sheet has 4.5 stars and 1.9 ratings.\n"  # 8: not facts of the sheet, no change word
    )
    found = warnings(tmp_path, chapter)
    assert where(found) == [("chapter1.md", n) for n in (2, 4, 6, 6)]
    assert ["oven 1.2" in found[0].message, "oven 1.1" in found[1].message] == [True, True]
    assert "'Edit profile 1.2: <the new text>'" in found[2].message
    assert "'Add to profile category 2: <the new fact>'" in found[3].message


def test_a_change_named_with_a_directive_is_not_warned(tmp_path: Path) -> None:
    chapter = (
        "## Prices\n"
        "The supplier called. Update the oven sheet fact 1.2 to 5,100 EUR.\n"
        "\n"
        "Edit oven 1.2: The oven costs 5,100 EUR (was 4,800 EUR)\n"
        "\n"
        "Update the profile sheet too: Pat has a dog now.\n"
        "\n"
        "Add to profile category 2: A dog, Rex\n"
    )
    assert warnings(tmp_path, chapter) == []


def test_a_sheet_named_for_a_change_without_a_fact_id(tmp_path: Path) -> None:
    chapter = (
        "## News\n"
        "Update your `oven` sheet with the delivery date.\n"  # 2: no fact's words: any id
        "\n"
        "Please correct the profile sheet: Pat lives in Leeds now.\n"  # 4: 'lives' points to profile 1.2
        "\n"
        "Tell the `oven` sheet again.\n"  # telling a sheet is no change
    )
    found = warnings(tmp_path, chapter)
    assert where(found) == [("chapter1.md", 2), ("chapter1.md", 4)]
    assert "the text changes the oven sheet in prose" in found[0].message
    assert "'Edit oven <id>: <the new text>'" in found[0].message
    assert "'Edit profile 1.2: <the new text>'" in found[1].message


def test_telling_a_sheet_or_reading_it_is_no_change(tmp_path: Path) -> None:
    chapter = (
        "## Tell\n"
        "Tell the `oven` sheet: facts 1.1 and 1.2, in your own words.\n"
        "\n"
        "The oven sheet's address line and the profile sheet settings stay as they are.\n"
    )
    assert warnings(tmp_path, chapter) == []
