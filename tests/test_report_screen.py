"""The report browser (issue 12): newest first by real finish time, the latest entry of each run (issue 24), lazy,
filterable, marks entries whose transcript is gone, and ``o`` lands on exactly the answer's event."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Tree
from tui_fakes import REPORT_MD, Scene, settle

from engine.events import EvaluationLogged, MessageSent
from engine.report.entries import EntryFilter, index_report, newest_first, parse_report_entries, reprint
from mmb_tui.app import MmbApp
from mmb_tui.screens.main_screen import MainScreen
from mmb_tui.screens.report_screen import ReportScreen
from mmb_tui.widgets.transcript_view import TranscriptView


def entry(
    date: str,
    run: str,
    score: float,
    answers: list[tuple[str, float, str, int]] | None = None,
    entry_id: str = "",
    types: str = "AGG 7.50 (2), RECALL 9.00 (4)",
) -> str:
    """An entry as ``engine/report/writer.py`` writes it: answers are (check id, score, "[AGG] [NEG]", event n)."""
    lines = [
        f"## {date} UTC — {run}: demo @ chatbot",
        f"📊 Score: {score:.2f}/10 over 6 planned checks (graded 6, ungraded 0 counted as 0)"
        f" · average over graded {score:.2f}/10",
        f"📊 Evaluations: 6, average {score:.2f}/10",
        "📊 Check coverage: 6/6",
    ]
    if answers:
        lines.append(f"📊 Imperfect answers ({len(answers)}):")
        lines += [
            f"📊 [{s:g}/10] ({cid}) {kinds} Question {cid}? | expected: 11 | got: 9 | persona: 9 — off"
            f" [transcript #{n}]"
            for cid, s, kinds, n in answers
        ]
    lines.append(f"📊 Average per type: {types}")
    lines.append("📊 Run time: 3.0 min")
    if entry_id:
        lines.append(f"📊 Entry: {entry_id}")
    return "\n".join(lines) + "\n"


def write_report(scene: Scene, *entries: str) -> None:
    (scene.results / "report.md").write_text("\n".join(entries), encoding="utf-8")


async def open_reports(app: MmbApp, pilot: Pilot[None]) -> ReportScreen:
    await pilot.press("r")
    screen = app.screen
    assert isinstance(screen, ReportScreen)
    return screen


def tree_of(screen: ReportScreen) -> Tree[object]:
    return screen.query_one(Tree)


def labels(screen: ReportScreen) -> list[str]:
    return [node.label.plain for node in tree_of(screen).root.children]


async def cursor_on(pilot: Pilot[None], screen: ReportScreen, run_id: str, check_id: str) -> None:
    """Put the tree's cursor on ``run_id``'s answer to ``check_id`` (its entry expanded, hence built)."""
    tree = tree_of(screen)
    for node in tree.root.children:
        item = node.data
        if item is None or item.entry.run_id != run_id:  # type: ignore[attr-defined]
            continue
        node.expand()
        await pilot.pause()
        stack = list(node.children)
        while stack:
            child = stack.pop()
            answer = child.data.answer if child.data is not None else None  # type: ignore[attr-defined]
            if answer is not None and answer.check_id == check_id:
                tree.move_cursor(child)
                await pilot.pause()
                await pilot.app.workers.wait_for_complete()  # the memory beside it, read off the loop
                await pilot.pause()
                assert tree.cursor_node is child
                return
            stack.extend(child.children)
    raise AssertionError(f"no answer {check_id} of {run_id}")


def toasts(app: MmbApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


# ---- the parser's side -------------------------------------------------------------------------------


def test_entries_are_sorted_by_real_finish_time_not_by_file_order() -> None:
    text = "\n".join(
        [
            "## 2026-03-15 21:04 — old: demo @ chatbot\n📊 Evaluations: 3, average 6.67/10\n",  # virtual date
            entry("2026-08-19 10:05", "a", 8),
            entry("2026-08-19 12:00", "b", 8),
            entry("2026-08-19 11:00", "c", 8),  # appended late: kept with the checkpoint over a kill
            entry("2026-08-19 12:00", "d", 8),  # the same minute as b, written after it
        ]
    )
    entries = parse_report_entries(text)
    assert [e.run_id for e in newest_first(entries)] == ["d", "b", "c", "a", "old"]
    assert entries[0].finished_at is None and str(entries[1].finished_at) == "2026-08-19 10:05:00+00:00"


def test_answer_types_and_the_entry_id_are_read() -> None:
    (parsed,) = parse_report_entries(
        entry("2026-08-19 10:05", "a", 8, [("2.1", 5, "[AGG] [NEG]", 31)], "abc123")
    )
    answer = parsed.imperfect[0]
    assert (answer.check_id, answer.types, answer.question, answer.transcript_n) == (
        "2.1",
        ["AGG", "NEG"],
        "Question 2.1?",
        31,
    )
    assert parsed.entry_id == "abc123" and parsed.type_averages == {"AGG": 7.5, "RECALL": 9.0}
    assert parsed.check_types == {"AGG", "NEG", "RECALL"}


def test_the_filter_reads_runs_score_ranges_and_check_types() -> None:
    assert EntryFilter.parse("") == EntryFilter() and not EntryFilter.parse("  ").active
    wanted = EntryFilter.parse("run:hermes score:<7 type:agg")
    assert (wanted.run, wanted.high, wanted.strict_high, wanted.check_type) == ("hermes", 7, True, "AGG")
    assert EntryFilter.parse("openclaw score:5-8").describe() == "run openclaw, score ≥5, score ≤8"
    low, high, mid = (parse_report_entries(entry("2026-08-19 10:05", "hermes-1", s))[0] for s in (4, 9, 7))
    assert [EntryFilter.parse("score:<7").matches(e) for e in (low, high, mid)] == [True, False, False]
    assert [EntryFilter.parse("score:>=7").matches(e) for e in (low, high, mid)] == [False, True, True]
    assert EntryFilter.parse("type:AGG score:7.5").matches(low)  # with a type: that type's average
    assert not EntryFilter.parse("type:VOID").matches(low) and not EntryFilter.parse("run:open").matches(low)
    for bad in ("score:high", "colour:red", "type:"):
        with pytest.raises(ValueError):
            EntryFilter.parse(bad)


@pytest.mark.parametrize(
    "odd",
    [
        "",
        REPORT_MD,  # virtual dates, a wrapped line, a title line
        "## Notes\n📊 not an entry of its own\n",
        "📊 Run time: 3.0 min  \n📊  Score: 1.00/10\n\n📊 after a blank line\n",  # spaces, a blank line
        "📊 [5/10] (1.1) Vet? | expected: a | got: \x1b[2J\t\u202ebidi\u00a0 | persona: x — c [transcript #4]\n",
        "## 2026-08-19 10:00 UTC — crlf: demo @ chatbot\r\n📊 Score: 5.00/10\r\n",
        "  ## 2026-08-19 10:01 UTC — indented: demo @ chatbot\n📊 Score: 5.00/10\n",
        "## 2026-08-19 10:02 UTC — broken: demo @ chatbot\n📊 Score: \udcff5.00/10\n",  # an invalid byte
        "\ufeff## 2026-08-19 10:03 UTC – dash: demo  @  chatbot\n📊 Score: 5.00/10\n",
    ],
)
def test_clean_entries_are_taken_as_written_and_the_others_parsed_with_the_same_result(
    tmp_path: Path, odd: str
) -> None:
    clean = [
        entry(f"2026-08-19 10:{i:02d}", f"r{i % 2}", 7, [("2.1", 5, "[AGG]", 31)], f"id{i}") for i in range(3)
    ]
    text = "\n".join([clean[0], odd, *clean[1:]]) if not odd.startswith("\ufeff") else odd + clean[0]
    data = text.encode("utf-8", errors="surrogateescape")  # \udcff: the byte 0xff, invalid UTF-8
    (tmp_path / "report.md").write_bytes(data)
    parsed = parse_report_entries(data.decode("utf-8", errors="replace"))
    for run_id in (None, "r1", "crlf"):
        wanted = "\n".join(e.text() for e in parsed if run_id is None or e.run_id == run_id)
        assert reprint(tmp_path / "report.md", run_id).decode() == wanted
    assert [lazy.entry for lazy in index_report(tmp_path / "report.md")] == parsed  # the browser's reading


# ---- the screen ----------------------------------------------------------------------------------------


async def test_the_browser_lists_entries_newest_first_by_finish_time(scene: Scene) -> None:
    write_report(
        scene,
        entry("2026-08-19 10:05", "chatbot-1", 9),
        entry("2026-08-19 12:00", "hermes-1", 8),
        entry("2026-08-19 11:00", "openclaw-1", 7),
    )
    app = scene.app()
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_reports(app, pilot)
        assert [label.split(" — ")[1].split(":")[0] for label in labels(screen)] == [
            "hermes-1",
            "openclaw-1",
            "chatbot-1",
        ]
        assert "newest first by finish time" in str(screen.query_one("#report-header").render())


async def test_entries_are_built_only_when_expanded(scene: Scene) -> None:
    write_report(
        scene,
        *(entry(f"2026-08-19 10:{i:02d}", f"chatbot-{i}", 6, [("3.2", 5, "[AGG]", 12)]) for i in range(50)),
    )
    app = scene.app()
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_reports(app, pilot)
        nodes = tree_of(screen).root.children
        assert len(nodes) == 50
        assert nodes[0].is_expanded and nodes[0].children  # the newest, open
        assert all(not node.children for node in nodes[1:])  # the others: one node each
        assert all(node.allow_expand for node in nodes)
        tree_of(screen).move_cursor(nodes[7])
        await pilot.press("space")
        await pilot.pause()
        assert nodes[7].is_expanded and any("Imperfect answers" in c.label.plain for c in nodes[7].children)
        assert not nodes[8].children


async def test_filters_by_run_score_and_check_type(scene: Scene) -> None:
    write_report(
        scene,
        entry("2026-08-19 10:00", "chatbot-1", 9, [("3.1", 5, "[RECALL]", 11)], types="RECALL 9.00 (4)"),
        entry("2026-08-19 10:10", "hermes-1", 6, [("3.1", 0, "[RECALL]", 11), ("3.2", 5, "[AGG] [NEG]", 12)]),
        entry("2026-08-19 10:20", "openclaw-1", 4, [("3.2", 2.5, "[AGG]", 12)], types="AGG 2.50 (1)"),
    )
    app = scene.app()
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_reports(app, pilot)

        async def apply(text: str) -> list[str]:
            await pilot.press("slash")
            field = screen.query_one("#report-filter", Input)
            assert field.has_focus
            field.value = text
            await pilot.press("enter")
            await pilot.pause()
            return [e.run_id for e in screen.shown]

        assert await apply("run:hermes") == ["hermes-1"]
        assert await apply("score:<7") == ["openclaw-1", "hermes-1"]
        assert await apply("score:5-10") == ["hermes-1", "chatbot-1"]
        assert await apply("type:AGG") == ["openclaw-1", "hermes-1"]
        assert "type AGG" in str(screen.query_one("#report-header").render())
        hermes = tree_of(screen).root.children[1]
        hermes.expand()
        await pilot.pause()
        (group,) = [c for c in hermes.children if c.children]
        assert group.label.plain == "📊 Imperfect answers (2) — 1 of type AGG shown:"
        (listed,) = group.children  # its RECALL answer is not listed
        assert "(3.2) [AGG] [NEG] Question 3.2?" in listed.label.plain
        assert await apply("type:AGG score:<6") == ["openclaw-1"]  # the AGG average: 7.50 for hermes-1
        assert await apply("") == ["openclaw-1", "hermes-1", "chatbot-1"]
        await pilot.press("slash")
        screen.query_one("#report-filter", Input).value = "colour:red"
        await pilot.press("enter")
        assert "colour: no such filter" in toasts(app)[-1]
        await pilot.press("escape")  # leaves the filter as it was, not the browser
        assert app.screen is screen and tree_of(screen).has_focus
        assert await apply("run:hermes") == ["hermes-1"]
        await pilot.press("slash")
        screen.query_one("#report-filter", Input).value = "score:<1"
        await pilot.press("escape")
        assert screen.query_one("#report-filter", Input).value == "run:hermes"
        assert [e.run_id for e in screen.shown] == ["hermes-1"] and app.screen is screen


async def test_an_entry_whose_transcript_is_gone_is_marked_and_o_says_so(scene: Scene) -> None:
    write_report(
        scene,
        entry("2026-08-19 10:00", "chatbot-1", 6, [("3.2", 5, "[AGG]", 12)]),
        entry("2026-08-19 10:10", "deleted-1", 6, [("3.2", 5, "[AGG]", 12)]),
        entry("2026-08-19 10:20", "hermes-1", 6, [("3.2", 5, "[AGG]", 14)]),  # #14 is an error now
    )
    app = scene.app()
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await open_reports(app, pilot)
        assert ["transcript gone" in label for label in labels(screen)] == [False, True, False]
        await cursor_on(pilot, screen, "deleted-1", "3.2")
        await pilot.press("o")
        assert app.screen is screen and "transcript of deleted-1 is gone" in toasts(app)[-1]
        # a restarted run: the folder is back, but event #14 is not this entry's evaluation any more
        await cursor_on(pilot, screen, "hermes-1", "3.2")
        await pilot.press("o")
        assert (
            app.screen is screen
            and "no longer holds this entry (its event #14 is now of kind error" in toasts(app)[-1]
        )
        assert "transcript gone" in labels(screen)[0]


async def test_a_runs_newer_entry_hides_its_older_ones_even_an_identical_one(scene: Scene) -> None:
    same = entry("2026-08-19 10:00", "chatbot-1", 6, [("3.2", 5, "[AGG]", 12)], entry_id="{}")
    other = entry("2026-08-19 09:00", "hermes-1", 7, entry_id="5555cccc6666")
    write_report(scene, same.format("1111aaaa2222"), other, same.format("3333bbbb4444"))
    app = scene.app()
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await open_reports(app, pilot)
        assert [lazy.entry.entry_id for lazy in screen.entries] == ["3333bbbb4444", "5555cccc6666"]
        assert len(labels(screen)) == 2


async def test_o_opens_exactly_the_answers_run_and_event_in_a_two_run_session(scene: Scene) -> None:
    later = EvaluationLogged(check_id="3.2", score=10, attempt=1, effective=10, question="How old?")
    for run_id in ("chatbot-1", "hermes-1"):  # both runs graded 3.2 again since: the latest is #16
        scene.engine.emit(run_id, later.model_copy())
        scene.engine.emit(run_id, MessageSent(text="and then some"))
    write_report(
        scene,
        entry("2026-08-19 10:00", "hermes-1", 6, [("3.2", 5, "[AGG]", 12)]),
        entry("2026-08-19 10:10", "chatbot-1", 6, [("3.2", 10, "[AGG]", 16), ("3.1", 5, "[RECALL]", 11)]),
    )
    app = scene.app()
    async with app.run_test(size=(100, 30)) as pilot:
        for run_id, check_id, number in [
            ("hermes-1", "3.2", 12),
            ("chatbot-1", "3.1", 11),
            ("chatbot-1", "3.2", 16),
        ]:
            screen = await open_reports(app, pilot)
            await cursor_on(pilot, screen, run_id, check_id)
            await pilot.press("o")
            await settle(pilot)
            assert isinstance(app.screen, MainScreen) and app.main.selected_run == run_id
            column = app.main.column_for(run_id)
            assert column is not None and column.run_id == run_id
            view = column.query_one(TranscriptView)
            event = view.cursor_event
            assert event is not None and (event.kind, event.n) == ("evaluation_logged", number)
            assert event.check_id == check_id and view.has_focus  # type: ignore[union-attr]
            on_screen = "\n".join(
                "".join(segment.text for segment in view.render_line(y)) for y in range(view.size.height)
            )
            assert (event.comment or event.question) in on_screen  # scrolled to it, not left at the tail


async def test_o_loads_the_events_around_an_answer_older_than_the_loaded_tail(scene: Scene) -> None:
    for i in range(40):
        scene.engine.emit("hermes-1", MessageSent(text=f"later {i}"))
    write_report(scene, entry("2026-08-19 10:00", "hermes-1", 6, [("3.2", 5, "[AGG]", 12)]))
    app = scene.app()
    app.main.max_entries = 20  # the tail holds #36-#55: #12 is outside it
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_reports(app, pilot)
        await cursor_on(pilot, screen, "hermes-1", "3.2")
        await pilot.press("o")
        await settle(pilot)
        view = app.query_one("#column-0 TranscriptView", TranscriptView)
        event = view.cursor_event
        assert event is not None and event.n == 12 and event.kind == "evaluation_logged"
        assert "older than the loaded tail" in toasts(app)[-1]
