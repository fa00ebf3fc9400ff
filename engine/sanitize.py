"""Hostile text is data, never control: agent and model text cleaned on input and escaped for display.

Three jobs, each at its own place:

- ``valid_text`` — on input (agent replies, model answers): lone surrogates (``"\\ud800"``, the only code points
  UTF-8 cannot encode) become U+FFFD, so JSON, files and HTTP bodies downstream never fail on them.
- ``shorten_reply`` — the persona's copy of an agent reply, cut to a limit with a visible marker (the transcript
  keeps the reply whole).
- ``printable`` — for every terminal and Markdown sink (the headless printer, the TUI, ``report.md``,
  ``mmb-tui report``): control characters and escape sequences shown as visible text (``"\\x1b[2J"`` →
  ``"␛[2J"``), never executed by a terminal. The transcript (JSONL) keeps the exact text.
"""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")

# C0 controls, DEL, C1 controls, and the bidirectional overrides and isolates (text that displays reordered)
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]")
_UNSAFE_BUT_LINES = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]"
)

DEFAULT_REPLY_LIMIT = 20_000  # characters of one agent reply the persona sees


def valid_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (a valid surrogate pair becomes its character)."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)  # Control Pictures: ␛ ␇ ␍ ␊ …
    if code == 0x7F:
        return "␡"
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str, newlines: bool = True) -> str:
    """``text`` safe to show in a terminal or on a Markdown line: every control character and escape
    sequence shown as visible text (ESC as ``␛``, BEL as ``␇``, C1 ``\\x9b`` as the four characters
    ``\\x9b``, bidirectional overrides as ``\\u202e``, lone surrogates as U+FFFD).

    ``newlines``: keep ``\\n`` and ``\\t`` (``\\r\\n`` becomes ``\\n``); otherwise they are shown too (``␊``, ``␉``).
    Idempotent: what it returns has nothing left to escape.
    """
    if newlines:
        text = text.replace("\r\n", "\n")
        return _UNSAFE_BUT_LINES.sub(_visible, text)
    return _UNSAFE.sub(_visible, text)


def shorten_reply(text: str, limit: int = DEFAULT_REPLY_LIMIT) -> str:
    """``text`` if it has at most ``limit`` characters, else its first ``limit`` characters and a marker
    saying how long it was (``… [reply shortened: 600,000 characters, the first 20,000 shown]``)."""
    if limit <= 0 or len(text) <= limit:
        return text
    return f"{text[:limit]}… [reply shortened: {len(text):,} characters, the first {limit:,} shown]"
