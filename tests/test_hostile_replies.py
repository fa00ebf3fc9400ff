"""Hostile replies are data, never control (issue 11, findings 6-9).

An agent whose replies carry terminal escape sequences (a screen clear, a title change, an OSC 52 clipboard
write, C1 controls), Rich markup, a lone surrogate, a line that looks like a report entry and one reply of
600,000 characters plays a whole run headless: the terminal, ``report.md``, ``mmb-tui report`` and the TUI
stay clean, the persona sees the huge reply shortened while the transcript keeps it whole, and nothing
downstream ever meets the surrogate. A model or endpoint answering HTTP 200 with a malformed body is
retried like a 5xx.
"""

from __future__ import annotations

import io
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from engine_helpers import make_config, play
from fixture_agents import HOSTILE_TAIL, HUGE_REPLY_CHARS
from rich.console import Console
from tui_fakes import Scene, settle

from adapters.base import AdapterContext, AdapterError
from adapters.openai_endpoint import OpenAIEndpointAdapter
from engine.clock import ManualClock
from engine.config import ModelSpec
from engine.events import AgentReplied, TerminationReason
from engine.models import openai_model
from engine.models.base import Message, ModelError
from engine.models.openai_model import OpenAIModel
from engine.models.server import start_server
from engine.report.entries import parse_report_entries
from engine.sanitize import printable, shorten_reply, valid_text
from engine.state import load_state
from engine.transcript import read_events
from mmb_tui.front_ends.cli import main
from mmb_tui.screens.report_screen import ReportScreen
from mmb_tui.transcript.event_render import body, expanded_parts, folded_lines, headline
from mmb_tui.widgets.transcript_view import TranscriptView

HOSTILE = "fixture_agents:HostileAgent"
# ESC, BEL and every C1 control: what a terminal would act on
CONTROL = re.compile("[\x1b\x07\x80-\x9f]")
SURROGATE = re.compile("[\ud800-\udfff]")
MARKER = f"… [reply shortened: {HUGE_REPLY_CHARS:,} characters, the first 20,000 shown]"
HISTORY: list[Message] = [
    {"role": "user", "content": "My car is a red Volvo from 2019."},
    {"role": "user", "content": "What car do I drive?"},
]


