"""Why a Ray actor died, in one clean line: Ray's text of an actor's death carries terminal colour codes and,
when the actor could not start (a dependency missing on the node: Ray's ``TemporaryActor``), a whole traceback
whose last line is the worker's real error (``ModuleNotFoundError: No module named 'json5'``)."""

from __future__ import annotations

import re

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-_]")
_EXCEPTION_LINE = re.compile(r"[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)(: .*)?")
_IMPORT_FAILED = "failed to import on the worker"
_NOT_STARTED = (_IMPORT_FAILED, "error raised in its creation task")


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
    return lines[0]


def never_started(text: str) -> bool:
    """Whether Ray's text says the actor died making itself (it never played)."""
    return any(marker in text for marker in _NOT_STARTED)
