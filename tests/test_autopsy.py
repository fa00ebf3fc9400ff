"""The memory autopsy (issue 33): every imperfect answer attributed to one class of memory failure with its
evidence — planted offline by ``scripted/agent?plan=…`` in the files of in-process agents that keep their memory
the way Hermes and OpenClaw do, and held against hand-made histories in many notations."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from engine_helpers import events, fast, kinds, make_config, play

from engine.autopsy.attribution import Autopsy
from engine.autopsy.excerpt import memory_excerpt
from engine.autopsy.history import MemoryHistory
from engine.autopsy.run_facts import RunFacts
from engine.event_summary import summary
from engine.events import AgentActed, EvaluationLogged, Event
from engine.models.base import ModelError
from engine.models.faults import parse_scripted_name
from engine.models.registry import make_scripted
from engine.models.scripted_memory import best_entry
from engine.report.parse import parse_report_entries
from engine.run.build import build_run

NOTEBOOK = "memory_agents:NotebookAgent"
WORKSPACE = "memory_agents:WorkspaceAgent"
PLANTED = {
    "skip": "never written",
    "revert": "lost",
    "twice": "diverged",
    "ignore": "unused",
    "invent": "invented",
}
WHERE = re.compile(r"\b(MEMORY\.md|USER\.md|memory/notes\.md):\d+\b")


async def _entry(tmp_path: Path, agent: str, model: str = "scripted/agent"):  # type: ignore[no-untyped-def]
    config = make_config(tmp_path, {"r": {"benchmark": "memory_autopsy", "agent": agent, "model": model}})
    await play(config, "r")
    entry = parse_report_entries((config.results_path() / "report.md").read_text())[-1]
    return entry, events(config, "r")


# --- planted in a run ----------------------------------------------------------------------------------


@pytest.mark.parametrize("agent", [NOTEBOOK, WORKSPACE])
@pytest.mark.parametrize("plan", sorted(PLANTED))
async def test_a_planted_failure_is_named_under_its_answer_with_file_line_phase_and_action(
    tmp_path: Path, agent: str, plan: str
) -> None:
    entry, played = await _entry(tmp_path, agent, f"scripted/agent?plan={plan}")
    memory = {a.check_id: a.memory for a in entry.imperfect}
    assert memory["3.1"].startswith(PLANTED[plan] + " — "), memory["3.1"]
    assert WHERE.search(memory["3.1"]) and re.search(r"phase \d", memory["3.1"]), memory["3.1"]
    assert re.search(r"by (memory|write|edit)\b[^#]*#\d+", memory["3.1"]), memory["3.1"]  # the action
    assert memory["3.3"].startswith("invented — " if plan == "invent" else "not decidable — ")
    # the summary beside the score counts every class of the answers listed
    counts = entry.memory_autopsy
    assert counts is not None and sum(counts.values()) == len(entry.imperfect)
    assert counts[PLANTED[plan]] >= 1
    actions = kinds(played, "agent_action")
    assert actions and all(a.action in ("memory write", "memory read") for a in actions)
    line = next(line for line in entry.lines if line.startswith("Agent actions: "))
    assert f"memory write {sum(1 for a in actions if a.action == 'memory write')}" in line


async def test_a_perfect_answer_has_no_attribution_and_the_summary_counts_only_the_listed(
    tmp_path: Path,
) -> None:
    entry, _ = await _entry(tmp_path, NOTEBOOK)
    assert [a.check_id for a in entry.imperfect] == ["3.3"]
    assert entry.memory_autopsy == {"not decidable": 1}
    assert sum(1 for line in entry.lines if line.startswith("↳ memory:")) == 1
    assert all(not line.startswith("↳") for line in entry.summary_lines())


@pytest.mark.parametrize("agent", ["memory_agents:MemorylessAgent", "chatbot"])
async def test_an_agent_without_memory_files_says_so_once_never_a_guess(tmp_path: Path, agent: str) -> None:
    model = "scripted/recall" if agent == "chatbot" else "scripted/agent?plan=skip"
    entry, played = await _entry(tmp_path, agent, model)
    assert bool(entry.imperfect) is (agent != "chatbot")  # the chatbot sees the whole chat: all right
    text = entry.text()
    assert "📊 Memory autopsy: no memory access (the agent exposes no memory files)" in text
    assert text.count("no memory access") == 1 and "↳ memory" not in text
    assert "📊 Agent actions: none exposed by this agent" in text
    assert not kinds(played, "agent_action")


@pytest.mark.parametrize(("agent", "exposed"), [("chatbot", False), (NOTEBOOK, True)])
async def test_whether_the_agent_exposes_its_actions_is_known_before_its_first_message(
    tmp_path: Path, agent: str, exposed: bool
) -> None:
    # a resume killed after its last message asks the agent nothing more: its report must still say what the
    # run's says ("none exposed by this agent", not "none recorded"), so the run asks at its start
    config = make_config(
        tmp_path, {"r": {"benchmark": "memory_autopsy", "agent": agent, "model": "scripted/agent"}}
    )
    run = build_run(config, "r", tune=fast)
    seen: list[bool] = []

    class FirstPhase:
        def on_event(self, run_id: str, event: Event) -> None:
            if event.kind == "phase_started" and not seen:  # before any message was sent
                seen.append(run.agent.memory.exposes_actions)

    run.observers.append(FirstPhase())
    await run.run()
    assert seen == [exposed]


def test_an_action_is_one_line_naming_the_tool_its_file_and_what_it_did() -> None:
    event = AgentActed(
        tool="memory", action="memory write", target="MEMORY.md", summary="replace: 'a'\n→ 'b'"
    )
    assert summary(event) == "agent memory write: memory MEMORY.md — replace: 'a' → 'b'"
    failed = AgentActed(tool="edit", action="memory write", target="MEMORY.md", error="oldText not found")
    assert summary(failed).endswith("✗ oldText not found")


# --- hand-made histories, many notations -----------------------------------------------------------------


def _evaluation(expected: str, reply: str, n: int = 50, question: str = "What is it?", **extra: object):
    return EvaluationLogged(
        check_id="9.1",
        score=0,
        attempt=1,
        effective=0,
        question=question,
        expected=expected,
        replies=[reply],
        n=n,
        **extra,  # type: ignore[arg-type]
    )


def _history(tmp_path: Path, *versions: tuple[int, dict[str, str]]) -> None:
    """Snapshots at transcript events ``n`` (a start first), each the memory files then."""
    history = MemoryHistory(tmp_path)
    for i, (n, files) in enumerate(versions):
        kind = "start" if i == 0 else "message"
        history.record({k: v.encode() for k, v in files.items()}, n, i, kind, "2026-03-01T10:00:00")


def _attribute(
    tmp_path: Path, e: EvaluationLogged, actions: list[AgentActed] | None = None
) -> tuple[str, str]:
    facts = RunFacts(actions=actions or [], messages=[e.n - 2])
    found = Autopsy(tmp_path, facts).attribute(e)
    return found.cls, found.evidence


@pytest.mark.parametrize(
    ("expected", "stored", "reply"),
    [
        ("€5,100", "- the budget is 5.1k euros", "I don't know."),
        ("$1,375", "wall tile: 1375 USD in all", "No idea, sorry."),
        ("19 August", "- dentist on 2026-08-19 at the clinic", "I can't recall the date."),
        ("6:30 pm", "yoga starts 18:30 on Thursdays", "I'm not sure when."),
        ("four thousand IU", "vitamin D: 4000 IU daily", "I don't remember the dose."),
    ],
)
def test_a_value_in_memory_in_another_notation_is_present_and_unused(
    tmp_path: Path, expected: str, stored: str, reply: str
) -> None:
    _history(tmp_path, (0, {}), (10, {"MEMORY.md": f"# Notes\n\n{stored}\n"}))
    cls, evidence = _attribute(tmp_path, _evaluation(expected, reply))
    assert cls == "unused", evidence
    assert "MEMORY.md:3" in evidence and "phase 2" in evidence


def test_an_update_never_written_names_the_stale_value_the_answer_came_from(tmp_path: Path) -> None:
    _history(tmp_path, (0, {}), (10, {"USER.md": "rent is 1,200 dollars a month"}))
    written = AgentActed(tool="memory", action="memory write", target="USER.md", summary="add: rent", n=8)
    cls, evidence = _attribute(tmp_path, _evaluation("$1,350", "Your rent is $1,200."), [written])
    assert cls == "never written"
    assert evidence.startswith("$1,350 in no memory file at any of 2 snapshots")
    assert "the answer's $1,200 is at USER.md:1 (written in phase 2 by memory add #8)" in evidence


def test_a_value_overwritten_with_an_older_one_is_lost_with_when_and_by_what(tmp_path: Path) -> None:
    old, new = "- rent: $1,200 a month", "- rent: $1,350 a month (from March)"
    _history(tmp_path, (0, {}), (10, {"MEMORY.md": old}), (20, {"MEMORY.md": new}), (30, {"MEMORY.md": old}))
    actions = [
        AgentActed(
            tool="edit", action="memory write", target="/ws/MEMORY.md", summary=f"edit: {old} → {new}", n=18
        ),
        AgentActed(
            tool="edit", action="memory write", target="/ws/MEMORY.md", summary=f"edit: {new} → {old}", n=27
        ),
        AgentActed(tool="write", action="memory write", target="other.md", n=28),
    ]
    cls, evidence = _attribute(tmp_path, _evaluation("1350 dollars", "It's $1,200."), actions)
    assert cls == "lost"
    assert evidence.startswith("1350 dollars was at MEMORY.md:1 (written in phase 3 by edit #18)"), evidence
    assert "gone at phase 4 after event #29 by edit #27" in evidence
    assert 'MEMORY.md:1 now reads "- rent: $1,200 a month", an older value (stored phase 2' in evidence


def test_two_copies_that_diverged_are_both_named(tmp_path: Path) -> None:
    files = {
        "MEMORY.md": "- yoga class: Thursdays at 18:30\n",
        "memory/yoga.md": "# Yoga\n- class at 17:00 on Thu\n",
    }
    _history(tmp_path, (0, {}), (10, files))
    cls, evidence = _attribute(tmp_path, _evaluation("6:30 pm", "The class is at 5 pm, at 17:00."))
    assert cls == "diverged"
    assert evidence.startswith("6:30 pm at MEMORY.md:1 (written in phase 2)")
    assert re.search(r"the answer's (5 pm|17:00) at memory/yoga\.md:2 \(written in phase 2\)", evidence)


def test_a_value_in_an_unrelated_line_is_no_divergence(tmp_path: Path) -> None:
    files = {"MEMORY.md": "- locker code 5820\n- bus 17 leaves at 8\n"}
    _history(tmp_path, (0, {}), (10, files))
    cls, _ = _attribute(tmp_path, _evaluation("5820", "Maybe 17?", question="What is my locker code?"))
    assert cls == "unused"


def test_an_answer_from_nothing_is_invented(tmp_path: Path) -> None:
    _history(tmp_path, (0, {}), (10, {"MEMORY.md": "- dentist: 2026-08-19"}))
    cls, evidence = _attribute(tmp_path, _evaluation("19 August", "It was on 12 May."))
    assert cls == "invented" and evidence.startswith("the answer's 12 May in no memory file, ever")


@pytest.mark.parametrize(
    ("expected", "reply", "cls", "why"),
    [
        ("You never told me.", "I don't know.", "not decidable", "states no value to look up"),
        ("blue", "I don't know.", "not decidable", "states no value to look up"),
        ("You never told me.", "It was 42 km.", "invented", "the answer's 42 km in no memory file"),
        ("You never told me.", "It was 5820.", "not decidable", "the answer's 5820 is at MEMORY.md:1"),
    ],
)
def test_with_nothing_to_look_up_it_says_why_rather_than_guess(
    tmp_path: Path, expected: str, reply: str, cls: str, why: str
) -> None:
    _history(tmp_path, (0, {}), (10, {"MEMORY.md": "- locker code 5820"}))
    found, evidence = _attribute(tmp_path, _evaluation(expected, reply))
    assert (found, why in evidence) == (cls, True), evidence


def test_no_snapshot_before_the_question_is_not_decidable(tmp_path: Path) -> None:
    _history(tmp_path, (100, {"MEMORY.md": "- locker code 5820"}))
    cls, evidence = _attribute(tmp_path, _evaluation("5820", "No idea.", n=50))
    assert cls == "not decidable" and "no memory snapshot before the question (event #48)" in evidence


def test_a_total_whose_parts_are_all_in_memory_is_unused(tmp_path: Path) -> None:
    _history(tmp_path, (0, {}), (10, {"MEMORY.md": "- tile $1,375\n- labour $2,715\n"}))
    e = _evaluation("$4,090", "It comes to about $3,000.", premise=["$1,375", "$2,715", "bathroom 1.2"])
    cls, evidence = _attribute(tmp_path, e)
    assert (
        cls == "unused"
        and "its parts are at the question: $1,375 at MEMORY.md:1, $2,715 at MEMORY.md:2" in evidence
    )


def test_without_a_history_the_answer_has_no_memory_access(tmp_path: Path) -> None:
    cls, evidence = _attribute(tmp_path, _evaluation("5820", "No idea."))
    assert (cls, evidence) == ("no memory access", "the agent exposes no memory files")


# --- the scripted agent's plans ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entries", "fact", "found"),
    [
        (["my locker code is 4417."], "my locker code is now 5820 — the gym changed the locks.", 0),
        (
            ["- the gym membership costs $45 a month", "- my locker code is 4417."],
            "Membership at the gym: $50 monthly",
            0,
        ),
        (["Yoga starts at 18:30 on Thursdays"], "the yoga class moved to 19:00 on Thursdays", 0),
        (["my locker code is 4417."], "the yoga class starts at 18:30", None),
        (["the dentist is on Monday"], "the dentist bill was $90", None),
    ],
)
def test_an_update_is_found_by_what_it_is_about_not_its_wording(
    entries: list[str], fact: str, found: int | None
) -> None:
    assert best_entry(entries, fact) == (None if found is None else entries[found])


def test_a_plan_is_checked_where_the_model_is_named() -> None:
    assert parse_scripted_name("scripted/agent?plan=save,twice").plan == frozenset({"save", "twice"})
    with pytest.raises(ModelError, match=r"unknown plan 'nope' \(known: "):
        parse_scripted_name("scripted/agent?plan=nope")
    with pytest.raises(ModelError, match="played by scripted/agent only"):
        make_scripted("scripted/persona?plan=skip")


def test_the_memory_beside_an_answer_shows_the_line_before_and_after_the_change(tmp_path: Path) -> None:
    old, new = "- rent: $1,200 a month", "- rent: $1,350 a month (from March)"
    files = [{"MEMORY.md": f"# Notes\n- bike: blue\n{line}\n- gym: $45\n"} for line in (old, new, old)]
    _history(tmp_path, (0, {}), (10, files[0]), (20, files[1]), (30, files[2]))
    (tmp_path / "transcript.jsonl").write_text('{"t":"","n":48,"kind":"message_sent","text":"Rent?"}\n')
    excerpt = memory_excerpt(tmp_path, _evaluation("$1,350", "It's $1,200."))
    assert excerpt is not None and excerpt.attribution.cls == "lost" and excerpt.file == "MEMORY.md"
    assert excerpt.before is not None and excerpt.before.label == "phase 3 after event #19"
    assert "> " + "  3  " + new in excerpt.before.lines and "    1  # Notes" in excerpt.before.lines
    assert excerpt.after.label == "phase 4 after event #29" and "> " + "  3  " + old in excerpt.after.lines
    unused = memory_excerpt(tmp_path, _evaluation("blue", "No idea.", question="What colour is my bike?"))
    assert unused is None  # a colour: nothing to look up, nothing to show


def test_a_value_present_is_shown_where_it_was_written(tmp_path: Path) -> None:
    _history(
        tmp_path,
        (0, {}),
        (10, {"USER.md": "Sam\n§\nlocker code 4417"}),
        (20, {"USER.md": "Sam\n§\nlocker code 4417\n§\nbike blue"}),
    )
    (tmp_path / "transcript.jsonl").write_text('{"t":"","n":48,"kind":"message_sent","text":"Code?"}\n')
    excerpt = memory_excerpt(tmp_path, _evaluation("4417", "I don't know."))
    assert excerpt is not None and excerpt.attribution.cls == "unused"
    assert excerpt.before is None  # the file began with it
    assert (
        excerpt.after.label == "phase 2 after event #9" and ">   3  locker code 4417" in excerpt.after.lines
    )