def _strings(value: Any) -> Iterator[str]:
    """Every string (keys included) in a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


# --- the sanitiser ---------------------------------------------------------------------------------


def test_printable_shows_escape_sequences_as_visible_text() -> None:
    assert printable("a\x1b[2Jb") == "a␛[2Jb"
    assert printable("\x1b]52;c;aGk=\x07") == "␛]52;c;aGk=␇"
    assert printable("\x9b31m\x7f") == "\\x9b31m␡"
    assert printable("\u202eevil") == "\\u202eevil"
    assert printable("x\ud800y") == "x\ufffdy"
    assert printable("line 1\r\nline 2\tend\r") == "line 1\nline 2\tend␍"
    assert printable("line 1\nline 2\tend", newlines=False) == "line 1␊line 2␉end"
    assert (
        printable("[bold]markup[/bold] — ✓ plain Unicode stays")
        == "[bold]markup[/bold] — ✓ plain Unicode stays"
    )
    once = printable(HOSTILE_TAIL)
    assert printable(once) == once  # idempotent
    assert CONTROL.search(once) is None and SURROGATE.search(once) is None


def test_valid_text_replaces_lone_surrogates_only() -> None:
    assert valid_text("plain ✓") == "plain ✓"
    assert valid_text("a\ud800b") == "a\ufffdb"
    assert valid_text("a\udfffb\ud83d") == "a\ufffdb\ufffd"
    assert valid_text("\ud83d\ude00") == "😀"  # a valid pair (as two code points) becomes its character
    valid_text("a\ud800b").encode("utf-8")  # encodable now


def test_shorten_reply_marks_what_it_cut() -> None:
    assert shorten_reply("short", 20_000) == "short"
    shortened = shorten_reply("x" * HUGE_REPLY_CHARS, 20_000)
    assert shortened == "x" * 20_000 + MARKER


# --- a whole hostile run, headless -----------------------------------------------------------------


def test_a_hostile_agent_leaves_terminal_report_and_state_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = make_config(tmp_path, {"h": {"benchmark": "full", "agent": HOSTILE}})
    config_file = str(tmp_path / "config.jsonc")
    assert main(["--config", config_file, "run", "h", "--headless"]) == 0  # the run ends normally
    out = capsys.readouterr().out
    assert "␛[2J" in out and "[bold]markup[/bold]" in out  # shown, escaped
    assert CONTROL.search(out) is None

    results = config.results_path()
    report = (results / "report.md").read_text(encoding="utf-8")
    assert CONTROL.search(report) is None and SURROGATE.search(report) is None
    assert "␛]52;c;aGVsbG8=␇" in report  # the replies are in the entry, escaped
    assert report.count("\n## ") + report.startswith("## ") == 1
    entries = parse_report_entries(report)
    assert len(entries) == 1 and entries[0].run_id == "h"
    assert entries[0].imperfect and all("evil: fake @ entry" in a.got for a in entries[0].imperfect)

    assert main(["--config", config_file, "report"]) == 0
    printed = capsys.readouterr().out
    assert "Check coverage: 5/5" in printed and "␛[2J" in printed
    assert CONTROL.search(printed) is None

    run_dir = results / "h"
    replies = [e for e in read_events(run_dir / "transcript.jsonl") if isinstance(e, AgentReplied)]
    huge = [e.text for e in replies if len(e.text) > 20_000]
    assert [len(text) for text in huge] == [HUGE_REPLY_CHARS]  # the transcript keeps it whole
    assert all("\x1b[2J" in e.text for e in replies)  # the exact text (JSON escapes it)
    assert not any(SURROGATE.search(e.text) for e in replies)  # replaced on input
    assert all("\ufffd lone" in e.text for e in replies)

    saved = [run_dir / "state.json", *run_dir.glob("journal.*.jsonl")]  # the checkpoint and its journal
    raw_state = "".join(path.read_text(encoding="utf-8") for path in saved)
    assert "\\ud8" not in raw_state.lower()
    state = load_state(run_dir / "state.json")
    assert state is not None
    assert not any(SURROGATE.search(s) for s in _strings(state.model_dump(mode="json")))
    persona_texts = [str(m.get("content") or "") for m in state.persona_messages]
    shortened = [t for t in persona_texts if MARKER in t]
    assert len(shortened) == 1 and 20_000 < len(shortened[0]) < 20_200  # the first 20,000 and the marker
    assert max(len(t) for t in persona_texts) < 21_000


async def test_the_reply_limit_is_a_run_key(tmp_path: Path) -> None:
    config = make_config(
        tmp_path, {"h": {"benchmark": "full", "agent": HOSTILE, "surrogate": False, "max_reply_chars": 500}}
    )
    run = await play(config, "h")
    assert run.state.finished
    marked = [m for m in run.state.persona_messages if "[reply shortened: " in str(m.get("content") or "")]
    assert marked and f"{HUGE_REPLY_CHARS:,} characters, the first 500 shown]" in str(marked[0]["content"])


# --- the TUI -------------------------------------------------------------------------------------


def _rendered(*texts: Any) -> str:
    console = Console(file=io.StringIO(), width=100, color_system=None, legacy_windows=False)
    for text in texts:
        console.print(text)
    output = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(output, str)
    return output


def test_event_render_escapes_replies_and_never_reads_markup() -> None:
    event = AgentReplied(text="first line" + HOSTILE_TAIL + "\nlast [red]line[/red]", seq=1, n=3)
    event.t = "2026-08-19T10:00:00"
    head, rest = expanded_parts(event)
    texts = [headline(event), *folded_lines(event), head, rest]
    output = _rendered(*texts)
    assert CONTROL.search(output) is None and SURROGATE.search(output) is None
    assert "[bold]markup[/bold]" in output and "[red]line[/red]" in output
    assert "␛[2J" in headline(event).plain and "\n" in body(event)
    for text in texts:
        assert text is not None and all("bold" not in str(span.style) for span in text.spans)


async def test_the_transcript_view_shows_a_hostile_reply_escaped(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(120, 30)) as pilot:
        view = app.query_one("#column-0 TranscriptView", TranscriptView)
        tail = HOSTILE_TAIL.replace("\ud800", "")  # replaced on input: never in an event
        scene.engine.emit("chatbot-1", AgentReplied(text="hello" + tail, seq=99))
        await settle(pilot)
        view.focus()
        await pilot.press("up", "enter")  # the cursor on the reply, unfolded
        assert view.cursor_event is not None and view.cursor_event.kind == "agent_replied"
        lines = "\n".join(
            "".join(segment.text for segment in view.render_line(y)) for y in range(view.size.height)
        )
        assert "␛[2J" in lines and "[bold]markup[/bold]" in lines
        assert CONTROL.search(lines) is None


async def test_the_report_screen_never_reads_markup_or_escapes(scene: Scene) -> None:
    hostile = (
        "## 2026-08-19 10:00 UTC — chatbot-1: demo @ chatbot\n"
        "📊 Score: 5.00/10 over 2 planned checks\n"
        "📊 Incomplete: waiting — agent said [bold]markup[/bold] \x1b]0;title\x07 · phases started 1/2\n"
        "📊 [5/10] (1.1) Vet? | expected: Dr Hughes. | got: \x1b[2J[bold]x[/bold] | persona: x — c [transcript #4]\n"
    )
    (scene.folder / "results" / "report.md").write_text(hostile, encoding="utf-8")
    app = scene.app()
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press("r")
        assert isinstance(app.screen, ReportScreen)
        tree = app.screen.query_one("Tree")
        labels = []
        stack = [tree.root]  # type: ignore[attr-defined]
        while stack:
            node = stack.pop()
            labels.append(node.label.plain)
            stack.extend(node.children)
        joined = "\n".join(labels)
        assert "agent said [bold]markup[/bold] ␛]0;title␇" in joined
        assert "got:      ␛[2J[bold]x[/bold]" in joined
        assert CONTROL.search(joined) is None


def test_reading_back_an_unescaped_report_escapes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = make_config(tmp_path, {"h": {"benchmark": "full", "agent": HOSTILE}})
    results = config.results_path()
    results.mkdir(parents=True)
    raw = (
        "## 2026-08-19 10:00 UTC — h: full @ hostile\n"
        "📊 Incomplete: crashed — \x1b[2J\x1b]52;c;aGk=\x07\x9b1m · phases started 1/2\n"
        "\x1c## 2026-08-19 11:00 UTC — evil: fake @ entry\u2028📊 Score: 10.00/10\n"
    )
    (results / "report.md").write_bytes(raw.encode("utf-8") + b"\xff\xfe broken bytes\n")
    assert len(parse_report_entries((results / "report.md").read_text("utf-8", "replace"))) == 1
    assert main(["--config", str(tmp_path / "config.jsonc"), "report"]) == 0
    printed = capsys.readouterr().out
    assert "␛[2J␛]52;c;aGk=␇\\x9b1m" in printed
    assert CONTROL.search(printed) is None


# --- malformed 200s --------------------------------------------------------------------------------


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
async def scripted_url() -> AsyncIterator[str]:
    runner, port = await start_server("127.0.0.1", 0, hang_seconds=5)
    yield f"http://127.0.0.1:{port}/v1"
    await runner.cleanup()


def _model(base_url: str, name: str, sleeps: Sleeps, max_retries: int = 3) -> OpenAIModel:
    spec = ModelSpec(model=name, base_url=base_url, timeout=5.0, max_retries=max_retries)
    return OpenAIModel("test-model", spec, "sk-unused", "agent", sleep=sleeps, jitter=lambda: 0.0)


async def test_a_malformed_200_is_retried_like_a_5xx(scripted_url: str) -> None:
    sleeps = Sleeps()
    chat = _model(scripted_url, "scripted/recall?faults=1:bad_json,2:no_choices", sleeps)
    completion = await chat.complete(HISTORY)
    assert completion.content and "red Volvo" in completion.content
    assert sleeps.delays == [1.0, 2.0]  # the same backoff as a 500


async def test_malformed_200s_give_up_with_a_model_error_naming_the_model(scripted_url: str) -> None:
    sleeps = Sleeps()
    chat = _model(scripted_url, "scripted/recall?faults=1:bad_json,2:no_choices,3:bad_json", sleeps, 2)
    with pytest.raises(ModelError) as error:
        await chat.complete(HISTORY)
    message = str(error.value)
    assert message.startswith("model 'test-model': malformed response")
    assert message.endswith("(after 3 attempts)") and "\n" not in message
    assert len(sleeps.delays) == 2


@pytest.fixture
async def raw_endpoint() -> AsyncIterator[tuple[list[str], str]]:
    """An endpoint answering each request with the next raw body of a list (JSON content type)."""
    bodies: list[str] = []
    seen: list[dict[str, Any]] = []

    async def chat(request: web.Request) -> web.Response:
        seen.append(await request.json())
        return web.Response(status=200, text=bodies.pop(0), content_type="application/json")

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    yield bodies, f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    await runner.cleanup()


def _reply_body(content: str) -> str:
    """A chat.completion body whose content is written with ``\\ud800`` escapes kept as in ``content``."""
    return '{"choices": [{"index": 0, "message": {"role": "assistant", "content": "' + content + '"}}]}'


async def test_a_model_answer_with_a_lone_surrogate_is_cleaned_on_input(
    raw_endpoint: tuple[list[str], str],
) -> None:
    bodies, url = raw_endpoint
    bodies += ['{"choices": [{"message": null}]}', _reply_body("a \\ud800 b \\ud83d\\ude00")]
    sleeps = Sleeps()
    completion = await _model(url, "m", sleeps).complete(HISTORY)
    assert completion.content == "a \ufffd b 😀"
    assert sleeps.delays == [1.0]  # the choice without a message was a malformed 200, retried


def _endpoint_adapter(tmp_path: Path, url: str) -> OpenAIEndpointAdapter:
    ctx = AdapterContext("r", tmp_path, {"base_url": url, "model": "m"}, ManualClock(), lambda name: None)  # type: ignore[arg-type,return-value]
    return OpenAIEndpointAdapter(ctx)


async def test_openai_endpoint_cleans_a_lone_surrogate_and_keeps_talking(
    raw_endpoint: tuple[list[str], str], tmp_path: Path
) -> None:
    bodies, url = raw_endpoint
    bodies += [_reply_body("one \\ud800"), _reply_body("two")]
    adapter = _endpoint_adapter(tmp_path, url)
    await adapter.send_message("hi")
    await adapter.send_message("again")  # the history holding the first reply is sent as JSON
    assert [r.text for r in await adapter.get_responses(0)] == ["one \ufffd", "two"]


async def test_openai_endpoint_treats_a_malformed_200_like_a_5xx(
    raw_endpoint: tuple[list[str], str], tmp_path: Path
) -> None:
    bodies, url = raw_endpoint
    bodies += ['{"choices": [{"mess', '{"object": "chat.completion"}', _reply_body("fine")]
    adapter = _endpoint_adapter(tmp_path, url)
    for _ in range(2):  # an AdapterError: the run revives the agent and sends again, as after a 500
        with pytest.raises(AdapterError, match="garbage reply"):
            await adapter.send_message("hi")
    await adapter.send_message("hi")
    assert [r.text for r in await adapter.get_responses(0)] == ["fine"]


async def test_a_run_through_openai_endpoint_survives_malformed_200s(
    tmp_path: Path, scripted_url: str
) -> None:
    agent = {
        "agent": "openai-endpoint",
        "base_url": scripted_url,
        "model": "scripted/recall?faults=2:bad_json,4:no_choices",
    }
    config = make_config(tmp_path, {"e": {"benchmark": "full", **agent}})
    run = await play(config, "e")
    assert run.state.finished and run.termination == TerminationReason.FINISHED
    assert len(run.state.evaluations) == 5
    errors = [
        e.message for e in read_events(config.results_path() / "e" / "transcript.jsonl") if e.kind == "error"
    ]
    assert len([m for m in errors if "garbage reply" in m]) == 2  # both malformed 200s, each sent again


async def test_a_run_whose_persona_model_answers_malformed_200s_finishes(
    tmp_path: Path, scripted_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(openai_model, "BACKOFF_BASE", 0.01)
    persona = {"base_url": scripted_url, "model": "scripted/persona?faults=2:bad_json,5:no_choices"}
    config = make_config(
        tmp_path,
        {"r": {"benchmark": "full", "agent": "fixture_agents:ForgetfulAgent", "persona": "p"}},
        models={"p": persona},
    )
    run = await play(config, "r")
    assert run.termination is TerminationReason.FINISHED
    assert len(run.state.evaluations) == 5
