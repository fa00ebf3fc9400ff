"""Report entries that can be compared (issue 9, finding 10): the score over every planned check, persona
faults set apart, provenance hashes, wall-clock dates, the agent's verbatim replies, unfinished runs."""

from __future__ import annotations

import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from engine_helpers import FORGETFUL, TEST_BENCHMARKS, fast, make_config, play

from engine.config import Config
from engine.events import EvaluationLogged, TerminationReason
from engine.report.entries import parse_report_entries, reprint
from engine.report.provenance import benchmark_hash, project_version
from engine.report.writer import REPLY_CROP, format_entry
from engine.run.build import build_run
from engine.run.loop import Run

FULL_CHECKS = ["1.1", "2.1", "2.2", "2.3", "2.4"]  # the planned checks of tests/benchmarks/full


def _built(config: Config, run_id: str = "r") -> Run:
    run = build_run(config, run_id, tune=fast)
    run.recorder.transcript.close()  # these runs are only formatted, never played
    if run.lock is not None:
        run.lock.release()
    return run


def _graded(check_id: str, score: float, **extra: Any) -> EvaluationLogged:
    if "transcript_n" in extra:
        extra["n"] = extra.pop("transcript_n")
    return EvaluationLogged(check_id=check_id, score=score, attempt=1, effective=score, **extra)


def _entry_of(run: Run, **evaluations: EvaluationLogged) -> str:
    run.state.evaluations = {e.check_id: e for e in evaluations.values()}
    run.termination = TerminationReason.FINISHED
    run.state.finished = True
    return format_entry(run.summary())


def _line(entry: str, prefix: str) -> str:
    return next(line for line in entry.splitlines() if line.startswith("📊 " + prefix))


def test_an_ungraded_check_counts_zero_so_skipping_never_raises_the_score(tmp_path: Path) -> None:
    run = _built(make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}}))
    four = {
        f"c{i}": _graded(cid, s)
        for i, (cid, s) in enumerate(zip(FULL_CHECKS[:4], [10, 10, 10, 5], strict=True))
    }
    skipped = _entry_of(run, **four)
    assert _line(skipped, "Score:") == (
        "📊 Score: 7.00/10 over 5 planned checks (graded 4, ungraded 1 counted as 0) · average over graded 8.75/10"
    )
    assert "📊 Not graded: 2.4" in skipped
    # grading the skipped check, however badly, never lowers the headline (the bug: an average that skipping raised)
    worst = _entry_of(run, **four, last=_graded("2.4", 0))
    assert "Score: 7.00/10 over 5 planned checks (graded 5, ungraded 0 counted as 0)" in worst
    assert "average over graded 7.00/10" in worst
    parsed = parse_report_entries(skipped)[0]
    assert (parsed.score, parsed.average, parsed.evaluations, parsed.coverage) == (7.0, 8.75, 4, "4/5")


def test_a_persona_fault_is_listed_and_left_out_of_every_figure(tmp_path: Path) -> None:
    run = _built(make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}}))
    fault = "pets 1.2 holds 300 g a day, expected 250 g a day"
    entry = _entry_of(
        run,
        a=_graded("1.1", 10),
        b=_graded("2.1", 0, persona_fault=fault, transcript_n=42, answer="300 g"),
        c=_graded("2.2", 10),
        d=_graded("2.3", 10),
        e=_graded("2.4", 5),
    )
    assert (
        "Score: 8.75/10 over 4 of 5 planned checks (graded 4, ungraded 0 counted as 0, persona faults 1 excluded)"
        in entry
    )
    assert "average over graded 8.75/10" in entry
    assert "📊 Evaluations: 4, average 8.75/10" in entry
    assert "📊 Scores: 10: 3, 5: 1" in entry  # the fault's 0 is not in the distribution
    assert "📊 Check coverage: 5/5" in entry  # it was graded, though not counted
    assert "📊 Persona faults (1, left out of the score):" in entry
    assert re.search(
        r"📊 ⚠ \(2\.1\) .+ \| graded: 0/10, not counted \| fault: "
        + re.escape(fault)
        + r" \[transcript #42\]",
        entry,
    )
    assert "(2.1)" not in _imperfect_section(entry)
    assert "HIST 0" not in entry and "0: 1" not in entry  # nor in the per-type averages
    parsed = parse_report_entries(entry)[0]
    assert [(f.check_id, f.graded, f.fault, f.transcript_n) for f in parsed.persona_faults] == [
        ("2.1", "0/10", fault, 42)
    ]
    assert [a.check_id for a in parsed.imperfect] == ["2.4"]
    assert all("⚠" not in line for line in parsed.summary_lines())


