"""Megabyte replies in the app (issue 23, item 4): a run whose agent answered hundreds of thousands of
characters opens on its tail, a long reply folds with "… N characters more", an expanded one shows a capped
part and what is left, and the view holds only the head of each long text.

How fast such a run opens and how much memory it takes is measured by ``bench/tui_huge_replies.py``.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from textual.pilot import Pilot
from tui_fakes import Scene, settle

from engine.events import AgentReplied, Event, MessageSent, ToolCalled
from mmb_tui.transcript import files as transcript_files
from mmb_tui.transcript.event_render import EXPANDED_CHARS, EXPANDED_LINES, FOLDED_LINE_CHARS, expanded_parts
from mmb_tui.transcript.files import lines_from_end, read_tail_events, tail_lines
from mmb_tui.transcript.held_events import HELD_CHARS, cut_chars, held
from mmb_tui.widgets.transcript_view import TranscriptView

REPLY_CHARS = 300_000
INDENT = 8  # a folded body line's indent
SHOWN = FOLDED_LINE_CHARS - INDENT - 1  # characters of a long body line a folded reply keeps (then "…")


def _one_line_reply(t: str) -> AgentReplied:
    return AgentReplied(text="Here it is:\n" + "x" * REPLY_CHARS, t=t)


def _many_lines_reply(t: str) -> AgentReplied:
    line = "Résumé — every ride you told me about, with its date and distance in km.\n"
    return AgentReplied(text="All of it:\n" + (line * (REPLY_CHARS // len(line) + 1))[:REPLY_CHARS], t=t)


def _huge_run(scene: Scene) -> list[Event]:
    """Three replies of 300,000 characters among ordinary events, written to chatbot-1's transcript."""
    events: list[Event] = []
    for i, reply in enumerate((_one_line_reply, _many_lines_reply, _one_line_reply)):
        t = f"2026-08-20T11:{i:02d}:00"
        events.append(scene.engine.emit("chatbot-1", MessageSent(text=f"Tell me everything, part {i}.", t=t)))
        events.append(scene.engine.emit("chatbot-1", reply(t)))
        events.append(
            scene.engine.emit("chatbot-1", ToolCalled(name="facts_mark_told", arguments={}, result="ok", t=t))
        )
    events.append(scene.engine.emit("chatbot-1", MessageSent(text="Thanks, that was the tail.", t=t)))
    return events


def _screen(view: TranscriptView) -> list[str]:
    return ["".join(segment.text for segment in view.render_line(y)) for y in range(view.size.height)]


async def _open(pilot: Pilot[None]) -> TranscriptView:
    await settle(pilot)
    return pilot.app.query_one("#column-0 TranscriptView", TranscriptView)


async def test_a_run_with_huge_replies_opens_on_its_tail_and_folds_them(scene: Scene) -> None:
    written = _huge_run(scene)
    app = scene.app()
    async with app.run_test(size=(120, 40)) as pilot:
        view = await _open(pilot)
        assert view.following and view.events[-1].n == written[-1].n
        screen = _screen(view)
        assert any("Thanks, that was the tail." in line for line in screen)  # the tail is shown
        folded = f"… {REPLY_CHARS - SHOWN:,} characters more"  # the one-line replies: one body line kept
        assert sum(folded in line for line in screen) == 2, screen
        assert any("Résumé — every ride" in line for line in screen)  # the reply of many lines: two shown
        assert sum("characters more" in line for line in screen) == 3
        held_texts = [event.text for event in view.events if event.kind == "agent_replied"]
        assert all(len(text) <= HELD_CHARS for text in held_texts[-3:])  # only the head of each is held


async def test_an_expanded_huge_reply_shows_a_capped_part_and_what_is_left(scene: Scene) -> None:
    _huge_run(scene)
    app = scene.app()
    async with app.run_test(size=(120, 40)) as pilot:
        view = await _open(pilot)
        view.focus()
        folded_height = view.virtual_size.height
        await pilot.press("up", "up", "up", "enter")  # the cursor on the last reply, unfolded
        event = view.cursor_event
        assert event is not None and event.kind == "agent_replied" and event.text.startswith("Here it is:")
        await pilot.pause()
        grown = view.virtual_size.height - folded_height
        assert 0 < grown <= EXPANDED_CHARS // (view.content_width() - INDENT) + 4  # wrapped, never megabytes
        _head, rest = expanded_parts(event)
        assert rest is not None
        shown = rest.plain.split("\n")[0]  # the part of the one long line shown
        assert set(shown) == {"x"} and len(shown) < EXPANDED_CHARS
        await pilot.press("down")  # the next event at the bottom, the end of the reply above it
        marker = f"… {REPLY_CHARS - len(shown):,} characters more (the whole text is in transcript.jsonl)"
        assert any(marker in line for line in _screen(view)), _screen(view)


