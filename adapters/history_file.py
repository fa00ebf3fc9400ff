"""An adapter's conversation in its own append-only file (``results/<run>/agent/<name>.jsonl``): the adapter's
journal, so that ``state.json`` stays bounded however long the conversation grows.

One JSON object a line: a message (``{"role": …, "content": …}``) joins the conversation, ``{"reset": true}``
starts a new one (the old lines stay: a checkpoint taken before the reset still names them). The checkpoint
keeps only the number of lines it covers (``lines``); on resume ``restore`` reads that many and cuts the rest,
written after the checkpoint a kill fell back to and replayed by the run, as the engine's own journal
(``engine/run/checkpoint.py``) does, so the conversation sent after a resume is the one an uninterrupted run
sends. ``chatbot`` and the stateless ``openai-endpoint`` keep their history here.
"""

from __future__ import annotations

import json
from pathlib import Path

from engine.agents import AdapterError
from engine.models.base import Message

_RESET = {"reset": True}


class HistoryFile:
    """The current conversation (``messages``) and the file that journals every conversation of the run."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.messages: list[Message] = []  # the current conversation, the same objects that were appended
        self.lines = 0  # lines in the file: what a checkpoint taken now covers

    def append(self, *messages: Message) -> None:
        """Messages join the conversation, and its file."""
        self.messages += messages
        self._write([json.dumps(m, ensure_ascii=False) for m in messages])

    def reset(self) -> None:
        """A new conversation (nothing written when the current one is empty)."""
        if self.messages:
            self.messages = []
            self._write([json.dumps(_RESET)])

    def remove(self) -> None:
        """Forget every conversation: the file is removed."""
        self.messages, self.lines = [], 0
        self.path.unlink(missing_ok=True)

    def restore(self, lines: int) -> None:
        """The conversation the first ``lines`` lines hold (a checkpoint's count); the lines after them cut.

        Raises:
            AdapterError: the file holds fewer lines (it was damaged or removed): the history is not there.
        """
        self.messages, self.lines, end = [], 0, 0
        try:
            with open(self.path, "r+b") as handle:
                for raw in handle:
                    if self.lines == lines or not raw.endswith(b"\n"):  # the rest came after the checkpoint
                        break
                    record = json.loads(raw)
                    if record == _RESET:
                        self.messages = []
                    else:
                        self.messages.append(record)
                    self.lines, end = self.lines + 1, end + len(raw)
                handle.truncate(end)
        except FileNotFoundError:
            pass
        except (OSError, ValueError) as exc:
            raise AdapterError(f"{self.path}: unreadable conversation: {exc}") from None
        if self.lines < lines:
            raise AdapterError(f"{self.path}: holds {self.lines} lines, the checkpoint names {lines}")

    def start_from(self, messages: list[Message]) -> None:
        """A file holding ``messages`` alone (a state saved before the history had a file of its own)."""
        self.remove()
        self.append(*messages)

    def _write(self, lines: list[str]) -> None:
        if not lines:
            return
        try:
            handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed below
        except FileNotFoundError:  # the folder is made once, not per message
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
        with handle:
            handle.write("".join(line + "\n" for line in lines))
        self.lines += len(lines)
