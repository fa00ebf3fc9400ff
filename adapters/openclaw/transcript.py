"""OpenClaw's SQLite transcript, read for compactions (a successful one is logged at debug level only).

Transcripts live in ``$OPENCLAW_STATE_DIR/agents/main/agent/openclaw-agent.sqlite``, table
``transcript_events``. It has no type column: a compaction is marked inside ``event_json`` (``"type":
"compaction"`` with ``tokensBefore``/``tokensAfter``), and large events are stored zstd-compressed in
``event_zstd``; the ``navigation_json`` record of a compaction still carries ``tokensBefore``.

The database lies in the agent's folder, which the agent may fill with links and FIFOs: SQLite would follow a
link (and create its ``-shm`` beside what it names), so ``TranscriptReader`` reads a copy, taken without
following a link (``AgentFolder.copy_out``) into a private temporary folder, whenever the database or its
write-ahead log changed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from adapters.local.files.safe_files import AgentFolder
from adapters.local.install import node_bin_dir

log = logging.getLogger(__name__)

TRANSCRIPT_DB = Path("state") / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
DB_LIMIT = 512 * 1024 * 1024  # a database (or log) longer than this is not copied to be read (logged)
Signature = tuple[tuple[int, int, int] | None, ...]
# large transcript events are stored zstd-compressed; Node 24 (installed for OpenClaw) can inflate them
_INFLATE_JS = 'process.stdout.write(require("zlib").zstdDecompressSync(require("fs").readFileSync(0)))'


def compaction_rows(path: Path, seen: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """``(id, compaction event)`` of every compaction in the transcript database at ``path`` (read-only);
    the event is ``{}`` for the ids in ``seen``, which are not decoded again."""
    if not path.is_file():
        return []
    rows: list[tuple[str, dict[str, Any]]] = []
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2)) as db:
            found = db.execute(
                "SELECT session_id, seq, event_json, navigation_json, event_zstd FROM transcript_events "
                'WHERE event_json LIKE \'%"type":"compaction"%\' '
                'OR navigation_json LIKE \'%"navigation":{"type":"compaction"%\' ORDER BY created_at, seq'
            ).fetchall()
    except sqlite3.Error:
        return []
    for session_id, seq, event_json, navigation_json, event_zstd in found:
        key = f"{session_id}:{seq}"
        if key in seen:
            rows.append((key, {}))
            continue
        event = json_object(event_json) or json_object(_inflate(event_zstd))
        if not event:  # compressed and not inflatable: the navigation record still has tokensBefore
            event = json_object(navigation_json).get("navigation") or {}
        if isinstance(event, dict) and event.get("type") == "compaction":
            rows.append((key, event))
    return rows


class TranscriptReader:
    """The compactions of OpenClaw's transcript database at ``relative`` in the agent's ``folder``, read from a
    copy taken without following a link, again only when the database or its log changed."""

    def __init__(self, folder: AgentFolder, relative: Path) -> None:
        self.folder = folder
        self.relative = relative
        self._read: Signature | None = None  # the files as they were at the last read

    def rows(self, seen: set[str]) -> list[tuple[str, dict[str, Any]]]:
        """``compaction_rows`` of the database now; [] when nothing changed since the last call. A link or a
        special file in place of the database is an ``UnsafePath`` (the run waits, naming it)."""
        signature = self._signature()
        if signature == self._read:
            return []
        if any(part is not None and part[0] > DB_LIMIT for part in signature):
            self._read = signature  # said once
            log.warning(
                "%s: over %d bytes, not read for compactions", self.folder.path(self.relative), DB_LIMIT
            )
            return []
        with tempfile.TemporaryDirectory(prefix="mmb-openclaw-") as scratch:
            copy = Path(scratch) / self.relative.name
            for source, present in zip(self._files(), signature, strict=True):
                if present is not None:
                    with contextlib.suppress(FileNotFoundError):  # gone meanwhile
                        self.folder.copy_out(source, copy.with_name(source.name), DB_LIMIT)
            self._read = signature  # copied: a refusal above is raised again at the next look
            return compaction_rows(copy, seen)

    def _files(self) -> tuple[Path, Path]:
        return self.relative, self.relative.with_name(self.relative.name + "-wal")

    def _signature(self) -> Signature:
        found = (self.folder.lstat(path) for path in self._files())
        return tuple(
            None if info is None else (info.st_size, info.st_mtime_ns, info.st_ino) for info in found
        )


def tokens_of(value: Any) -> int | None:
    """A token count from the transcript: a non-negative number, else None."""
    return (
        int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None
    )


def json_object(text: Any) -> dict[str, Any]:
    """A JSON object stored as text or bytes ({} for anything else: a row the agent could have written)."""
    if not isinstance(text, (str, bytes)) or not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _inflate(blob: Any) -> bytes | None:
    """A zstd-compressed transcript event, inflated by OpenClaw's own Node (Python 3.11 has no zstd)."""
    if not isinstance(blob, bytes) or not blob:
        return None
    try:
        result = subprocess.run(
            [str(node_bin_dir() / "node"), "-e", _INFLATE_JS],
            input=blob,
            capture_output=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout if result.returncode == 0 else None
