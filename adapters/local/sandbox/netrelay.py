"""The engine's side of a sandboxed agent's network (``agent_network: "model"``, the default): the agent reaches
its model endpoint and nothing else, and the engine still reaches the agent's own server.

The sandbox has a network namespace of its own (``--unshare-net``: loopback only). Its launcher
(``adapters/local/sandbox/launch.py``) relays, over Unix sockets in the sandbox's support folder (bound read-only
inside at ``/run/mmb``), to the listeners here, on the engine's event loop:

- ``model-<n>.sock``: each connection goes to the model endpoint's own host and port, nothing else. An endpoint
  on loopback (``http://127.0.0.1:8000/v1``) keeps its URL: the launcher listens on the same address and port
  inside. Any other endpoint goes through ``proxy.sock``, an HTTP proxy that lets through only the endpoints'
  host and port (``CONNECT`` for https, one plain request per connection for http); the agent gets
  ``HTTPS_PROXY``/``HTTP_PROXY`` pointing at its inside port (and ``NODE_USE_ENV_PROXY=1`` for Node's own
  ``fetch``).
- the agent's own server ports (Hermes' API server, OpenClaw's gateway): a listener on the host's
  ``127.0.0.1:<port>`` here; each connection asks the launcher over ``control.sock`` for a connection to that
  port inside, which the launcher opens and hands back on ``back.sock`` (with a random token). The engine never
  connects to a path the agent could have made.
- the launcher's ``control`` connection lasts as long as the sandbox: when it ends, the listeners close, so the
  agent's port is free again at once for the next start.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import secrets
import socket
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from adapters.base import AdapterError
from adapters.local.sandbox.launch import splice

INSIDE = Path("/run/mmb")  # where the support folder is in the sandbox
PROXY_PORT = 3128  # the proxy's port inside the sandbox (moved when the agent's own port is that one)
LOOPBACK_NAMES = ("localhost", "ip6-localhost", "ip6-loopback")
HEAD_LIMIT = 16384  # bytes of a request head the proxy reads at most
LAUNCHER_WAIT = 10.0  # seconds a connection to the agent's port waits for the launcher to be there
OPEN_WAIT = 10.0  # seconds the launcher gets to open a connection inside

Streams = tuple[asyncio.StreamReader, asyncio.StreamWriter]
Handed = tuple[str, Streams, "asyncio.Future[None]"]  # the launcher's answer, its connection, done when used


@dataclass(frozen=True)
class Endpoint:
    """Where a model endpoint lives: host, port, and whether the URL is https."""

    host: str
    port: int
    secure: bool

    @classmethod
    def of(cls, url: str) -> Endpoint:
        """The endpoint of a base URL; ValueError naming the URL when it has no http(s) host."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"agent_network: not an http(s) URL with a host: {url!r}")
        secure = parts.scheme == "https"
        return cls(parts.hostname, parts.port or (443 if secure else 80), secure)

    @property
    def loopback(self) -> bool:
        if self.host in LOOPBACK_NAMES:
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    def inside_addresses(self) -> list[str]:
        """The addresses the launcher listens on for it: its own, both loopbacks for a name."""
        return ["127.0.0.1", "::1"] if self.host in LOOPBACK_NAMES else [self.host]


def _listener(family: socket.AddressFamily, address: Any) -> socket.socket:
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        if family != socket.AF_UNIX:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