def _imperfect_section(entry: str) -> str:
    return entry.partition("Imperfect answers")[2].partition("Average per type")[0]


def test_got_is_the_agents_verbatim_reply_and_the_persona_summary_stays_apart(tmp_path: Path) -> None:
    run = _built(make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}}))
    reply = "Rex gets 300 g of dry food a day —\nthat's what you said at the start."
    long_reply = "word " * 200
    entry = _entry_of(
        run,
        a=_graded(
            "1.1",
            0,
            answer="300 g",
            comment="the old amount",
            replies=[reply, "Anything else?"],
            transcript_n=7,
        ),
        b=_graded("2.1", 5, answer="a long ramble", replies=[long_reply]),
        c=_graded("2.2", 2.5, answer="nothing"),
    )
    assert (
        "| got: Rex gets 300 g of dry food a day — that's what you said at the start. ‖ Anything else?"
        " | persona: 300 g — the old amount [transcript #7]"
    ) in entry
    parsed = parse_report_entries(entry)[0]
    first, second, third = parsed.imperfect
    assert (
        first.got == "Rex gets 300 g of dry food a day — that's what you said at the start. ‖ Anything else?"
    )
    assert (first.persona, first.comment, first.transcript_n) == ("300 g", "the old amount", 7)
    assert len(second.got) == REPLY_CROP and second.got.endswith("…")
    assert third.got == "(no reply recorded)" and third.persona == "nothing"


def test_changing_one_chapter_changes_the_benchmark_hash(tmp_path: Path) -> None:
    bench_root = tmp_path / "benches"
    shutil.copytree(TEST_BENCHMARKS / "full", bench_root / "full")
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}}, benchmarks=bench_root)
    before = _built(config).provenance
    assert before.benchmark_hash == benchmark_hash(
        TEST_BENCHMARKS / "full"
    )  # paths and bytes, not the location
    (bench_root / "full" / ".chapter2.md.swp").write_text("editor droppings")
    assert benchmark_hash(bench_root / "full") == before.benchmark_hash
    chapter = bench_root / "full" / "chapter2.md"
    chapter.write_text(chapter.read_text().replace("Rex", "Rexy", 1))
    after = _built(config).provenance
    assert after.benchmark_hash != before.benchmark_hash
    assert after.config_hash == before.config_hash  # the config did not change


def _config_hash(tmp_path: Path, name: str, run: dict[str, Any], **extra: Any) -> str:
    folder = tmp_path / name
    folder.mkdir()
    return _built(make_config(folder, {"r": run}, **extra)).provenance.config_hash


