"""The memory autopsy where users look (issue 33): the agent's own actions in the transcript (a marker per
kind, the ``A`` filter, the headless printer's markers), the memory file beside an imperfect answer in the
report browser (before and after the change that mattered), and the exports carrying the attribution."""

from __future__ import annotations

import asyncio
import io
import shutil
import threading
from pathlib import Path

import pytest
from engine_helpers import make_config, play
from rich.text import Text
from test_report_screen import cursor_on, open_reports, write_report
from textual.widgets import Static, Tree
from tui_fakes import Scene, settle

from engine.autopsy.history import MemoryHistory, SnapshotKind
from engine.events import ActionKind, AgentActed, AgentReplied, EvaluationLogged, MessageSent
from engine.report.entries import ImperfectAnswer
from mmb_tui.front_ends.headless import HeadlessPrinter
from mmb_tui.screens.help_screen import marker_meanings
from mmb_tui.screens.report_screen import ReportScreen
from mmb_tui.transcript.event_render import ACTION_MARKERS, FILTER_LABELS, event_marker, headline, passes
from mmb_tui.widgets import memory_beside
from mmb_tui.widgets.transcript_view import TranscriptView

ACTIONS: list[tuple[ActionKind, str, str]] = [
    ("memory write", "memory", "MEMORY.md"),
    ("memory read", "read", "memory/notes.md"),
    ("file write", "write_file", "notes/todo.txt"),
    ("file read", "read_file", "/etc/hostname"),
    ("command", "terminal", ""),
    ("search", "session_search", ""),
    ("other", "todo", ""),
]


def _acted(action: ActionKind, tool: str, target: str, n: int = 0) -> AgentActed:
    return AgentActed(
        tool=tool, action=action, target=target, summary=f"{action} by {tool}", n=n, t="2026-08-19T10:03:00"
    )


# ---- the agent's actions in the transcript ---------------------------------------------------------------


def test_each_kind_of_action_has_a_marker_of_its_own_two_cells_wide() -> None:
    shown = {action: event_marker(_acted(action, tool, target)) for action, tool, target in ACTIONS}
    assert len(set(shown.values())) == len(ACTIONS)  # a memory write never reads as a read or a command
    assert all(len(m.strip()) == 1 and "\ufe0f" not in m and "\u200d" not in m for m in shown.values())
    write = _acted("memory write", "memory", "USER.md")
    assert headline(write).plain.split()[1] == ACTION_MARKERS["memory write"]
    assert "memory write: memory USER.md" in headline(write).plain
    meanings = marker_meanings()  # the help's legend names every one
    assert all(glyph in meanings for action, glyph in ACTION_MARKERS.items() if action != "other")


def test_the_headless_printer_shows_the_same_marker_per_action(scene: Scene) -> None:
    out = io.StringIO()
    printer = HeadlessPrinter(scene.engine, out)  # type: ignore[arg-type]
    for action, tool, target in ACTIONS:
        before = out.tell()
        printer.on_event("r", _acted(action, tool, target))
        assert out.getvalue()[before:].startswith(ACTION_MARKERS[action] + " "), action


@pytest.mark.parametrize(
    ("event", "shown"),
    [
        (_acted("memory write", "memory", "MEMORY.md"), True),
        (_acted("command", "exec", ""), True),
        (MessageSent(text="My locker is 5820 now."), True),  # the messages the actions came between
        (AgentReplied(text="Noted."), True),
        (
            EvaluationLogged(check_id="1.1", score=0, attempt=1, effective=0, question="q", expected="e"),
            False,
        ),
    ],
)
def test_the_actions_filter_keeps_the_actions_and_the_messages_between_them(
    event: object, shown: bool
) -> None:
    assert passes(event, "actions") is shown  # type: ignore[arg-type]
    assert passes(event, "errors") is False  # type: ignore[arg-type]


async def test_A_shows_the_agents_actions_and_again_everything(scene: Scene) -> None:
    for action, tool, target in ACTIONS[:3]:
        scene.engine.emit("chatbot-1", _acted(action, tool, target))
    app = scene.app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        view = app.query_one("#column-0 TranscriptView", TranscriptView)
        everything = view.virtual_size.height
        await pilot.press("A")
        await settle(pilot)
        assert view.filter_mode == "actions" and view.virtual_size.height < everything
        kinds = {e.kind for e in view.events if passes(e, view.filter_mode)}
        assert "agent_action" in kinds and kinds <= {"agent_action", "message_sent", "agent_replied"}
        header = str(app.query_one("#column-0 .run-column-header", Static).render())
        assert FILTER_LABELS["actions"] in header
        await pilot.press("A")
        await settle(pilot)
        assert view.filter_mode == "all" and view.virtual_size.height == everything
        await pilot.press("f", "f", "f", "f")  # f cycles to it too
        assert view.filter_mode == "actions"


