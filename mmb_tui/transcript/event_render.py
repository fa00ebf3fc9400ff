"""How one transcript event looks: a folded form (a few cropped lines) and an expanded form (wrapped).

Pure functions over ``engine.events``: no widgets here, so the transcript view, the benchmark and the tests
share them. Agent and model text is data: every text here is escaped (``engine/sanitize.py``) and put in a
``rich.text.Text`` as it is, never read as markup, so ``[bold]`` in a reply is shown, not applied. Folded heights do not depend on the terminal width, which lets the transcript compute its
virtual height without wrapping thousands of texts.

A reply may be megabytes: a folded line keeps its first ``FOLDED_LINE_CHARS`` characters (it is cropped to
the view's width anyway), a long message folds with "… N characters more", and an expanded event shows at
most ``EXPANDED_CHARS`` characters and ``EXPANDED_LINES`` lines of body, then what is left as a count (the
characters its held texts left out, ``held_events.py``, included).
"""

from __future__ import annotations

import json
from typing import Literal

from rich.cells import cell_len
from rich.text import Text

from engine.event_summary import SHORT, Role, summary_parts
from engine.events import MARKERS, ActionKind, Event
from engine.sanitize import printable
from mmb_tui.transcript.held_events import cut_chars

# Glyphs of one code point each, of a width every terminal agrees on: the engine's markers with a variation
# selector (U+FE0F) or a zero-width joiner (U+200D) are drawn two cells wide by some terminals and counted one
# (or three) by others, tmux among them, which shifts whatever follows them on the line.
_CELL_SAFE: dict[str, str] = {
    "phase_started": "📋",
    "judge_graded": "🔎",
    "persona_compacted": "✂",
    "agent_compacted": "✂",
    "operator": "✋",
    "run_started": "🎬",
    "run_ended": "🏁",
}
TUI_MARKERS: dict[str, str] = {**MARKERS, **_CELL_SAFE}
"""The marker of each event kind as the TUI and the headless printer show it: ``MARKERS`` with the glyphs that
terminals draw at different widths replaced."""


ACTION_MARKERS: dict[ActionKind, str] = {
    "memory write": "📝",
    "memory read": "📖",
    "file write": "💾",
    "file read": "📄",
    "command": "💻",
    "search": "🔍",
    "other": TUI_MARKERS["agent_action"],
}
"""The marker of each of the agent's own actions (``AgentActed.action``): a memory write reads apart from a
read or a command at a glance; one code point each, as ``TUI_MARKERS``."""


def marker(kind: str) -> str:
    """The TUI's marker of an event kind, always two cells wide (a one-cell glyph gets a space)."""
    return _two_cells(TUI_MARKERS.get(kind, "•"))


def event_marker(event: Event) -> str:
    """The marker of ``event`` as the transcript and the headless printer show it: an agent's action by what it
    did (``ACTION_MARKERS``), any other event by its kind; always two cells wide."""
    if event.kind == "agent_action":
        return _two_cells(ACTION_MARKERS.get(event.action, TUI_MARKERS["agent_action"]))
    return marker(event.kind)


def _two_cells(glyph: str) -> str:
    return glyph + " " * (2 - cell_len(glyph))


FilterMode = Literal["all", "messages", "evaluations", "errors", "actions"]
FILTER_MODES: tuple[FilterMode, ...] = ("all", "messages", "evaluations", "errors", "actions")
FILTER_LABELS: dict[FilterMode, str] = {
    "all": "all events",
    "messages": "messages only",
    "evaluations": "evaluations only",
    "actions": "agent actions and messages",
    "errors": "errors only",
}

FOLDED_BODY_LINES = 2  # messages and thinking show their first lines folded
FOLDED_LINE_CHARS = 500  # characters of a folded line kept: wider than any view, cropped to its width
LONG_CHARS = 2_000  # a message that hides more characters than this folds with "… N characters more"
EXPANDED_CHARS = 20_000  # characters an expanded event shows at most (headline and body)
EXPANDED_LINES = 400  # lines of body an expanded event shows at most
_MESSAGES = ("persona_thinking", "message_sent", "agent_replied")
_INDENT = "        "

_STYLES: dict[str, str] = {
    "phase_started": "bold",
    "persona_thinking": "italic dim",
    "tool_called": "",
    "message_sent": "",
    "agent_replied": "",
    "error": "bold red",
    "hook_fired": "yellow",
    "model_retry": "yellow",
    "operator": "bold magenta",
    "status": "dim",
    "run_started": "dim",
    "run_ended": "bold",
    "clock_jumped": "cyan",
    "session_switched": "cyan",
    "persona_compacted": "cyan",
    "agent_compacted": "cyan",
    "agent_action": "blue",
}


def passes(event: Event, mode: FilterMode) -> bool:
    """Whether ``event`` is shown under the filter ``mode``."""
    if mode == "all":
        return True
    if mode == "messages":
        return event.kind in ("message_sent", "agent_replied")
    if mode == "evaluations":
        return event.kind in ("evaluation_logged", "judge_graded")  # the persona's grade and the judge's
    if mode == "actions":  # what the agent did with its own tools, and the messages between which it did it
        return event.kind in ("agent_action", "message_sent", "agent_replied")
    return event.kind in ("error", "model_retry") or (event.kind == "tool_called" and event.error)


def score_style(score: float) -> str:
    if score >= 9.95:
        return "bold green"
    if score >= 5:
        return "bold yellow"
    return "bold red"