class NetRelay:
    """The relay of one sandbox start: ``open`` (synchronous, on the running loop), ``close``."""

    def __init__(
        self,
        folder: Path,
        endpoints: Sequence[Endpoint],
        served: Sequence[int],
        owner: tuple[int, int] | None,
    ) -> None:
        self.folder = folder
        self.endpoints = list(dict.fromkeys(endpoints))
        self.served = list(dict.fromkeys(served))
        self.owner = owner  # the agent's uid and gid (a root engine): the sockets are given to it
        self.proxied = [endpoint for endpoint in self.endpoints if not endpoint.loopback]
        self.proxy_port = next(p for p in range(PROXY_PORT, PROXY_PORT + 100) if p not in self.served)
        self._listening: list[socket.socket] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._pending: dict[str, asyncio.Future[Handed]] = {}
        self._control: asyncio.StreamWriter | None = None
        self._control_ready = asyncio.Event()
        self.closed = False

    # --- setting up -------------------------------------------------------------------------------

    def open(self) -> None:
        """Listen: the Unix sockets in the folder, the agent's ports on the host's loopback. AdapterError when
        the agent's port is taken here."""
        loop = asyncio.get_running_loop()
        try:
            for index, endpoint in enumerate(self.endpoints):
                if endpoint.loopback:
                    self._unix(loop, f"model-{index}.sock", self._to_endpoint(endpoint))
            if self.proxied:
                self._unix(loop, "proxy.sock", self._proxy)
            self._unix(loop, "control.sock", self._on_control)
            self._unix(loop, "back.sock", self._on_back)
            for port in self.served:
                try:
                    sock = _listener(socket.AF_INET, ("127.0.0.1", port))
                except OSError as exc:
                    raise AdapterError(
                        f"agent_network: the agent's port {port} is taken here: {exc}"
                    ) from None
                self._accept(loop, sock, self._to_agent(port))
        except BaseException:
            self.close()
            raise

    def launcher_config(self) -> dict[str, Any]:
        """What the launcher needs: ``forwards`` ``[host, port, socket]`` and the control and back sockets."""
        forwards = [
            [address, endpoint.port, str(INSIDE / f"model-{index}.sock")]
            for index, endpoint in enumerate(self.endpoints)
            if endpoint.loopback
            for address in endpoint.inside_addresses()
        ]
        if self.proxied:
            forwards.append(["127.0.0.1", self.proxy_port, str(INSIDE / "proxy.sock")])
        return {
            "forwards": forwards,
            "control": str(INSIDE / "control.sock"),
            "back": str(INSIDE / "back.sock"),
        }

    def env(self) -> dict[str, str]:
        """The proxy variables when an endpoint is not on loopback (lower and upper case, as tools read both)."""
        if not self.proxied:
            return {}
        proxy = f"http://127.0.0.1:{self.proxy_port}"
        env = {"NODE_USE_ENV_PROXY": "1"}
        for name, value in (
            ("https_proxy", proxy),
            ("http_proxy", proxy),
            ("no_proxy", "localhost,127.0.0.1,::1"),
        ):
            env[name] = env[name.upper()] = value
        return env

    def _unix(self, loop: asyncio.AbstractEventLoop, name: str, handle: Callable[[Streams], Any]) -> None:
        path = self.folder / name
        path.unlink(missing_ok=True)
        sock = _listener(socket.AF_UNIX, str(path))
        if self.owner is not None:
            os.chown(path, *self.owner)  # the agent's uid connects (write permission on the socket)
        self._accept(loop, sock, handle)

    def _accept(
        self, loop: asyncio.AbstractEventLoop, sock: socket.socket, handle: Callable[[Streams], Any]
    ) -> None:
        self._listening.append(sock)

        def ready() -> None:
            with contextlib.suppress(BlockingIOError, InterruptedError, ConnectionAbortedError):
                while True:
                    conn, _ = sock.accept()
                    self._spawn(self._handle(conn, handle))

        loop.add_reader(sock.fileno(), ready)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _handle(conn: socket.socket, handle: Callable[[Streams], Any]) -> None:
        conn.setblocking(False)
        streams = await asyncio.open_connection(sock=conn)
        try:
            await handle(streams)
        finally:
            streams[1].close()

    def close(self) -> None:
        """Stop listening (the agent's ports are free on return) and end every relayed connection."""
        self.closed = True
        with contextlib.suppress(RuntimeError):
            loop = asyncio.get_running_loop()
            for sock in self._listening:
                with contextlib.suppress(ValueError, OSError):
                    loop.remove_reader(sock.fileno())
        for sock in self._listening:
            sock.close()
        self._listening.clear()
        for task in list(self._tasks):
            task.cancel()

    # --- the agent to its model -------------------------------------------------------------------

    def _to_endpoint(self, endpoint: Endpoint) -> Callable[[Streams], Any]:
        async def relay(inside: Streams) -> None:
            try:
                outside = await asyncio.open_connection(endpoint.host, endpoint.port)
            except OSError:
                return
            await splice(inside, outside)

        return relay

    async def _proxy(self, inside: Streams) -> None:
        """One proxied connection: ``CONNECT host:port`` or one plain ``http://`` request, allowed endpoints only."""
        reader, writer = inside
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
            return
        if len(head) > HEAD_LIMIT:
            return await _refuse(writer, 431, "request head too large")
        method, _, rest = head.partition(b" ")
        target = rest.split(b" ", 1)[0].decode("latin-1")
        host, port, first = _proxy_target(method, target, head)
        allowed = any(e.host == host and e.port == port for e in self.proxied)
        if not allowed:
            return await _refuse(
                writer, 403, f"the agent may reach only its model endpoint, not {host}:{port}"
            )
        try:
            outside = await asyncio.open_connection(host, port)
        except OSError as exc:
            return await _refuse(writer, 502, f"cannot reach {host}:{port}: {exc}")
        if first is None:  # CONNECT: a tunnel, TLS end to end
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            outside[1].write(first)
        await splice(inside, outside)

    # --- the engine to the agent's own server -----------------------------------------------------

    async def _on_control(self, streams: Streams) -> None:
        if self._control is not None:
            return  # one launcher per relay
        self._control = streams[1]
        self._control_ready.set()
        with contextlib.suppress(OSError):
            while await streams[0].readline():
                pass
        self.close()  # the sandbox ended: its ports are free again

    async def _on_back(self, streams: Streams) -> None:
        """A connection the launcher opened for the engine: ``<token> ok|refused``, then the agent's bytes."""
        with contextlib.suppress(OSError, ValueError, asyncio.IncompleteReadError):
            token, _, status = (await streams[0].readline()).decode("ascii").strip().partition(" ")
            waiting = self._pending.pop(token, None)
            if waiting is not None and not waiting.done():
                used: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                waiting.set_result((status, streams, used))
                await used  # the connection stays open while the engine's side relays it

    def _to_agent(self, port: int) -> Callable[[Streams], Any]:
        async def relay(outside: Streams) -> None:
            handed = await self._open_inside(port)
            if handed is None:
                _reset(outside[1])  # as a port nobody listens on: the connection ends at once
                return
            status, inside, used = handed
            try:
                if status == "ok":
                    await splice(outside, inside)
                else:
                    _reset(outside[1])
            finally:
                if not used.done():
                    used.set_result(None)

        return relay

    async def _open_inside(self, port: int) -> Handed | None:
        try:
            await asyncio.wait_for(self._control_ready.wait(), LAUNCHER_WAIT)
        except TimeoutError:
            return None
        control = self._control
        if control is None or control.is_closing():
            return None
        token = secrets.token_hex(16)
        waiting: asyncio.Future[Handed] = asyncio.get_running_loop().create_future()
        self._pending[token] = waiting
        try:
            control.write(f"open {token} {port}\n".encode("ascii"))
            return await asyncio.wait_for(waiting, OPEN_WAIT)
        except (TimeoutError, OSError):
            return None
        finally:
            self._pending.pop(token, None)