def test_the_config_hash_follows_compaction_hooks_time_and_the_agents_model(tmp_path: Path) -> None:
    chatbot = {"benchmark": "full", "agent": "chatbot", "model": "scripted/recall"}
    agent_spec = {"agent-model": {"model": "scripted/recall"}}
    base = _config_hash(tmp_path, "base", chatbot)
    assert _config_hash(tmp_path, "same", chatbot) == base
    assert (
        _config_hash(tmp_path, "results", chatbot, results_dir=str(tmp_path / "elsewhere")) == base
    )  # a location
    changed = {
        "compaction": _config_hash(
            tmp_path, "compaction", chatbot, compaction={"max_tokens": 20000, "trim_to_tokens": 8000}
        ),
        "hooks": _config_hash(
            tmp_path, "hooks", chatbot, hooks={"plain_text_guard": True, "echo_guard": False}
        ),
        "time": _config_hash(tmp_path, "time", chatbot, time_master={"min_sleep_to_skip": 60}),
        "agent model": _config_hash(tmp_path, "agent", {**chatbot, "model": "scripted/agent"}),
        "run key": _config_hash(tmp_path, "session", {**chatbot, "ignore_session_break": True}),
        "persona": _config_hash(tmp_path, "persona", {**chatbot, "persona": "scripted/persona?faults=3:429"}),
    }
    assert all(value != base for value in changed.values()), changed
    assert len(set(changed.values())) == len(changed)
    # a configured agent model: its endpoint settings count too
    named = {**chatbot, "model": "agent-model"}
    first = _config_hash(tmp_path, "named", named, models=agent_spec)
    warmer = _config_hash(
        tmp_path, "warmer", named, models={"agent-model": {"model": "scripted/recall", "temperature": 0.9}}
    )
    assert first != warmer


async def test_a_played_run_names_everything_it_was_produced_with(tmp_path: Path) -> None:
    config = make_config(
        tmp_path,
        {"r": {"benchmark": "full", "agent": "chatbot", "model": "scripted/recall"}},
        compaction={"max_tokens": 2500, "trim_to_tokens": 800},
    )
    run = await play(config, "r")
    assert run.termination is TerminationReason.FINISHED
    text = (config.results_path() / "report.md").read_text()
    entry = parse_report_entries(text)[0]
    assert (entry.benchmark_hash, entry.config_hash, entry.prompt_hash) == (
        run.provenance.benchmark_hash,
        run.provenance.config_hash,
        run.provenance.prompt_hash,
    )
    assert entry.version == project_version() != "?"
    assert entry.agent_model == "scripted/recall" and entry.persona_model == "scripted/persona"
    assert (
        f"📊 Benchmark: full · content {run.provenance.benchmark_hash} · MarathonMemBench {entry.version}"
        in text
    )
    assert "📊 Agent: chatbot · model scripted/recall" in text
    assert (
        run.state.persona_compactions > 0
        and f"📊 Persona compactions: {run.state.persona_compactions}" in text
    )
    assert entry.score is not None and entry.incomplete == ""
    assert "Virtual time" not in text  # a real-time benchmark


def test_the_entry_names_how_the_agent_ran() -> None:
    from engine.report.provenance import Provenance
    from engine.report.writer import provenance_lines

    setup = ("Agent sandbox: bubblewrap 0.8.0 (…)", "Agent tools: memory, terminal")
    lines = provenance_lines("b", "hermes", Provenance(agent_model="m", agent_setup=setup))
    assert lines[2:5] == ["Agent: hermes · model m", *setup]


async def test_a_virtual_time_run_is_dated_by_the_wall_clock(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"d": {"benchmark": "days", "agent": "chatbot"}})
    before = datetime.now(UTC).replace(second=0, microsecond=0)
    run = build_run(config, "d", tune=fast)
    run.recorder.transcript.close()
    run.termination = TerminationReason.STOPPED
    run.state.reason = "stopped"
    assert run.clock.now().year == 2026 and run.clock.now().month == 3  # virtual: the benchmark's 1 March
    entry = format_entry(run.summary())
    after = datetime.now(UTC)
    header = entry.splitlines()[0]
    stamp = datetime.strptime(header.split(" UTC ")[0], "## %Y-%m-%d %H:%M").replace(tzinfo=UTC)
    assert before <= stamp <= after + timedelta(minutes=1), header
    assert "📊 Virtual time: 2026-03-01 20:00 → 2026-03-01 20:" in entry
    assert parse_report_entries(entry)[0].date.endswith("UTC")