def _time_of(event: Event) -> str:
    # "2026-08-19T10:03:05" -> "10:03"
    return event.t[11:16] if len(event.t) >= 16 else "     "


def _part_style(event: Event, text: str, role: Role) -> str:
    match role:
        case "name":
            return "bold"
        case "args":
            return "dim"
        case "error":
            return "red" if event.kind == "tool_called" and text != event.name else "bold red"
        case "score":
            if event.kind == "judge_graded":
                return score_style(event.score) if event.score is not None else "bold red"
            return score_style(event.effective) if event.kind == "evaluation_logged" else ""
    if event.kind in ("tool_called", "evaluation_logged", "judge_graded", "clock_jumped", "run_started"):
        return ""
    return _STYLES.get(event.kind, "")


def headline(event: Event) -> Text:
    """The first line of an event: time, marker, the engine's one-line summary (cropped by the view)."""
    line = Text(no_wrap=True, overflow="ellipsis", end="")
    line.append(_time_of(event), style="dim")
    line.append(f" {event_marker(event)} ")
    for text, role in summary_parts(event):
        line.append(text, style=_part_style(event, text, role))
    return line


def body(event: Event) -> str:
    """The full text behind the headline ("" when the headline says everything), its control characters and
    escape sequences shown escaped (lines and tabs kept)."""
    return printable(_raw_body(event))


def _raw_body(event: Event) -> str:
    if event.kind == "phase_started":
        return event.text
    if event.kind in ("persona_thinking", "message_sent", "agent_replied"):
        lines = event.text.strip().splitlines()
        return "\n".join(lines[1:])
    if event.kind == "tool_called":
        args = json.dumps(event.arguments, ensure_ascii=False, indent=1)
        return f"arguments: {args}\nresult: {event.result}"
    if event.kind == "evaluation_logged":
        return (
            f"question: {event.question}\nexpected: {event.expected}\ngot: {event.answer}\n"
            f"comment: {event.comment}\nscore {event.score:g}, attempt {event.attempt}, "
            f"counts {event.effective:g}" + (f"\ntypes: {', '.join(event.types)}" if event.types else "")
        )
    if event.kind == "judge_graded":  # the whole comment (or why there is no grade) when the headline cuts it
        said = event.error or event.comment
        return f"{said}\nof the persona's grade #{event.evaluation_n}" if len(said) > SHORT else ""
    if event.kind == "error":
        return event.message if len(event.message) > SHORT else ""
    if event.kind in ("hook_fired", "operator"):
        return event.detail if len(event.detail) > SHORT else ""
    if event.kind == "model_retry":
        return event.reason if len(event.reason) > SHORT else ""
    return ""


def folded_lines(event: Event) -> list[Text]:
    """The folded form: the headline plus, for messages, their next lines (each cropped, never wrapped) and,
    for a long one, a line saying how many characters it hides."""
    head = headline(event)
    hidden = cut_chars(event) + _keep_first(head, FOLDED_LINE_CHARS)
    lines = [head]
    rest = body(event)
    if not rest and not hidden:
        return lines
    if event.kind in _MESSAGES:
        extra = [ln for ln in rest.splitlines() if ln.strip()]
        for source in extra[:FOLDED_BODY_LINES]:
            line = Text(_INDENT + source, no_wrap=True, overflow="ellipsis", end="")
            hidden += _keep_first(line, FOLDED_LINE_CHARS)
            lines.append(line)
        hidden += sum(len(ln) for ln in extra[FOLDED_BODY_LINES:])
        if hidden > LONG_CHARS:
            lines.append(Text(f"{_INDENT}… {hidden:,} characters more", style="dim", no_wrap=True, end=""))
            return lines
        if len(extra) > FOLDED_BODY_LINES:
            lines[-1].append(f"  ▸ +{len(extra) - FOLDED_BODY_LINES} lines", style="dim")
            return lines
    lines[0].append("  ▸", style="dim")
    return lines


def expanded_parts(event: Event) -> tuple[Text, Text | None]:
    """The expanded form: a wrapping headline and the body (indented by the view), if any; together at most
    ``EXPANDED_CHARS`` characters and ``EXPANDED_LINES`` lines of body, then a line saying how many are left."""
    head = headline(event)
    head.no_wrap = False
    head.overflow = "fold"
    head.end = "\n"
    left = cut_chars(event) + _keep_first(head, EXPANDED_CHARS)
    shown, more = _capped(body(event), EXPANDED_CHARS - len(head), EXPANDED_LINES)
    left += more
    rest = Text(shown, style="italic" if event.kind == "persona_thinking" else "") if shown else None
    if not left:
        return head, rest
    marker = Text(f"… {left:,} characters more (the whole text is in transcript.jsonl)", style="dim")
    return head, marker if rest is None else Text("\n").join([rest, marker])


def _keep_first(text: Text, limit: int) -> int:
    """Cut ``text`` to its first ``limit`` characters, the last one an ellipsis; returns how many went."""
    if len(text) <= limit:
        return 0
    cut = len(text) - limit + 1
    text.right_crop(cut)
    text.append("…")
    return cut


def _capped(text: str, chars: int, lines: int) -> tuple[str, int]:
    """The start of ``text`` within ``chars`` characters and ``lines`` lines, and how many characters are left."""
    end = min(len(text), max(0, chars))
    newline = -1
    for _ in range(lines):
        newline = text.find("\n", newline + 1, end)
        if newline < 0:
            break
    else:
        end = newline
    return text[:end], len(text) - end
