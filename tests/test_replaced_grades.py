"""The persona line's replaced grades count every grade that replaced an earlier one, and say how many of them
were an attempt 2 (issue 31, item 4): counted while the run plays, kept in ``state.json``, and a record saved
before attempt 2s were counted still loads and gets them from the run's grades."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from engine_helpers import FORGETFUL, events, fast, kinds, make_config, play

from engine.persona.tools import dispatch
from engine.persona_record import second_attempt
from engine.report.entries import parse_report_entries
from engine.report.trust import persona_line
from engine.run.build import build_run
from engine.run.loop import Run
from engine.state import load_state


def replacements(evts: list[Any]) -> Counter[str]:
    """The grades in a transcript that replaced an earlier grade: by an attempt 2 (after its attempt 1) or not."""
    graded = [e for e in kinds(evts, "evaluation_logged") if e.replaces]
    return Counter("attempt 2" if second_attempt(e) else "regrade" for e in graded)


async def test_a_run_with_slips_counts_every_replaced_grade_and_its_attempt_2s(tmp_path: Path) -> None:
    persona = "scripted/persona?slips=attempt2_first,grade_ahead,echo"
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL, "persona": persona}})
    run = await play(config, "r")
    seen = events(config, "r")
    counted = replacements(seen)
    assert counted["attempt 2"] >= 2  # the agent forgot after the new session: searched, graded again
    assert any(e.error and "needs an attempt 1 first" in e.result for e in kinds(seen, "tool_called"))
    record = run.state.persona_record
    assert record is not None
    assert record.replaced_total == counted.total() and record.second_attempts == counted["attempt 2"]
    line = f"replaced grades {counted.total()} ({counted['attempt 2']} by an attempt 2)"
    report = (config.results_path() / "report.md").read_text()
    assert line in report  # not "replaced grades 0" while attempt 2s replaced attempt 1s
    entry = parse_report_entries(report)[-1]
    assert entry.persona_counts["replaced grades"] == counted.total()
    saved = load_state(config.results_path() / "r" / "state.json")
    assert saved is not None and saved.persona_record == record  # kept in state.json


async def call(run: Run, name: str, **args: Any) -> str:
    return await dispatch(run, name, args)


async def graded(run: Run, attempt: int, score: float) -> str:
    return await call(
        run, "log_evaluation", check_id="1.1", score=score, attempt=attempt, answer="a", comment=""
    )


async def test_a_regrade_and_an_attempt_2_are_both_replaced_grades(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    run = build_run(config, "r", tune=fast)
    await run._initialise()
    await call(run, "facts_read", sheet="pets")
    await call(
        run,
        "send_message",
        text="Rex is a five-year-old collie who eats 300 g of dry food a day; his vet is Dr Hughes on Albany "
        "Road. Four goldfish live in a 60-litre tank; its filter was replaced in May.",
    )
    await call(run, "facts_mark_told", sheet="pets", ids=["1.1", "1.2", "1.3", "2.1", "2.2"])
    await call(run, "next_phase")
    await call(run, "send_message", text="Who is Rex's vet?")
    await graded(run, 1, 0)
    await call(run, "send_message", text="Sorry, once more: what's the name of Rex's vet?")
    assert "replaces the earlier grade 0/10, attempt 1" in await graded(run, 1, 10)  # a regrade
    await call(run, "send_message", text="Please search your memory: who is Rex's vet?")
    await graded(run, 2, 10)  # an attempt 2 after its attempt 1
    record = run.state.persona_record
    assert record is not None and (record.replaced, record.second_attempts) == (1, 1)
    line = persona_line(record, {"persona": {"calls": 9}}, 0)
    assert "· replaced grades 2 (1 by an attempt 2) ·" in line
    await run.recorder.writer.flush()
    run.recorder.transcript.close()


async def test_a_record_saved_before_attempt_2s_were_counted_loads_and_gets_them(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    run = await play(config, "r")
    path = config.results_path() / "r" / "state.json"
    raw = json.loads(path.read_text())
    raw["version"] = 2  # as the code before this count wrote it
    del raw["persona_record"]["second_attempts"]
    path.write_text(json.dumps(raw))
    state = load_state(path)
    assert state is not None and state.persona_record == run.state.persona_record  # counted from the grades
    counted = replacements(events(config, "r"))
    assert counted["attempt 2"] and not counted["regrade"]
    line = persona_line(state.persona_record, {}, 0)
    assert f"replaced grades {counted.total()} ({counted['attempt 2']} by an attempt 2)" in line
    # a record that began counting mid-run (a run older still) counts only the attempt 2s since it began
    since = sorted(e.n for e in state.evaluations.values() if e.attempt == 2)[-1]
    raw["persona_record"]["since"] = since
    path.write_text(json.dumps(raw))
    later = load_state(path)
    assert later is not None and later.persona_record is not None
    assert later.persona_record.second_attempts == 1