def test_every_unfinished_end_is_marked_incomplete_with_its_coverage(tmp_path: Path) -> None:
    run = _built(make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}}))
    run.state.evaluations = {"1.1": _graded("1.1", 10)}
    run.state.phases_started = 1
    for reason, why in [
        (TerminationReason.WAITING, "persona model: 429 Too Many Requests"),
        (TerminationReason.STOPPED, "stopped"),
        (TerminationReason.CRASHED, "KeyError: 'x'"),
    ]:
        run.termination, run.state.reason = reason, why
        entry = format_entry(run.summary())
        assert (
            f"📊 Incomplete: {reason.value} — {why} · phases started 1/3 · checks graded so far 1/5" in entry
        )
        assert "Score: 2.00/10 over 5 planned checks (graded 1, ungraded 4 counted as 0)" in entry
        parsed = parse_report_entries(entry)[0]
        assert (parsed.incomplete, parsed.incomplete_reason) == (reason.value, why)
    run.termination = TerminationReason.FINISHED
    assert "Incomplete" not in format_entry(run.summary())


async def test_a_crashed_run_gets_an_entry_marked_incomplete(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": "fixture_agents:BuggyAgent"}})
    run = await play(config, "r")
    assert run.termination is TerminationReason.CRASHED
    entry = parse_report_entries((config.results_path() / "report.md").read_text())[0]
    assert entry.incomplete == "crashed" and entry.coverage == "0/5"
    assert entry.score == 0.0


OLD_ENTRY = """## 2026-03-15 21:04 — md: multiday @ chatbot
📊 Evaluations: 3, average 6.67/10
📊 Scores: 10: 2, 0: 1
📊 Check coverage: 3/4
📊 Not graded: 4.1
📊 Imperfect answers (1):
📊 [0/10] (2.1) What did I weigh on Sunday? | expected: 68.2 kg | got: 69 kg — misremembered [transcript #31]
📊 Agent compactions: none observed
📊 Persona: scripted/persona · prompt 0123456789ab · config ba9876543210
📊 Ended: crashed — RuntimeError: boom
📊 Run time: 1.5 min
"""


def test_old_entries_still_parse_beside_new_ones(tmp_path: Path) -> None:
    run = _built(make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}}))
    new = _entry_of(run, a=_graded("1.1", 0, answer="Dr Who", replies=["Your vet is Dr Who."]))
    old, fresh = parse_report_entries(OLD_ENTRY + "\n" + new)
    assert (old.date, old.run_id, old.benchmark, old.agent) == (
        "2026-03-15 21:04",
        "md",
        "multiday",
        "chatbot",
    )
    assert (old.evaluations, old.average, old.score, old.coverage, old.run_time) == (
        3,
        6.67,
        None,
        "3/4",
        "1.5 min",
    )
    assert (old.config_hash, old.prompt_hash, old.persona_model) == (
        "ba9876543210",
        "0123456789ab",
        "scripted/persona",
    )
    assert (old.incomplete, old.incomplete_reason) == ("crashed", "RuntimeError: boom")
    answer = old.imperfect[0]
    assert (answer.got, answer.persona, answer.comment, answer.transcript_n) == (
        "69 kg",
        "",
        "misremembered",
        31,
    )
    assert fresh.run_id == "r" and fresh.date.endswith(" UTC")
    assert fresh.imperfect[0].got == "Your vet is Dr Who." and fresh.imperfect[0].persona == "Dr Who"
    assert fresh.score == 0.0 and fresh.config_hash == run.provenance.config_hash


def test_each_imperfect_answer_names_its_check_types_and_reprints_as_written(tmp_path: Path) -> None:
    run = _built(make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}}))
    entry = (
        _entry_of(run, a=_graded("1.1", 10), b=_graded("2.1", 5, transcript_n=9)) + "📊 Entry: 0123abcd4567\n"
    )
    types = next(c.types for c in run.bench.checks() if c.id == "2.1")
    assert types and f"(2.1) {' '.join(f'[{t}]' for t in types)} " in entry
    parsed = parse_report_entries(entry)[0]
    assert (parsed.imperfect[0].types, parsed.imperfect[0].transcript_n, parsed.entry_id) == (
        types,
        9,
        "0123abcd4567",
    )
    (tmp_path / "report.md").write_text(entry + "\n" + entry, encoding="utf-8")
    assert reprint(tmp_path / "report.md", "r").decode() == entry + "\n" + entry
