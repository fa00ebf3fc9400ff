"""KEY.md parsing and recomputation (engine/benchmark/answer_key.py) on small inline keys."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from engine.benchmark.answer_key import (
    check_answer_key,
    check_key_text,
    evaluate,
    numbers_in,
    parse_key,
)
from engine.benchmark.model import Benchmark, Check, Phase

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
sum: 3.1 = 1,200 + 850 + 2,400 = 4,450
chain: free text is ignored.

## 3.2 [RECALL] Tile
answer: $55 per m².
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


def test_a_check_without_an_entry_is_caught() -> None:
    text = GOOD.split("## 3.2")[0]
    problems = check_key_text(text, CHECKS)
    assert len(problems) == 1
    assert problems[0].message.startswith("check 3.2 has no entry in KEY.md")


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
        Decimal(1740), Decimal("5.2"), Decimal("4.0"), Decimal("20.8"), Decimal(850)
    ]


def test_parse_key_reads_traps_and_entries() -> None:
    key = parse_key(GOOD)
    assert sorted(key.entries) == ["3.1", "3.2"]
    assert [t.type for t in key.traps] == ["RETIRE", "XREF"]
    assert key.traps[0].checks == ["3.1"]
    assert key.sums[0].check_id == "3.1" and key.sums[0].total == "4,450"


def _bench(path: Path) -> Benchmark:
    phase = Phase(index=0, chapter="chapter1.md", title="P", body="x", line=1, checks=CHECKS)
    return Benchmark(name="t", path=path, chapters=["chapter1.md"], phases=[phase], sheets={})


def test_check_answer_key_reads_the_benchmark_folder(tmp_path: Path) -> None:
    assert check_answer_key(_bench(tmp_path)) == []  # no KEY.md: nothing to check
    (tmp_path / "KEY.md").write_text(GOOD.replace("= 4,450\n", "= 4,451\n"), encoding="utf-8")
    problems = check_answer_key(_bench(tmp_path))
    assert problems and all(p.file == str(tmp_path / "KEY.md") for p in problems)