async def test_the_actions_filter_is_in_the_palette_and_the_help(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert any(title.startswith("Agent actions: ") and "memory writes" in title for title in titles)
    from mmb_tui.app import HELP

    keys = {key: text for _, rows in HELP for key, text in rows}
    assert "A" in keys and "memory write" in keys["A"] and "agent actions" in keys["f"]


# ---- the memory beside an answer in the report browser ---------------------------------------------------


def write_run(
    results: Path, run_id: str, versions: list[tuple[int, dict[str, str]]], answer: EvaluationLogged
) -> None:
    """A run folder as a played run leaves it: its memory history (a snapshot at each transcript event ``n``)
    and a transcript ending with the message that asked and the answer's grade."""
    folder = results / run_id
    history = MemoryHistory(folder)
    for i, (n, files) in enumerate(versions):
        kind: SnapshotKind = "start" if i == 0 else "message"
        history.record({k: v.encode() for k, v in files.items()}, n, i, kind, "2026-03-01T10:00:00")
    asked = MessageSent(text=answer.question, n=answer.n - 2)
    lines = [asked.model_dump_json(), answer.model_dump_json()]
    (folder / "transcript.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def answer_entry(run_id: str, evaluation: EvaluationLogged, memory: str) -> str:
    return "\n".join(
        [
            f"## 2026-08-19 10:30 UTC — {run_id}: demo @ hermes",
            "📊 Score: 8.33/10 over 6 planned checks (graded 6, ungraded 0 counted as 0)"
            " · average over graded 8.33/10",
            "📊 Evaluations: 6, average 8.33/10",
            "📊 Check coverage: 6/6",
            f"📊 Memory autopsy: 1 imperfect answer — {memory.split(' — ')[0]} 1",
            "📊 Imperfect answers (1):",
            f"📊 [0/10] ({evaluation.check_id}) [RECALL] {evaluation.question} | expected: {evaluation.expected}"
            f" | got: {evaluation.replies[0]} | persona: wrong value [transcript #{evaluation.n}]",
            f"📊 ↳ memory: {memory}",
            "📊 Agent actions: 3 — memory write 3",
            "📊 Run time: 3.0 min",
            "📊 Entry: 0123abcd4567",
        ]
    )


def grade(check_id: str, question: str, expected: str, reply: str, n: int = 50) -> EvaluationLogged:
    return EvaluationLogged(
        check_id=check_id,
        score=0,
        attempt=1,
        effective=0,
        question=question,
        expected=expected,
        replies=[reply],
        answer=reply,
        n=n,
    )


# (file, the line before, the line after the change that mattered, expected, the answer)
LOST = [
    ("MEMORY.md", "- rent: $1,350 a month (from March)", "- rent: $1,200 a month", "$1,350", "It's $1,200."),
    ("USER.md", "locker code 5820", "locker code 4417", "5820", "Your locker code is 4417."),
    (
        "memory/notes.md",
        "- dentist moved to 21 October, 9:30",
        "- dentist on 14 October, 9:30",
        "Oct 21st",
        "The dentist is on 14 October.",
    ),
    ("MEMORY.md", "vitamin D: 4000 IU daily", "vitamin D: 2000 IU daily", "4,000 IU", "2000 IU a day."),
]


def detail_of(screen: ReportScreen) -> str:
    return str(screen.query_one("#report-detail-text", Static).render())


@pytest.mark.parametrize(("file", "new", "old", "expected", "reply"), LOST)
async def test_an_answer_shows_its_memory_line_before_and_after_the_change(
    scene: Scene, file: str, new: str, old: str, expected: str, reply: str
) -> None:
    body = ["# Notes", "- bike: blue", "{}", "- gym: $45 a month", "- sister: Ana"]
    files = [{file: "\n".join(body).format(line) + "\n"} for line in (old, new, old)]
    evaluation = grade("3.1", "What is it now?", expected, reply)
    write_run(
        scene.results, "hermes-1", [(0, {}), (10, files[0]), (20, files[1]), (30, files[2])], evaluation
    )
    memory = f"lost — {expected} was at {file}:3 (written in phase 3 by memory replace #18)"
    write_report(scene, answer_entry("hermes-1", evaluation, memory))
    app = scene.app()
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await open_reports(app, pilot)
        await cursor_on(pilot, screen, "hermes-1", "3.1")
        shown = detail_of(screen)
        assert f"memory: {memory}" in shown
        lines = shown.splitlines()
        before = lines.index(f"{file} before — phase 3 after event #19:")
        after = lines.index(f"{file} after — phase 4 after event #29:")
        assert lines.index(f"memory: {memory}") < before < after  # under the answer's memory line
        assert f">   3  {new}" in lines[before:after] and f">   3  {old}" in lines[after:]
        assert "    2  - bike: blue" in lines[before:after]  # the lines around it, numbered
        cursor = screen.query_one("#report-tree", Tree).cursor_node
        assert cursor is not None and str(cursor.label).endswith("↳ lost")  # its class in the tree too


async def test_the_memory_beside_an_answer_is_read_off_the_apps_loop(
    scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a long history takes time to read: the browser says it reads, and answers keys meanwhile
    evaluation = grade("3.1", "What is my locker code?", "5820", "4417")
    write_run(scene.results, "hermes-1", [(0, {}), (10, {"USER.md": "locker code 5820\n"})], evaluation)
    write_report(scene, answer_entry("hermes-1", evaluation, "unused — 5820 is at USER.md:1"))
    release, reading = threading.Event(), threading.Event()
    slow_read = memory_beside.memory_lines

    def memory_lines(run_dir: Path, answer: ImperfectAnswer) -> Text | None:
        reading.set()
        assert release.wait(30)
        return slow_read(run_dir, answer)

    monkeypatch.setattr(memory_beside, "memory_lines", memory_lines)
    app = scene.app()
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await open_reports(app, pilot)
        tree = screen.query_one("#report-tree", Tree)
        node = next(n for n in tree.root.children if n.data is not None and n.data.entry.run_id == "hermes-1")
        node.expand()
        await pilot.pause()
        stack, answer = list(node.children), None
        while stack and answer is None:
            child = stack.pop()
            found = child.data.answer if child.data is not None else None
            answer = child if isinstance(found, ImperfectAnswer) else None
            stack += child.children
        assert answer is not None
        tree.move_cursor(answer)
        await pilot.pause()
        assert await asyncio.to_thread(reading.wait, 30)
        assert "memory file: reading…" in detail_of(screen)
        await pilot.press("?")  # the app answers while the file is read
        await pilot.pause()
        assert app.screen is not screen
        await pilot.press("escape")
        release.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        shown = detail_of(screen)
        assert "reading…" not in shown and "USER.md at — " in shown and "locker code 5820" in shown


async def test_without_a_memory_history_the_answer_keeps_its_line_and_shows_no_file(scene: Scene) -> None:
    evaluation = grade("3.1", "What is my locker code?", "5820", "4417")
    memory = "not decidable — no snapshot of its memory before the question"
    write_report(scene, answer_entry("openclaw-1", evaluation, memory))
    app = scene.app()
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await open_reports(app, pilot)
        await cursor_on(pilot, screen, "openclaw-1", "3.1")
        shown = detail_of(screen)
        assert f"memory: {memory}" in shown and " before — " not in shown and " at — " not in shown


async def test_a_damaged_history_is_said_in_one_line(scene: Scene) -> None:
    evaluation = grade("3.1", "What is my locker code?", "5820", "4417")
    write_run(scene.results, "hermes-1", [(0, {}), (10, {"USER.md": "locker code 5820\n"})], evaluation)
    (scene.results / "hermes-1" / "memory" / "blobs.pack").write_bytes(b"")  # its versions lost
    write_report(scene, answer_entry("hermes-1", evaluation, "unused — 5820 is at USER.md:1"))
    app = scene.app()
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await open_reports(app, pilot)
        await cursor_on(pilot, screen, "hermes-1", "3.1")
        lines = detail_of(screen).splitlines()
        assert "memory: unused — 5820 is at USER.md:1" in lines  # the answer and its line always show
        assert [line for line in lines if line.startswith("memory file: cannot read results/hermes-1/memory")]


async def test_a_whole_run_shows_the_planted_memory_failure_beside_its_answer(
    scene: Scene, tmp_path: Path
) -> None:
    played = tmp_path / "played"
    played.mkdir()
    config = make_config(
        played,
        {
            "r": {
                "benchmark": "memory_autopsy",
                "agent": "memory_agents:NotebookAgent",
                "model": "scripted/agent?plan=revert",
            }
        },
    )
    await play(config, "r")
    shutil.copytree(config.results_path() / "r", scene.results / "r")
    write_report(scene, (config.results_path() / "report.md").read_text(encoding="utf-8"))
    app = scene.app()
    async with app.run_test(size=(120, 60)) as pilot:
        screen = await open_reports(app, pilot)
        await cursor_on(pilot, screen, "r", "3.1")
        lines = detail_of(screen).splitlines()
        memory = next(line for line in lines if line.startswith("memory: "))
        assert memory.startswith("memory: lost — ")
        file = memory.split(" at ", 1)[1].split(":", 1)[0] if " at " in memory else "MEMORY.md"
        heads = [
            line
            for line in lines
            if line.endswith(":") and " — " in line and line.split()[1] in ("before", "after")
        ]
        assert len(heads) == 2 and all(h.startswith(file) for h in heads), lines
        marked = [line for line in lines if line.startswith(">")]
        assert len(marked) == 2 and marked[0] != marked[1]  # the line before and after the change differ
        await pilot.press("x")
        exported = next((scene.results / "exports").glob("r-*-3.1.md")).read_text(encoding="utf-8")
        assert f"- **memory:** {memory.removeprefix('memory: ')}" in exported
        await pilot.press("X")
        whole = [p for p in (scene.results / "exports").glob("r-*.md") if not p.stem.endswith("3.1")]
        assert "↳ memory: lost — " in whole[0].read_text(encoding="utf-8")
