"""Export and copy from the report browser (issue 35, item 6): the answer under the cursor or a whole entry, to
``results/exports/<run>-<entry>[-<check>].md`` (private) and to the clipboard (OSC 52); in the palette."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from test_report_screen import cursor_on, entry, open_reports, toasts, write_report
from tui_fakes import Scene, settle

from engine.report.entries import parse_report_entries
from mmb_tui.app import MmbApp
from mmb_tui.screens.report_export import export_path, markdown
from mmb_tui.screens.report_screen import ReportScreen

HERMES = entry(
    "2026-08-19 10:10",
    "hermes-1",
    6,
    [("3.1", 0, "[RECALL]", 11), ("3.2", 5, "[AGG] [NEG]", 12)],
    entry_id="aaaa1111bbbb",
)
OLD = entry("2026-08-19 09:00", "chatbot-1", 9, [("3.1", 5, "[RECALL]", 11)])  # written before entry ids


def titles(app: MmbApp) -> list[str]:
    return [str(n.title) for n in app._notifications]


def _exports(scene: Scene) -> dict[str, str]:
    folder = scene.results / "exports"
    return (
        {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.md"))}
        if folder.exists()
        else {}
    )


@pytest.mark.parametrize(
    ("run_id", "check_id"), [("hermes-1", "3.2"), ("hermes-1", "3.1"), ("chatbot-1", "3.1")]
)
async def test_x_exports_the_answer_under_the_cursor_and_X_its_whole_entry(
    scene: Scene, run_id: str, check_id: str
) -> None:
    write_report(scene, OLD, HERMES)
    app = scene.app()
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_reports(app, pilot)
        await cursor_on(pilot, screen, run_id, check_id)
        await pilot.press("x")
        await settle(pilot)
        name = "aaaa1111bbbb" if run_id == "hermes-1" else "entry1"
        note = _exports(scene)[f"{run_id}-{name}-{check_id}.md"]
        assert note.startswith(f"# {run_id} · check {check_id} [")
        assert "- **question:** Question " in note and "- **expected:** 11" in note and "- **got:** 9" in note
        assert f"results/{run_id}/transcript.jsonl, event #" in note
        assert titles(app)[-1] == "Exported" and toasts(app)[-1].endswith(
            f"results/exports/{run_id}-{name}-{check_id}.md"
        )
        await pilot.press("X")  # the whole entry, as report.md has it
        await settle(pilot)
        whole = _exports(scene)[f"{run_id}-{name}.md"]
        assert whole.startswith("## 2026-08-19 ") and f"— {run_id}: demo @ chatbot" in whole.splitlines()[0]
        assert (
            parse_report_entries(whole)[0].lines
            == screen.shown[[e.run_id for e in screen.shown].index(run_id)].entry.lines
        )


async def test_x_on_an_entry_exports_it_whole_and_the_files_are_private(scene: Scene) -> None:
    write_report(scene, HERMES)
    app = scene.app()
    async with app.run_test(size=(120, 30)) as pilot:
        await open_reports(app, pilot)
        await pilot.press("x")  # the cursor on the entry itself
        await settle(pilot)
    path = scene.results / "exports" / "hermes-1-aaaa1111bbbb.md"
    assert path.read_text(encoding="utf-8") == parse_report_entries(HERMES)[0].text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700


@pytest.mark.parametrize(("keys", "whole"), [(["y"], False), (["Y"], True)])
async def test_y_copies_the_same_text_to_the_clipboard(scene: Scene, keys: list[str], whole: bool) -> None:
    write_report(scene, HERMES)
    app = scene.app()
    sent: list[str] = []
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_reports(app, pilot)
        await cursor_on(pilot, screen, "hermes-1", "3.2")
        app.copy_to_clipboard = sent.append  # type: ignore[method-assign]  # what reaches the terminal
        await pilot.press(*keys)
        await settle(pilot)
        (entry_,) = [lazy.entry for lazy in screen.shown]
        answer = next(a for a in entry_.imperfect if a.check_id == "3.2")
        assert sent == [markdown(entry_, None if whole else answer)]
        assert titles(app)[-1] == "Copied"
    assert _exports(scene) == {}  # a copy writes no file


async def test_export_and_copy_are_in_the_palette(scene: Scene) -> None:
    write_report(scene, HERMES)
    app = scene.app()
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_reports(app, pilot)
        assert isinstance(screen, ReportScreen)
        titles = [str(command.title).lower() for command in app.get_system_commands(screen)]
        assert (
            sum("export" in title for title in titles) == 2 and sum("copy" in title for title in titles) == 2
        )


async def test_an_export_that_cannot_be_written_says_why_in_one_toast(scene: Scene) -> None:
    write_report(scene, HERMES)
    (scene.results / "exports").write_text("a file where the folder goes", encoding="utf-8")
    app = scene.app()
    async with app.run_test(size=(120, 30)) as pilot:
        await open_reports(app, pilot)
        await pilot.press("x")
        await settle(pilot)
        assert "exports" in toasts(app)[-1] and app.screen is not app.main


def test_export_names_are_safe_file_names(tmp_path: Path) -> None:
    (parsed,) = parse_report_entries(HERMES.replace("hermes-1", "M.hermes.demo.r1"))
    answer = parsed.imperfect[1]
    path = export_path(tmp_path, parsed, answer)
    assert path == tmp_path / "exports" / "M.hermes.demo.r1-aaaa1111bbbb-3.2.md"
    assert "/" not in path.name and " " not in path.name
