"""Watching and steering a run played by another process: the owner's control server on a Unix socket, and
the ``RemoteRun`` a scheduler attaches with, so a front end sees the same ``EngineApi`` either way.

The socket is ``results/<run>/control.sock`` in the private run folder, or, when that path is too long for
``AF_UNIX``, in a 0700 folder of a random name of its own (``$XDG_RUNTIME_DIR`` or the temp folder, never a
name another user could take first); the run's lock file names it, and a viewer checks it before connecting
(``engine/run/lock.py``: ``private_folder_for``, ``check_socket``). The protocol is newline-delimited JSON:
``{"op": "view"}`` → the run's ``RunView``; ``{"op": "command", "command": {...}}`` → the ``CommandResult``
once the run has applied it; ``{"op": "subscribe", "since": <byte offset>}`` → the events written to
``transcript.jsonl`` from that offset on (the viewer's size of the file when it first looked, so nothing falls
between its look and its subscription), then every new event, one per line as the transcript has it. It carries what a front end sees anyway (views, events, commands), never a
secret, and the socket is its user's only. A viewer that falls behind is dropped, never waited for.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import time
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from engine.api import RunView
from engine.commands import Command, CommandResult
from engine.events import Event, parse_event
from engine.run.lock import check_socket, own_folder, private_folder_for

log = logging.getLogger(__name__)

SOCKET_NAME = "control.sock"
MAX_SOCKET_PATH = 100  # bytes: sun_path holds 108 on Linux, 104 on macOS, with its NUL
MAX_LINE = 64 * 1024 * 1024  # an event carries an agent reply whole
BEHIND_EVENTS = 2000  # a subscriber further behind than this is dropped
BEHIND_BYTES = 64 * 1024 * 1024
FLUSH_SECONDS = 2.0  # at the end of a run, for the last events to reach the viewers
COMMAND: TypeAdapter[Command] = TypeAdapter(Command)


def socket_path(run_dir: Path) -> Path:
    """Where the control socket of the run in ``run_dir`` listens if it can (``ControlServer.start``)."""
    return run_dir.resolve() / SOCKET_NAME


def _line(payload: str) -> bytes:
    return payload.encode("utf-8") + b"\n"


class _Subscriber:
    """One viewer's stream of events: a bounded backlog written out as fast as the viewer reads."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer
        self.backlog: deque[bytes] = deque()
        self.size = 0
        self.ready = asyncio.Event()
        self.dropped = False
        self.finishing = False  # write what is queued, then end
        self.task: asyncio.Task[Any] | None = None

    def push(self, line: bytes) -> bool:
        """Queue ``line``; ``False`` when the viewer is too far behind to keep."""
        if len(self.backlog) >= BEHIND_EVENTS or self.size + len(line) > BEHIND_BYTES:
            return False
        self.backlog.append(line)
        self.size += len(line)
        self.ready.set()
        return True

    async def pump(self) -> None:
        while not self.dropped:
            await self.ready.wait()
            self.ready.clear()
            while self.backlog and not self.dropped:
                line = self.backlog.popleft()
                self.size -= len(line)
                self.writer.write(line)
                await self.writer.drain()
            if self.finishing:
                return

    def finish(self) -> None:
        self.finishing = True
        self.ready.set()