async def test_a_huge_reply_arriving_live_is_held_cut_and_folded(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(120, 40)) as pilot:
        view = await _open(pilot)
        live = scene.engine.emit("chatbot-1", _one_line_reply("2026-08-20T12:00:00"))
        await settle(pilot)
        shown = view.events[-1]
        assert isinstance(shown, AgentReplied) and isinstance(live, AgentReplied)
        assert shown.n == live.n and len(shown.text) == HELD_CHARS
        assert cut_chars(shown) == len(live.text) - HELD_CHARS
        assert any(f"… {REPLY_CHARS - SHOWN:,} characters more" in line for line in _screen(view))


def test_an_expanded_reply_of_short_lines_stops_at_its_line_cap() -> None:
    text = "first\n" + "\n".join(f"line {i}" for i in range(2 * EXPANDED_LINES))
    head, rest = expanded_parts(AgentReplied(text=text, t="2026-08-20T10:00:00"))
    assert rest is not None
    body, marker = rest.plain.rsplit("\n", 1)
    assert len(body.split("\n")) == EXPANDED_LINES and body.endswith(f"line {EXPANDED_LINES - 1}")
    left = len(text) - len("first\n") - len(body)  # the line break after the last line shown included
    assert marker == f"… {left:,} characters more (the whole text is in transcript.jsonl)"


def test_holding_an_event_cuts_only_long_texts_and_keeps_the_count() -> None:
    short = MessageSent(text="short", t="2026-08-20T10:00:00")
    assert held(short) is short and cut_chars(short) == 0
    tool = ToolCalled(
        name="send_message", arguments={"text": "y" * (HELD_CHARS + 5), "n": 3}, result="r" * 30_000
    )
    kept = held(tool)
    assert isinstance(kept, ToolCalled)
    assert kept is not tool and kept.arguments["n"] == 3 and len(tool.result) == 30_000  # the original stays
    assert cut_chars(kept) == 5 + 30_000 - HELD_CHARS
    assert held(kept) is kept  # held twice: the same


@pytest.mark.parametrize("ending", ["\n", "", "\n\n"])
def test_lines_from_end_reads_every_line_once_across_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ending: str
) -> None:
    monkeypatch.setattr(transcript_files, "_CHUNK", 7)
    rng = random.Random(23)
    lines = ["".join(rng.choice("ab\u00e9") for _ in range(rng.randrange(0, 40))) for _ in range(60)]
    path = tmp_path / "lines.txt"
    path.write_text("\n".join(lines) + ending, encoding="utf-8")
    with open(path, "rb") as handle:
        backwards = [line.decode() for line in lines_from_end(handle)]
    assert backwards[::-1] == ("\n".join(lines) + ending).split("\n")
    assert tail_lines(path, 5) == [line.encode() for line in lines if line.strip()][-5:]


class _CountingReader:
    """A binary file that counts the bytes read from it."""

    def __init__(self, path: Path, mode: str) -> None:
        self.handle = open(path, mode)  # noqa: SIM115 - closed by __exit__
        self.read_bytes = 0

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.handle.seek(offset, whence)

    def read(self, size: int = -1) -> bytes:
        data = self.handle.read(size)
        self.read_bytes += len(data)
        return data

    def __enter__(self) -> _CountingReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.handle.close()


def test_the_tail_reader_reads_only_the_lines_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "transcript.jsonl"
    events = [MessageSent(text="m" * 50_000, n=i + 1) for i in range(40)]
    path.write_text("".join(e.model_dump_json() + "\n" for e in events), encoding="utf-8")
    readers: list[_CountingReader] = []

    def counting(file: Path, mode: str) -> _CountingReader:
        readers.append(_CountingReader(file, mode))
        return readers[-1]

    monkeypatch.setattr(transcript_files, "open", counting, raising=False)
    tail = read_tail_events(path, 3)
    assert [e.n for e in tail] == [38, 39, 40]
    assert all(isinstance(e, MessageSent) and len(e.text) == HELD_CHARS for e in tail)
    line = len(events[0].model_dump_json()) + 1
    assert readers[0].read_bytes <= 3 * line + transcript_files._CHUNK  # the last lines, each byte once
