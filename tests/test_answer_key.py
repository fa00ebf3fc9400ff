"""KEY.md parsing, recomputation and dependencies (engine/benchmark/answer_key.py) on small inline keys."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from engine.benchmark.answer_key import (
    answer_key_warnings,
    check_answer_key,
    check_dependencies,
    check_key_text,
    evaluate,
    has_answer_key,
    numbers_in,
)
from engine.benchmark.key_parse import parse_key
from engine.benchmark.model import Benchmark, Category, Check, Fact, Phase, Sheet

CHECKS = [
    Check(id="3.1", types=["AGG"], question="Kitchen total?", answer="$4,450 (no wine fridge).", line=7),
    Check(id="3.2", types=["RECALL"], question="Tile price?", answer="$55 per m².", line=8),
]

GOOD = """# Key

## Traps
trap: RETIRE | kitchen 1.8, ch3 | wine fridge struck out | 3.1
trap: XREF | kitchen 1.3, ch2 | same tile as the bathroom | 3.2

## 3.1 [AGG] Kitchen total
answer: $4,450 (no wine fridge).
uses: kitchen 1.1, 1.2; bathroom 1.2
sum: 3.1 = 1,200 + 850 + 2,400 = 4,450
chain: free text is ignored.

## 3.2 [RECALL] Tile
answer: $55 per m².
uses: none
"""


def messages(problems: list) -> list[str]:
    return [p.message for p in problems]


def test_a_consistent_key_has_no_problems() -> None:
    assert check_key_text(GOOD, CHECKS) == []


def test_a_wrong_sum_is_caught_with_its_line() -> None:
    text = GOOD.replace("= 4,450\n", "= 4,550\n")
    problems = check_key_text(text, CHECKS)
    sum_line = text.splitlines().index("sum: 3.1 = 1,200 + 850 + 2,400 = 4,550") + 1
    assert [p.line for p in problems] == [sum_line, sum_line]
    assert "add up to 4450, not the declared 4,550" in problems[0].message
    assert "does not contain the total 4550" in problems[1].message
    assert problems[0].file == "KEY.md"


def test_a_total_missing_from_the_answer_is_caught() -> None:
    checks = [CHECKS[0].model_copy(update={"answer": "$4,405 (no wine fridge)."}), CHECKS[1]]
    text = GOOD.replace("answer: $4,450 (no wine fridge).", "answer: $4,405 (no wine fridge).")
    assert messages(check_key_text(text, checks)) == [
        "sum 3.1: the check's Correct answer '$4,405 (no wine fridge).' does not contain the total 4450"
    ]


def test_a_check_without_an_entry_or_without_uses_declares_no_dependencies() -> None:
    for text in (GOOD.split("## 3.2")[0], GOOD.replace("uses: none\n", "")):
        [problem] = check_key_text(text, CHECKS)
        assert problem.message == (
            "check 3.2 declares no dependencies (add 'uses: <sheet> <id>, …' naming the facts its answer reads "
            "under '## 3.2' in KEY.md; 'uses: none' only when it reads no fact, e.g. a VOID check)"
        )
        assert (problem.file, problem.line) == ("KEY.md", 0)  # no chapter known: the key file
    [problem] = check_key_text(GOOD.replace("uses: none\n", ""), CHECKS, chapter_of={"3.2": "chapter3.md"})
    assert (problem.file, problem.line) == ("chapter3.md", 8)  # the check's line in its chapter


def test_uses_lines_are_parsed_in_order_and_merged() -> None:
    text = GOOD.replace(
        "uses: kitchen 1.1, 1.2; bathroom 1.2",
        "uses: kitchen 1.1, 1.2; bathroom 1.2\nuses: kitchen.md 1.2, 1.10",
    )
    key = parse_key(text)
    entry = key.entries["3.1"]
    assert entry.uses == [("kitchen", "1.1"), ("kitchen", "1.2"), ("bathroom", "1.2"), ("kitchen", "1.10")]
    assert entry.uses_line == text.splitlines().index("uses: kitchen 1.1, 1.2; bathroom 1.2") + 1
    assert key.entries["3.2"].uses == [] and key.entries["3.2"].uses_line > 0
    assert key.problems == []


def test_malformed_uses_lines_are_reported() -> None:
    text = GOOD.replace("uses: none", "uses: none\nuses: kitchen 1.1") + "uses: kitchen 1.1\n"
    text = text.replace("uses: kitchen 1.1, 1.2; bathroom 1.2", "uses: kitchen 1.x; bathroom")
    found = messages(check_key_text(text, CHECKS))
    assert (
        "entry 3.1: '1.x' in uses is not a fact id like 1.2: write 'uses: <sheet> <id>, <id>; <sheet> <id>' or 'uses: none'"
        in found
    )
    assert any(m.startswith("entry 3.1: malformed uses 'bathroom'") for m in found)
    assert "entry 3.2: facts beside an earlier 'uses: none'" in found
    outside = GOOD.replace("## Traps\n", "## Traps\nuses: kitchen 1.1\n")
    assert "'uses:' outside an entry: put it under a '## <check id>' heading" in messages(
        check_key_text(outside, CHECKS)
    )


def test_uses_must_name_known_sheets_and_facts_that_exist() -> None:
    facts = {"kitchen": {"1.1", "1.2"}, "bathroom": {"1.1"}}
    found = check_key_text(GOOD.replace("bathroom 1.2", "bathroom 1.2; garage 2.1"), CHECKS, facts=facts)
    line = GOOD.splitlines().index("uses: kitchen 1.1, 1.2; bathroom 1.2") + 1
    assert [(p.line, p.message) for p in found] == [
        (
            line,
            "entry 3.1: uses names bathroom 1.2, which is neither in bathroom.md nor added by any 'Add to bathroom' line",
        ),
        (line, "entry 3.1: uses names sheet 'garage', which does not exist (sheets: bathroom, kitchen)"),
    ]
    assert check_key_text(GOOD, CHECKS, facts={"kitchen": {"1.1", "1.2"}, "bathroom": {"1.2"}}) == []


def test_an_unknown_check_id_is_caught_in_entries_sums_and_traps() -> None:
    text = GOOD + "\n## 9.9 Gone\nsum: 9.8 = 1 + 1 = 2\ntrap: STALE | x | y | 9.7\n"
    found = messages(check_key_text(text, CHECKS))
    assert "entry 9.9 names no check in the chapters" in found
    assert "sum names check '9.8', which is not in the chapters" in found
    assert "trap STALE names check 9.7, which is not in the chapters" in found


def test_an_answer_line_must_match_the_check() -> None:
    text = GOOD.replace("answer: $55 per m².", "answer: $42 per m².")
    [problem] = check_key_text(text, CHECKS)
    assert "differs from the check's Correct answer" in problem.message


def test_unknown_trap_types_and_malformed_lines_are_reported() -> None:
    text = GOOD + "trap: SWAP | a | b | 3.1\ntrap: RETIRE only\nsum: 3.1 = 1 + 2\nsum: 3.1 = 1 + two = 3\n"
    found = messages(check_key_text(text, CHECKS))
    assert any(m.startswith("unknown trap type 'SWAP'") for m in found)
    assert any(m.startswith("malformed trap line") for m in found)
    assert any(m.startswith("malformed sum line") for m in found)
    assert any(m.startswith("sum 3.1: cannot compute '1 + two'") for m in found)


def test_duplicate_entries_are_reported() -> None:
    found = messages(check_key_text(GOOD + "\n## 3.2 again\n", CHECKS))
    assert any(m.startswith("duplicate entry for check 3.2") for m in found)


def test_evaluate_handles_products_separators_and_minus() -> None:
    assert evaluate("6 × 30 + 5 × 40 + 1,050 + 160 + 150") == Decimal(1740)
    assert evaluate("$19,500 + $1,100 - 150 * 2") == Decimal(20300)
    assert evaluate("20.8 × 40") == Decimal(832)
    assert evaluate("5.5 + 6 + 5 + 5 + 7 + 7 + 8.4 + 4.5 + 5") == Decimal("53.4")
    for bad in ("", "1 +", "+ 1", "1 2", "1 / 2"):
        with pytest.raises(ValueError):
            evaluate(bad)


def test_numbers_in_normalises_thousands_and_dollars() -> None:
    assert numbers_in("$1,740 — 5.2 × 4.0 m (20.8 m²), about $850.") == [
        Decimal(1740),
        Decimal("5.2"),
        Decimal("4.0"),
        Decimal("20.8"),
        Decimal(850),
    ]


def test_parse_key_reads_traps_and_entries() -> None:
    key = parse_key(GOOD)
    assert sorted(key.entries) == ["3.1", "3.2"]
    assert [t.type for t in key.traps] == ["RETIRE", "XREF"]
    assert key.traps[0].checks == ["3.1"]
    assert key.sums[0].check_id == "3.1" and key.sums[0].total == "4,450"


def _bench(path: Path) -> Benchmark:
    phase = Phase(index=0, chapter="chapter1.md", title="P", body="x", line=1, checks=CHECKS)
    kitchen = Sheet(
        name="kitchen",
        title="Kitchen",
        categories=[
            Category(
                number=1,
                name="K",
                facts=[Fact(id="1.1", text="Cabinets — $1,200"), Fact(id="1.2", text="Worktop — $850")],
            )
        ],
    )
    bathroom = Sheet(
        name="bathroom",
        title="Bathroom",
        categories=[
            Category(
                number=1,
                name="B",
                facts=[Fact(id="1.1", text="Floor"), Fact(id="1.2", text="Wall tile — $55 per m²")],
            )
        ],
    )
    return Benchmark(
        name="t",
        path=path,
        chapters=["chapter1.md"],
        phases=[phase],
        sheets={"kitchen": kitchen, "bathroom": bathroom},
    )


def test_without_a_key_there_is_no_problem_and_one_warning(tmp_path: Path) -> None:
    bench = _bench(tmp_path)
    assert check_answer_key(bench) == []  # a key is optional: the checks' answers stand alone
    assert not has_answer_key(bench)
    [warning] = answer_key_warnings(bench)
    assert (warning.file, warning.line) == (str(tmp_path / "KEY.md"), 0)
    assert warning.message.startswith("no KEY.md")
    assert check_dependencies(bench) == {}
    assert answer_key_warnings(bench.model_copy(update={"phases": []})) == []  # no checks, nothing to key
    (tmp_path / "KEY.md").write_text(GOOD, encoding="utf-8")
    assert has_answer_key(bench) and answer_key_warnings(bench) == []


def test_every_entry_needs_its_answer() -> None:
    text = GOOD.replace("answer: $55 per m².\n", "")
    [problem] = check_key_text(text, CHECKS)
    assert problem.line == text.splitlines().index("## 3.2 [RECALL] Tile") + 1
    assert (
        problem.message
        == "entry 3.2 has no 'answer:' line (write 'answer: $55 per m².', the check's Correct answer)"
    )
    unknown = (
        GOOD + "\n## 9.9 Gone\nuses: none\n"
    )  # an entry of no check: that is its problem, not the answer
    assert messages(check_key_text(unknown, CHECKS)) == ["entry 9.9 names no check in the chapters"]


def test_check_answer_key_reads_the_benchmark_folder(tmp_path: Path) -> None:
    (tmp_path / "KEY.md").write_text(GOOD, encoding="utf-8")
    bench = _bench(tmp_path)
    assert check_answer_key(bench) == []
    assert check_dependencies(bench) == {
        "3.1": [("kitchen", "1.1"), ("kitchen", "1.2"), ("bathroom", "1.2")],
        "3.2": [],
    }
    (tmp_path / "KEY.md").write_text(GOOD.replace("= 4,450\n", "= 4,451\n"), encoding="utf-8")
    problems = check_answer_key(_bench(tmp_path))
    assert problems and all(p.file == str(tmp_path / "KEY.md") for p in problems)


def test_check_dependencies_leaves_out_checks_without_a_declaration(tmp_path: Path) -> None:
    (tmp_path / "KEY.md").write_text(GOOD.replace("uses: none\n", ""), encoding="utf-8")
    bench = _bench(tmp_path)
    deps = check_dependencies(bench)
    assert list(deps) == ["3.1"]
    deps["3.1"].clear()  # callers get copies of what is read once per benchmark
    (tmp_path / "KEY.md").write_text("", encoding="utf-8")
    assert check_dependencies(bench)["3.1"] == [("kitchen", "1.1"), ("kitchen", "1.2"), ("bathroom", "1.2")]
