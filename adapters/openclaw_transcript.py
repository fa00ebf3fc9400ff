"""OpenClaw's SQLite transcript, read for compactions (a successful one is logged at debug level only).

Transcripts live in ``$OPENCLAW_STATE_DIR/agents/main/agent/openclaw-agent.sqlite``, table
``transcript_events``. It has no type column: a compaction is marked inside ``event_json`` (``"type":
"compaction"`` with ``tokensBefore``/``tokensAfter``), and large events are stored zstd-compressed in
``event_zstd``; the ``navigation_json`` record of a compaction still carries ``tokensBefore``.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

from adapters.install import node_bin_dir

TRANSCRIPT_DB = Path("state") / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
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
        event = _json_object(event_json) or _json_object(_inflate(event_zstd))
        if not event:  # compressed and not inflatable: the navigation record still has tokensBefore
            event = _json_object(navigation_json).get("navigation") or {}
        if isinstance(event, dict) and event.get("type") == "compaction":
            rows.append((key, event))
    return rows


def tokens_of(value: Any) -> int | None:
    """A token count from the transcript: a non-negative number, else None."""
    return (
        int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None
    )


def _json_object(text: Any) -> dict[str, Any]:
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
