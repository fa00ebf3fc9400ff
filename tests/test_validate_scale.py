"""``validate`` is linear in the phases (it took minutes at 10,000): the work it does is counted, not timed —
the chapter files are read once each, and the replay of the sheets to a phase starts from a kept state at most
``MARK_STRIDE`` phases before it, so four times the phases cost at most about four times the steps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.benchmark import directives
from engine.benchmark.validate import validate


def write_long_benchmark(folder: Path, phases: int) -> Path:
    """A benchmark of ``phases`` phases in two chapters: a sheet told, edited every tenth phase, asked about."""
    folder.mkdir()
    (folder / "benchmark.json").write_text(json.dumps({"chapters": ["chapter1.md", "chapter2.md"]}))
    (folder / "profile.md").write_text("# Profile\n## 1. Me\n1.1 I am Ana and I live in Porto\n")
    (folder / "car.md").write_text(
        "# Car\n## 1. Car\n1.1 The car costs 19,500 EUR\n1.2 Insurance is 430 EUR\n"
    )
    chapters: list[list[str]] = [[], []]
    for i in range(phases):
        lines = chapters[0 if i < phases // 2 else 1]
        lines.append(f"## Day {i}\n\nTell the `car` sheet\n\nSay it is day {i} of the trip.\n")
        if i % 10 == 5:
            lines.append(f"Edit car 1.2: Insurance is {430 + i} EUR (was {420 + i})\n")
        if i % 50 == 7:
            lines.append(
                f"❓ {1 + (i >= phases // 2)}.{i} [RECALL] The insurance? Correct answer: {423 + i} EUR\n"
            )
    for number, lines in enumerate(chapters, start=1):
        (folder / f"chapter{number}.md").write_text("\n".join(lines))
    return folder


def _work(tmp_path: Path, phases: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """(replay steps, file reads) of validating a benchmark of ``phases`` phases."""
    steps, reads = [0], [0]
    apply_phase, read_text = directives._apply_phase, Path.read_text

    def counted_apply(*args: object, **kwargs: object) -> None:
        steps[0] += 1
        apply_phase(*args, **kwargs)  # type: ignore[arg-type]

    def counted_read(self: Path, *args: object, **kwargs: object) -> str:
        reads[0] += 1
        return read_text(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(directives, "_apply_phase", counted_apply)
    monkeypatch.setattr(Path, "read_text", counted_read)
    found = validate(write_long_benchmark(tmp_path / f"b{phases}", phases))
    monkeypatch.undo()
    assert found.problems == [], found.problems[:3]
    return steps[0], reads[0]


def test_validate_does_linear_work_in_the_phases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small_steps, small_reads = _work(tmp_path, 200, monkeypatch)
    large_steps, large_reads = _work(tmp_path, 800, monkeypatch)
    print(f"replay steps: {small_steps} for 200 phases, {large_steps} for 800")
    assert large_steps <= 4.5 * small_steps  # quadratic was 16×
    assert large_reads == small_reads  # each file read a fixed number of times, whatever the phases


def test_the_replay_from_a_kept_state_equals_the_replay_from_the_start(tmp_path: Path) -> None:
    from engine.benchmark.loader import load_with_problems

    bench = load_with_problems(write_long_benchmark(tmp_path / "b", 150))[0]
    assert bench is not None
    facts = dict(directives.cached("replay", bench, directives._replay).original)
    for phase in bench.phases:  # the plain replay, phase by phase, against every phase's expected facts
        expected = directives.expected_facts(bench, phase.index)
        directives._apply_phase(facts, directives.directives_of(bench, phase.index), None)
        assert expected == facts, phase.index