def _proxy_target(method: bytes, target: str, head: bytes) -> tuple[str, int, bytes | None]:
    """``(host, port, first bytes to send)`` of a proxy request; ``None`` bytes for a ``CONNECT`` tunnel."""
    if method == b"CONNECT":
        host, _, port = target.rpartition(":")
        return host.strip("[]"), int(port) if port.isdigit() else 443, None
    parts = urlsplit(target)
    if parts.scheme != "http" or not parts.hostname:
        return "", 0, None
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    lines = head.split(b"\r\n")
    version = lines[0].rsplit(b" ", 1)[-1]
    kept = [
        line
        for line in lines[1:]
        if line
        and line.split(b":", 1)[0].strip().lower() not in (b"connection", b"proxy-connection", b"keep-alive")
    ]
    # one request per connection: the next one comes on a new connection, through this check again
    first = b"\r\n".join(
        [method + b" " + path.encode("latin-1") + b" " + version, *kept, b"Connection: close"]
    )
    return parts.hostname, parts.port or 80, first + b"\r\n\r\n"


async def _refuse(writer: asyncio.StreamWriter, status: int, why: str) -> None:
    body = f"{why}\n".encode()
    writer.write(
        f"HTTP/1.1 {status} Refused by the sandbox\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )
    with contextlib.suppress(OSError):
        await writer.drain()


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with a reset, not a clean end: the client sees a refused connection, not an empty answer."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.close()
