"""Why a Ray actor died, in one clean line: Ray's text of an actor's death carries terminal colour codes and,
when the actor could not start (a dependency missing on the node: Ray's ``TemporaryActor``), a whole traceback
whose last line is the worker's real error (``ModuleNotFoundError: No module named 'json5'``). A line shown in a
front end's one line is cut at a word, never inside one (``clip``)."""

from __future__ import annotations

import re

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-_]")
_EXCEPTION_LINE = re.compile(r"[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)(: .*)?")
_IMPORT_FAILED = "failed to import on the worker"
_NOT_STARTED = (_IMPORT_FAILED, "error raised in its creation task")
# Ray's why, after its boilerplate: up to the sentence's end (a full stop before a space or the line's end)
_DEAD_BECAUSE = re.compile(r"The actor is dead because .*?(?:\.(?=\s|$)|$)", re.MULTILINE)


def strip_ansi(text: str) -> str:
    """``text`` without terminal escape sequences (colours, cursor moves)."""
    return _ANSI.sub("", text)


def crash_cause(text: str) -> str:
    """One line that says why: the last exception line of a traceback in ``text`` (the worker's own error),
    else its first line; colour codes stripped. An actor class that failed to import says so."""
    clean = strip_ansi(text).strip()
    lines = [line.strip() for line in clean.splitlines() if line.strip()]
    if not lines:
        return ""
    if "Traceback" in clean or 'File "' in clean or _IMPORT_FAILED in clean:
        for line in reversed(lines):
            if _EXCEPTION_LINE.fullmatch(line):
                if _IMPORT_FAILED in clean:
                    return f"{line} (missing in the node's Python environment)"
                return line
    because = _DEAD_BECAUSE.search(clean)
    return because[0] if because else lines[0]


def clip(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters: cut after a whole word, with ``…``."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    head = flat[: max(limit - 1, 0)]
    if " " in head and not flat[len(head)].isspace():
        head = head[: head.rindex(" ")]
    return head.rstrip(" ,;:") + "…"


def never_started(text: str) -> bool:
    """Whether Ray's text says the actor died making itself (it never played)."""
    return any(marker in text for marker in _NOT_STARTED)
