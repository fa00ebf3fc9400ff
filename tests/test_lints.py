"""Lints of a phase's text (engine/benchmark/lints.py): directive words the scripted persona would misread
and sheet changes told only in prose are warnings at ``file:line``, never problems; an ``Edit`` inside a line
stays an error. The changes read from what the prose says (lint_prose.py) are tested on many wordings here,
on labeled benchmarks in tests/test_lint_corpus.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.benchmark.lints import prose_changes
from engine.benchmark.model import Problem
from engine.benchmark.validate import load_benchmark, validate

PROSE_SEED = Path(__file__).parent / "benchmarks" / "prose_seed"

FILES = {
    "benchmark.json": '{"chapters": ["chapter0.md", "chapter1.md"]}',
    # both sheets told before chapter 1 edits them (an Edit of a fact never told is an error: telling.py)
    "chapter0.md": "## Hello\nTell the `profile` sheet.\n\nTell the `oven` sheet.\n",
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
    config = '{"chapters": ["chapter0.md", "chapter1.md"], "time_master": true, "time_gate": true, "start_time": "2026-03-05 08:00"}'
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
        "prose, to 5,100 EUR, with no directive line for it: the engine has no expected text to hold the "
        "persona's sheet to and the scripted persona never makes the change; add 'Edit oven 1.2: <the new "
        "text>' on its own line"
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


# ---- changes told in prose, read from what the prose says (lint_prose.py) -------------------------

SHEETS = {
    "benchmark.json": '{"chapters": ["chapter0.md", "chapter1.md"]}',
    "chapter0.md": "## Hello\nTell the `profile` sheet.\n\nTell the `trip` sheet.\n\nTell the `home` sheet.\n",
    "profile.md": "# Kim\n\n## 1. Me\n1.1 Kim Sato, 29, a pharmacist in Porto\n1.2 I live in Matosinhos with my cat Miso\n",
    "trip.md": (
        "# Japan trip\n\n## 1. Travel\n"
        "1.1 Flight fare Lisbon → Tokyo — €290 return\n"
        "1.2 We fly out on Tuesday, 12 May\n"
        "1.3 The ryokan in Kyoto — $180 a night, 3 nights\n"
        "1.4 Japan Rail pass — 7 days, €310\n\n"
        "## 2. Extras\n"
        "2.1 A tea ceremony in Uji — €45\n"
        "2.2 Sumo tickets for the Saturday — €120\n"
    ),
    "home.md": (
        "# Home\n\n## 1. Bills\n"
        "1.1 Rent — €950 a month\n"
        "1.2 Gym membership at Fitness Hut — €35 a month\n"
        "1.3 Internet from MEO — €32 a month\n"
        "1.4 Pool membership at the same club — €35 a month\n\n"
        "## 2. Kitchen\n"
        "2.1 The new oven costs 4,800 EUR\n"
        "2.2 The oven is delivered on Thursday at 10:00\n"
    ),
    "KEY.md": "# Key\n",
}

CHANGED = [
    ("The oven is 5,100 now.", "home 2.1"),
    ("The fare went up to €320.", "trip 1.1"),
    ("Our flight got moved to 19 May.", "trip 1.2"),
    ("We're paying $210 a night for the ryokan instead of $180.", "trip 1.3"),
    ("The rent went down to €900 a month.", "home 1.1"),
    ("I switched the internet to Vodafone, €28 a month.", "home 1.3"),
    ("Changed the rail pass to a 14-day one, €490.", "trip 1.4"),
    ("We dropped the tea ceremony.", "trip 2.1"),
    ("The sumo tickets are cancelled — the tournament sold out.", "trip 2.2"),
    ("I'm no longer a member at Fitness Hut.", "home 1.2"),
    ("Rent rose to €990 a month.", "home 1.1"),
    ("The fare has gone from €290 to €340.", "trip 1.1"),
    ("Turns out the fare is €330 return, not €290.", "trip 1.1"),
    ("Correction: the rail pass is €350.", "trip 1.4"),
    ("The ryokan is now $195 a night.", "trip 1.3"),
    ("We moved house: we live in Braga now.", "profile 1.2"),
    ("The oven delivery fell through on Thursday; it comes on Monday at 8:00 instead.", "home 2.2"),
    ("Gym fee: €40 a month from June.", "home 1.2"),
    ("The tea ceremony costs €60 these days.", "trip 2.1"),
    ("Say: the flight out changed to Wednesday, 13 May.", "trip 1.2"),
    ("Lena says the ryokan fell to $150 a night after she called them.", "trip 1.3"),
    ("10:00 — the sumo tickets went up to €150; we still want them.", "trip 2.2"),
    ("Heads up: the ryokan bumped its rate to $200 a night.", "trip 1.3"),
    ("Bad news, the rail pass price is going up — €340 from next month.", "trip 1.4"),
    ("We won't do the tea ceremony after all.", "trip 2.1"),
    ("The oven will now arrive on Friday at 9:00.", "home 2.2"),
    ("Internet's cheaper now: MEO dropped it to €29 a month.", "home 1.3"),
    ("Forget the sumo tickets, we're skipping it.", "trip 2.2"),
    ("The return fare is actually €305, I misread it.", "trip 1.1"),
    ("We'll stay 4 nights at the ryokan, not 3.", "trip 1.3"),
    ("Fitness Hut put the membership up to €39 a month.", "home 1.2"),
    ("Kim's flight now leaves on Thursday, 14 May.", "trip 1.2"),
    ("The oven ended up costing 4,650 EUR after a discount.", "home 2.1"),
    ("I cancelled the gym.", "home 1.2"),
    ("Rail pass: 14 days instead of 7.", "trip 1.4"),
    ("Tea ceremony in Uji is €50 now, they raised it.", "trip 2.1"),
]

NOT_CHANGED = [
    "The fare is still €290.",
    "The oven costs 4,800 EUR, as agreed.",
    "Ask whether the fare could go up to €320?",
    "I ran 5 km this morning and had a coffee for €2.",
    "❓ 1.1 [RECALL] Did the fare go up to €320? Correct answer: no, it is €290 return.",
    "Tell the `trip` sheet again.",
    "Lena says hi; she flies out on Friday for work.",
    "We talked about the rent; €950 is fine for now.",
    "The rent went up to €990.\n\nEdit home 1.1: Rent — €990 a month (was €950)",
    "Tell it the whole trip: the fare is €290 return and the ryokan $180 a night.",
    "The flight fare of €290 return still looks like a good deal to Lena.",
    "Kim paid the rent, €950, on the first as usual.",
    "Ask how much the whole trip costs with the €290 fare.",
    "Miso knocked over a €5 vase today.",
    "Remind the assistant the oven is 4,800 EUR and arrives Thursday at 10:00.",
    "It rained for 3 days in Porto; Kim stayed in.",
    "Tell it you booked a table for 2 at 20:00 at a tasca near home.",
    "The new neighbours moved in on Monday.",
    "Kim's sister changed jobs and now earns €2,100 a month.",
    "Work was busy: 14 prescriptions before lunch.",
    "The ryokan sent a confirmation email for the 3 nights at $180.",
    "Lena switched to decaf after 6 pm.",
    "We watched a film about sumo; it was 2 hours long.",
    "The internet was down for an hour this morning.",
]


def prose_warnings(tmp_path: Path, chapter: str, **changes: str) -> list[Problem]:
    """The prose-change warnings of a benchmark of the three sheets above whose chapter 1 is ``chapter``."""
    for name, text in {**SHEETS, "chapter1.md": chapter, **changes}.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    found = validate(tmp_path)
    assert found.problems == [], [str(p) for p in found.problems]
    return [w for w in found.warnings if w.message.startswith("the text changes")]


@pytest.mark.parametrize(("said", "fact"), CHANGED)
def test_a_change_told_in_prose_is_warned_of_with_its_fact(tmp_path: Path, said: str, fact: str) -> None:
    found = prose_warnings(tmp_path, f"## Day\n{said}\n")
    assert [(w.line, w.message.split(" (")[0]) for w in found] == [(2, f"the text changes {fact}")]
    sheet, fact_id = fact.split()
    assert f"add 'Edit {sheet} {fact_id}: " in found[0].message


@pytest.mark.parametrize("said", NOT_CHANGED)
def test_what_is_no_change_is_not_warned_of(tmp_path: Path, said: str) -> None:
    key = "# Key\n\n## 1.1\nanswer: no, it is €290 return.\nuses: trip 1.1\n" if "❓" in said else "# Key\n"
    assert prose_warnings(tmp_path, f"## Day\n{said}\n", **{"KEY.md": key}) == []


def test_two_facts_that_fit_as_well_are_both_named_rather_than_one_guessed(tmp_path: Path) -> None:
    [warning] = prose_warnings(tmp_path, "## Day\nThe membership fee went up to €40 a month.\n")
    assert warning.line == 2
    assert warning.message.startswith(
        "the text changes a sheet fact in prose, to €40 a month, but home 1.2 and home 1.4 fit it about as well"
    )
    assert "add 'Edit <sheet> <id>: <the new text>' for the one it changes" in warning.message


def test_a_change_that_fits_no_fact_well_enough_is_not_pinned_on_one(tmp_path: Path) -> None:
    said = (
        "The parking permit went up to €60 a year.\n\n"  # no fact holds a permit
        "The train to Sintra moved to 9:40.\n\n"  # the only time a fact holds is the oven's delivery
        "Say: the airline changed our departure to Wednesday, 13 May.\n"  # a miss: no word ties it to the trip
    )
    assert prose_warnings(tmp_path, f"## Day\n{said}") == []  # prose tells things no sheet keeps


def test_a_struck_fact_suggests_the_deletion_line(tmp_path: Path) -> None:
    [warning] = prose_warnings(tmp_path, "## Day\nWe called off the sumo — nobody wanted to go.\n")
    assert warning.message.startswith(
        "the text changes trip 2.2 (it holds 'Sumo tickets for the Saturday — €120'"
    )
    assert (
        "in prose, struck out," in warning.message
        and "add 'Edit trip 2.2: —' (or its new text)" in warning.message
    )


def test_an_author_comment_before_the_first_heading_is_no_change(tmp_path: Path) -> None:
    chapter = "Chapter 1: the fare went up to €320 and the rent to €990 (STALE).\n\n## Day\nSay hello.\n"
    assert prose_warnings(tmp_path, chapter) == []


def test_an_old_value_said_after_its_edit_is_no_change(tmp_path: Path) -> None:
    chapter = (
        "## Rise\n"
        "The landlord raised the rent to €990 a month.\n\n"
        "Edit home 1.1: Rent — €990 a month (was €950)\n\n"
        "## Later\n"
        "The €950 was before the rise; it was €900 originally, when we moved in.\n"  # old values only
        "Rent is €990 a month.\n"  # the new value again
    )
    assert prose_warnings(tmp_path, chapter) == []


def test_a_change_told_in_prose_is_warned_once_not_in_every_later_phase(tmp_path: Path) -> None:
    chapter = (
        "## Monday\nThe ryokan went up to $210 a night.\n\n"
        "## Tuesday\nThe ryokan is $210 a night, remember.\n\n"  # the new value again: the same change
        "## Wednesday\nWe dropped the ryokan, far too dear.\n"  # a new change of the same fact
    )
    found = prose_warnings(tmp_path, chapter)
    assert [(w.line, w.message.split(" (")[0]) for w in found] == [
        (2, "the text changes trip 1.3"),
        (8, "the text changes trip 1.3"),
    ]
    assert "to $210 a night," in found[0].message and "struck out" in found[1].message


def test_the_prose_lint_is_quiet_on_the_largest_shipped_benchmark() -> None:
    bench = load_benchmark(
        Path(__file__).parent.parent / "benchmarks" / "max"
    )  # its speed: bench/validate_scale.py
    assert [w for phase in bench.phases for w in prose_changes(bench, phase)] == []