class ControlServer:
    """The owner's side: serves one run's view, commands and events to every viewer on its socket.

    An ``Observer`` of the run; ``view`` and ``command`` are the scheduler's own, so a viewer gets exactly
    what a front end in the owner's process gets.
    """

    def __init__(
        self,
        path: Path,
        view: Callable[[], RunView],
        command: Callable[[Command], Awaitable[CommandResult]],
        transcript: Path | None = None,
    ) -> None:
        self.path = path
        self.transcript = transcript
        self._view = view
        self._command = command
        self._server: asyncio.AbstractServer | None = None
        self._inode = 0
        self._folder: Path | None = None  # the private folder made for the socket, removed with it
        self._subscribers: set[_Subscriber] = set()
        self._handlers: set[asyncio.Task[Any]] = set()

    async def start(self) -> None:
        """Listen (an ``OSError`` says why not); a socket left by a dead owner is replaced. Where ``path`` is
        too long for ``AF_UNIX`` or its folder is not private (0700, this user's), in a private folder of its
        own: ``path`` then says where."""
        if len(os.fsencode(self.path)) > MAX_SOCKET_PATH or not own_folder(self.path.parent):
            self._folder = private_folder_for(SOCKET_NAME, MAX_SOCKET_PATH)
            self.path = self._folder / SOCKET_NAME
        try:
            self._server = await asyncio.start_unix_server(self._serve, path=str(self.path), limit=MAX_LINE)
        finally:
            if self._server is None and self._folder is not None:
                shutil.rmtree(self._folder, ignore_errors=True)
        os.chmod(self.path, 0o600)
        self._inode = self.path.stat().st_ino

    async def close(self) -> None:
        """Stop listening, hand the viewers their last events, end every connection, remove the socket
        (unless a new owner has taken its path)."""
        if self._server is not None:
            self._server.close()
            self._server = None
        streams = {s.task for s in self._subscribers if s.task is not None}
        for subscriber in self._subscribers:
            subscriber.finish()
        for task in self._handlers - streams:
            task.cancel()
        if streams:
            await asyncio.wait(streams, timeout=FLUSH_SECONDS)
        handlers = list(self._handlers)
        for task in handlers:
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)
        try:
            if self.path.stat().st_ino == self._inode:
                self.path.unlink()
        except OSError:
            pass
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)

    def on_event(self, run_id: str, event: Event) -> None:
        if not self._subscribers:
            return
        line = _line(event.model_dump_json())
        for subscriber in list(self._subscribers):
            if not subscriber.push(line):
                log.warning("run %s: a viewer fell too far behind and was dropped", run_id)
                self._drop(subscriber)

    def _drop(self, subscriber: _Subscriber) -> None:
        self._subscribers.discard(subscriber)
        subscriber.dropped = True
        subscriber.ready.set()
        subscriber.writer.transport.abort()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._handlers.add(task)
        try:
            while line := await reader.readline():
                reply = await self._answer(line)
                if not isinstance(reply, str):  # subscribed: the connection is the event stream from now on
                    await self._stream(reader, writer, reply)
                    return
                writer.write(_line(reply))
                await writer.drain()
        except (ConnectionError, ValueError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # a viewer that went away, sent a line longer than MAX_LINE, or the run ended
        except Exception:  # a bug must end this viewer's connection, never the run
            log.exception("control socket %s: request failed", self.path)
        finally:
            if task is not None:
                self._handlers.discard(task)
            writer.close()  # what is written still goes (a dropped viewer's connection is aborted)

    async def _answer(self, line: bytes) -> int | str | None:
        """The reply to one request line; for a subscription, where in the transcript it starts (or ``None``)."""
        try:
            request = json.loads(line)
            op = request.get("op") if isinstance(request, dict) else None
        except ValueError as exc:
            return json.dumps({"error": f"not JSON: {exc}"})
        if op == "view":
            return self._view().model_dump_json()
        if op == "command":
            try:
                command = COMMAND.validate_python(request.get("command"))
            except ValidationError as exc:
                return CommandResult(
                    ok=False, message=f"not a command: {exc.errors()[0]['msg']}"
                ).model_dump_json()
            return (await self._command(command)).model_dump_json()
        if op == "subscribe":
            since = request.get("since")
            return since if isinstance(since, int) and since >= 0 else None
        return json.dumps({"error": f"unknown op {op!r}: view, command or subscribe"})

    async def _stream(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, since: int | None
    ) -> None:
        subscriber = _Subscriber(writer)
        subscriber.task = asyncio.current_task()
        if since is not None and self.transcript is not None:  # in the same step: nothing is emitted between
            for line in _written_since(self.transcript, since):
                subscriber.push(line)
        self._subscribers.add(subscriber)
        pump = asyncio.ensure_future(subscriber.pump())
        gone = asyncio.ensure_future(_until_closed(reader))
        try:
            await asyncio.wait({pump, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._subscribers.discard(subscriber)
            for side in (pump, gone):
                side.cancel()
            await asyncio.gather(pump, gone, return_exceptions=True)


def _written_since(transcript: Path, since: int) -> list[bytes]:
    """The transcript's whole lines from byte ``since`` on (a line cut by a rollback skipped), at most the
    newest ``BEHIND_BYTES``."""
    try:
        with open(transcript, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            start = max(since, size - BEHIND_BYTES)
            if start >= size:
                return []
            handle.seek(max(start - 1, 0))
            data = handle.read()
    except OSError:
        return []
    pieces = data.split(b"\n")  # the last piece is what follows the last newline: a line being written
    whole = pieces[1:-1] if start > 0 else pieces[:-1]  # the first piece ends at ``start`` or before it
    return [piece + b"\n" for piece in whole]


async def _until_closed(reader: asyncio.StreamReader) -> None:
    while await reader.read(65536):
        pass


class RemoteRun:
    """The viewer's side: one run played by another process, attached through its control socket.

    Keeps the latest view (asked again when events arrived, at most every ``VIEW_EVERY`` seconds, the rate
    front ends show views at, and at least every ``POLL`` seconds) and hands every event to ``on_event``, a
    backlog in slices of ``SLICE`` events (the loop's other work, a front end's keys, goes on between them).
    Once the connection is gone (the owner ended the run or died) it is not ``alive``; the scheduler falls back
    to the run's stored state and may attach again.
    """

    POLL = 1.0
    VIEW_EVERY = 0.25  # a stream of events costs four views a second, however fast it flows
    SLICE = 50  # events handed over between two turns of the loop

    def __init__(
        self,
        run_id: str,
        path: Path,
        transcript: Path,
        on_event: Callable[[str, Event], None],
        since: int | None = None,
    ) -> None:
        self.run_id = run_id
        self.path = path
        self.transcript = transcript
        self.since = _size(transcript) if since is None else since  # events from here on are handed over
        self.view: RunView | None = None
        self.ended_at = 0.0  # monotonic time the connection was lost
        self.ended_size = 0  # the transcript's size then: where an attachment made after this one starts
        self._on_event = on_event
        self._changed = asyncio.Event()
        self._tasks = [
            asyncio.create_task(self._guard(self._follow_events), name=f"events:{run_id}"),
            asyncio.create_task(self._guard(self._follow_view), name=f"view:{run_id}"),
        ]

    @property
    def alive(self) -> bool:
        return not any(task.done() for task in self._tasks)

    async def command(self, command: Command) -> CommandResult:
        """Send ``command`` to the owner and say what became of it there (and take the view it leads to)."""
        try:
            reader, writer = await self._connect()
        except OSError as exc:
            return CommandResult(
                ok=False, message=f"cannot reach the process that plays {self.run_id}: {exc}"
            )
        try:
            request = {"op": "command", "command": command.model_dump(mode="json")}
            result = CommandResult.model_validate_json(await _ask(reader, writer, request))
            self.view = RunView.model_validate_json(await _ask(reader, writer, {"op": "view"}))
            return result
        except (OSError, ValueError, EOFError) as exc:
            return CommandResult(
                ok=False, message=f"the process that plays {self.run_id} did not answer: {exc}"
            )
        finally:
            writer.transport.abort()

    def close(self) -> None:
        for task in self._tasks:
            task.cancel()

    async def aclose(self) -> None:
        self.close()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        check_socket(self.path)  # this user's, in a folder nobody else may write in
        return await asyncio.open_unix_connection(str(self.path), limit=MAX_LINE)

    async def _guard(self, follow: Callable[[], Awaitable[None]]) -> None:
        """Either side losing the owner ends both (one refused at once may end the other before it began)."""
        try:
            await follow()
        except (OSError, ValueError, EOFError) as exc:
            log.debug("run %s: the owner's socket is gone: %s", self.run_id, exc)
        finally:
            self.ended_at = time.monotonic()
            self.ended_size = _size(self.transcript)
            for task in self._tasks:
                if task is not asyncio.current_task():
                    task.cancel()

    async def _follow_events(self) -> None:
        reader, writer = await self._connect()
        try:
            writer.write(_line(json.dumps({"op": "subscribe", "since": self.since})))
            await writer.drain()
            handed = 0
            while line := await reader.readline():  # does not wait while whole lines are buffered
                try:
                    event = parse_event(line.decode("utf-8"))
                except ValueError:
                    log.warning("run %s: an event that does not parse was skipped", self.run_id)
                    continue
                self._changed.set()
                self._on_event(self.run_id, event)
                handed += 1
                if handed % self.SLICE == 0:
                    await asyncio.sleep(0)
        finally:
            writer.transport.abort()

    async def _follow_view(self) -> None:
        reader, writer = await self._connect()
        loop = asyncio.get_running_loop()
        try:
            while True:
                asked = loop.time()
                self.view = RunView.model_validate_json(await _ask(reader, writer, {"op": "view"}))
                try:
                    await asyncio.wait_for(self._changed.wait(), self.POLL)
                    await asyncio.sleep(asked + self.VIEW_EVERY - loop.time())  # the events since, in one
                except TimeoutError:
                    pass
                self._changed.clear()
        finally:
            writer.transport.abort()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


async def _ask(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: dict[str, Any]) -> bytes:
    writer.write(_line(json.dumps(request)))
    await writer.drain()
    reply = await reader.readline()
    if not reply:
        raise EOFError("the connection was closed")
    return reply
