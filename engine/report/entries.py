"""Reading ``results/report.md`` (SPEC §9) back, fast: for ``mmb-tui report`` and the report browser.

Fast for thousands of entries (issue 12): the report is cut into entries on its bytes, and an entry exactly
as ``engine/report/writer.py`` writes it is taken as it is (``reprint`` copies it; the rest is parsed line by line
by ``engine/report/parse.py``); ``index_report`` reads entries up to their headers and parses each on first
use (``LazyEntry``). ``load_report`` gives them in the browser's order (``engine/report/filter.py``).

The names callers read a report with are importable from here: ``ReportEntry`` and its parts,
``parse_report_entries``, ``newest_first``, ``latest_per_run``, ``EntryFilter`` and ``FILTER_HELP``.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from functools import cached_property
from pathlib import Path

from engine.report.filter import FILTER_HELP, EntryFilter, latest_per_run, newest_first, run_key
from engine.report.parse import (
    HEADER,
    MARK,
    REGRADE,
    ImperfectAnswer,
    PersonaFault,
    ReportEntry,
    clean_line,
    parse_fault,
    parse_imperfect,
    parse_lines,
    parse_report_entries,
    read_figures,
)

__all__ = [
    "FILTER_HELP",
    "MARK",
    "EntryFilter",
    "ImperfectAnswer",
    "LazyEntry",
    "PersonaFault",
    "ReportEntry",
    "index_report",
    "latest_per_run",
    "load_report",
    "newest_first",
    "parse_fault",
    "parse_imperfect",
    "parse_report_entries",
    "reprint",
]

_HEADER_MAX = 2000  # bytes of a line read to see whether it starts an entry


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Reading makes many small objects and no reference cycles: the cyclic collector would only walk the
    whole heap (an app's worth of objects) over and over; a third of the time for a thousand entries."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class LazyEntry:
    """An entry of report.md known by its header, the rest parsed on first use (``entry``): the browser orders
    a thousand entries by their headers and parses only those it shows."""

    def __init__(self, head: ReportEntry, chunk: bytes = b"", header: re.Match[str] | None = None) -> None:
        self.head = head  # its header's fields and its position (its lines and figures too without a chunk)
        self._chunk, self._header = chunk, header
        if not chunk:
            self.__dict__["entry"] = head

    @property
    def position(self) -> int:
        return self.head.position

    @property
    def run_id(self) -> str:
        return self.head.run_id

    @property
    def regrade(self) -> str:
        return self.head.regrade

    @property
    def title(self) -> str:
        return self.head.title

    @property
    def finished_at(self) -> datetime | None:
        return self.head.finished_at

    @cached_property
    def entry(self) -> ReportEntry:
        text = _as_written(self._chunk, self._header)
        if text is None:  # something to escape, trim or join: line by line (its first line is its header)
            lines = self._chunk.decode("utf-8", errors="replace").split("\n")
            self.head.lines = parse_lines(lines, figures=False)[0].lines
        else:  # each line but the header is "📊 " and what to keep
            self.head.lines = [line[2:] for line in text.split("\n")[1:]]
        read_figures(self.head)
        self._chunk, self._header = b"", None
        return self.head


def index_report(path: Path) -> list[LazyEntry]:
    """The entries of the report at ``path`` in file order, each read up to its header ([] if unreadable)."""
    try:
        data = path.read_bytes()
    except OSError:
        return []
    entries: list[LazyEntry] = []
    with _collector_paused():
        for chunk, header in _chunks(data):
            if header is not None and chunk.startswith(b"## ") and b"##" not in chunk[2:]:  # one entry alone
                head = ReportEntry(header["date"], header["run"].strip(), header["bench"], header["agent"])
                head.position = len(entries)
                entries.append(LazyEntry(head, chunk, header))
                continue
            for entry in parse_lines(chunk.decode("utf-8", errors="replace").split("\n")):
                entry.position = len(entries)
                entries.append(LazyEntry(entry))
    return entries


def _read(path: Path) -> list[ReportEntry]:
    """The entries of the report at ``path`` in file order ([] if it cannot be read)."""
    with _collector_paused():
        return [lazy.entry for lazy in index_report(path)]


def reprint(path: Path, run_id: str | None = None, *, latest: bool = False) -> bytes:
    """What ``mmb-tui report`` prints (UTF-8): the entries of the report at ``path`` in file order, optionally
    of one run, only the latest of each run with ``latest`` (``latest_per_run``), each as
    ``ReportEntry.text()`` gives it, a blank line between them."""
    try:
        data = path.read_bytes()
    except OSError:
        return b""
    texts: dict[tuple[str, str] | int, bytes] = {}  # by the run an entry is the latest of (else its place)
    for chunk, header in _chunks(data):
        if _as_written(chunk, header) is None:
            lines = chunk.decode("utf-8", errors="replace").split("\n")
            found = [(e.run_id, e.regrade, e.text().encode()) for e in parse_lines(lines, figures=False)]
        elif header is not None:
            found = [(header["run"].strip(), header["agent"].partition(REGRADE)[2], chunk + b"\n")]
        else:
            continue
        for run, regrade, text in found:
            if run_id in (None, run):
                key = run_key(run, regrade) if latest else len(texts)
                texts.pop(key, None)  # the latest takes the place of the one it replaces
                texts[key] = text
    return b"\n".join(texts.values())


# Thousands of entries are read fast (issue 12): the report is cut into entries on the bytes, and an entry
# exactly as engine/report/writer.py writes it (a header, then one 📊 line each, clean UTF-8 with nothing to escape
# or trim) is taken as it is; any other is parsed line by line, which gives the same for the first kind.
# Such an entry holds none of: C0 controls but the line break, DEL, the lead bytes of rare spaces and the BOM
# (U+1680, U+3000, U+FEFF: any U+1xxx, U+3xxx or U+Fxxx character sends an entry to the parser, to be safe);
# C1 controls and the no-break space; Unicode spaces, bidi marks and line separators; a line that is not one
# 📊 line (wrapped, blank, or with space after the mark), a space at the end of a line.
_SUSPECT_BYTES = bytes([*range(0x0A), *range(0x0B, 0x20), 0x7F, 0xE1, 0xE3, 0xEF])
_C1_OR_NBSP = re.compile(rb"\xc2[\x80-\xa0]")
_UNICODE_SPECIAL = re.compile(rb"\xe2(?:\x80[\x80-\x8a\xa8-\xaf]|\x81[\x9f\xa6-\xa9])")
_BAD_LINE_BREAK = re.compile(
    b"\n(?:(?<= \n)|(?!" + MARK.encode() + b" [^ \n]))"
)  # after a space, or not to a 📊 line


def _chunks(data: bytes) -> Iterator[tuple[bytes, re.Match[str] | None]]:
    """``data`` cut before each entry header that starts a line, each piece without its trailing line breaks
    and with its header (the first piece, what comes before the first header, may have none)."""
    first, header = 0, _header_of(data)
    at = data.find(b"\n## ")
    while at >= 0:
        following = _header_of(data[at + 1 : at + 1 + _HEADER_MAX])
        if following is not None:  # "## Notes" starts no entry
            yield data[first:at].rstrip(b"\n"), header
            first, header = at + 1, following
        at = data.find(b"\n## ", at + 1)
    yield data[first:].rstrip(b"\n"), header


def _header_of(data: bytes) -> re.Match[str] | None:
    """The entry header on the first line of ``data``, if it is one."""
    end = data.find(b"\n")
    return HEADER.match(clean_line(data[: end if end >= 0 else len(data)].decode("utf-8", errors="replace")))


def _as_written(chunk: bytes, header: re.Match[str] | None) -> str | None:
    """The text of ``chunk`` (with this ``header``) if it is one entry exactly as ``ReportEntry.text()`` gives
    it, else None."""
    if header is None:
        return None
    head, _, body = chunk.partition(b"\n")
    title = f"## {header['date']} — {header['run'].strip()}: {header['bench']} @ {header['agent']}"
    if (
        title.encode() != head
        or _BAD_LINE_BREAK.search(b"\n" + body) is not None
        or body.endswith(b" ")
        or len(chunk.translate(None, _SUSPECT_BYTES)) != len(chunk)
        or _C1_OR_NBSP.search(chunk) is not None
        or _UNICODE_SPECIAL.search(chunk) is not None
    ):
        return None
    try:
        return chunk.decode()
    except UnicodeDecodeError:
        return None


def load_report(path: Path) -> list[ReportEntry]:
    """The entries of ``report.md``, newest first by real finish time (an absent file has none)."""
    return newest_first(_read(path))
