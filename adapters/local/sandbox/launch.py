"""The first program inside an agent's sandbox (``adapters/local/sandbox/policy.py``): it finishes the box, then runs the agent
as its child and relays the agent's network.

Standalone on purpose (the standard library only): the checkout is not in the box, so the engine copies this
file into the sandbox's support folder and runs it with its own interpreter, ``python -I -S launch.py
<config.json> -- <agent command…>``. In order:

1. **Identity** (``identity``: ``uid``, ``gid``; a root engine): every capability out of the bounding set, no
   supplementary groups, then the agent's own uid and gid. Then, root engine or not, no capability in any set,
   and not dumpable (the agent, same uid, cannot read this process's memory or descriptors).
2. **Limits** (``limits``): ``RLIMIT_NPROC`` (processes and threads of the agent's uid; not root, of its user
   namespace only), no core files (its memory is checked from the engine: ``adapters/local/sandbox/watch.py``).
3. **Network** (``forwards``, ``control``, ``back``; absent with ``agent_network: "open"``): the sandbox has a
   network of its own, loopback only. Listeners on the model endpoint's loopback address (or on the proxy's
   port) relay each connection to the engine's Unix socket; the engine asks over ``control`` for a connection
   to one of the agent's own server ports, opened here and handed back on ``back``.
4. **The agent**, a child process: SIGTERM, SIGINT and SIGHUP are the agent's (this process keeps relaying while
   the agent drains its work); its exit is this process's exit status (128 + N after signal N), which ends the
   sandbox.

A step that fails prints ``mmb sandbox: <what>`` (in the agent's process log) and exits 125.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import errno
import json
import os
import resource
import signal
import subprocess
import sys
from typing import Any

PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
CAPABILITY_VERSION_3 = 0x20080522
FAILED = 125  # the launcher's own failure, as env(1) and podman use it
CHUNK = 65536
HANDLED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

_LIBC = ctypes.CDLL(None, use_errno=True)


class LaunchError(Exception):
    """A step of the launch failed: what, and the system's reason."""


def _checked(result: int, what: str) -> None:
    if result != 0:
        raise LaunchError(f"{what}: {os.strerror(ctypes.get_errno())}")


def _prctl(option: int, arg: int = 0) -> int:
    return int(
        _LIBC.prctl(option, ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))
    )


# --- the box ----------------------------------------------------------------------------------------


def drop_bounding_set() -> None:
    """Every capability out of the bounding set: nothing can bring one back (needs CAP_SETPCAP)."""
    for capability in range(64):
        if _prctl(PR_CAPBSET_DROP, capability) != 0:
            if ctypes.get_errno() == errno.EINVAL:
                return  # past the last capability this kernel knows
            raise LaunchError(f"drop capability {capability}: {os.strerror(ctypes.get_errno())}")


def become(uid: int, gid: int) -> None:
    """The agent's own user: no supplementary groups, its gid, its uid (the kernel clears the capabilities)."""
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)


def drop_capabilities() -> None:
    """No capability left in any set (effective, permitted, inheritable, ambient); not dumpable."""
    _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    header = (ctypes.c_uint32 * 2)(CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    _checked(_LIBC.capset(header, data), "drop capabilities")
    _prctl(PR_SET_DUMPABLE, 0)


def set_limits(limits: dict[str, int]) -> None:
    """Processes (threads included) of the agent's uid (of its user namespace when the engine is not root:
    the count starts there), no core files. Its memory is checked from the engine (``sandbox_watch.py``)."""
    if processes := limits.get("processes"):
        resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def prepare(config: dict[str, Any]) -> None:
    """Steps 1-2 of the module's docstring (the new uid needs the capabilities the rest drops)."""
    identity = config.get("identity")
    if identity is not None:
        drop_bounding_set()
        become(int(identity["uid"]), int(identity["gid"]))
    drop_capabilities()
    set_limits(config.get("limits") or {})


# --- the network ------------------------------------------------------------------------------------


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Bytes from ``reader`` to ``writer`` until EOF, then half-close; a broken side closes the other."""
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (OSError, RuntimeError):
        writer.close()


async def splice(
    one: tuple[asyncio.StreamReader, asyncio.StreamWriter],
    other: tuple[asyncio.StreamReader, asyncio.StreamWriter],
) -> None:
    """Join two connections both ways until both directions end."""
    try:
        await asyncio.gather(_copy(one[0], other[1]), _copy(other[0], one[1]))
    finally:
        for _, writer in (one, other):
            writer.close()


async def forward(address: tuple[str, int], socket_path: str) -> asyncio.Server:
    """Listen on ``address`` inside; each connection is relayed to the engine's Unix socket ``socket_path``."""

    async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            engine = await asyncio.open_unix_connection(socket_path)
        except OSError:
            writer.close()
            return
        await splice((reader, writer), engine)

    return await asyncio.start_server(relay, address[0], address[1])


async def serve_control(control: str, back: str) -> None:
    """Open the connections the engine asks for (``open <id> <port>``) to the agent's own server ports and hand
    each back on ``back`` with its answer (``<id> ok`` or ``<id> refused``)."""
    try:
        reader, writer = await asyncio.open_unix_connection(control)
    except OSError as exc:
        print(f"mmb sandbox: no engine relay at {control}: {exc}", file=sys.stderr, flush=True)
        return
    writer.write(b"hello\n")
    tasks: set[asyncio.Task[None]] = set()
    while line := await reader.readline():
        parts = line.decode("ascii", "replace").split()
        if len(parts) == 3 and parts[0] == "open" and parts[2].isdigit():
            task = asyncio.create_task(_open_for_engine(parts[1], int(parts[2]), back))
            tasks.add(task)
            task.add_done_callback(tasks.discard)


async def _open_for_engine(token: str, port: int, back: str) -> None:
    try:
        agent = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        agent = None
    try:
        engine = await asyncio.open_unix_connection(back)
    except OSError:
        if agent is not None:
            agent[1].close()
        return
    engine[1].write(f"{token} {'ok' if agent else 'refused'}\n".encode("ascii"))
    if agent is None:
        await engine[1].drain()
        engine[1].close()
        return
    await splice(agent, engine)


# --- the agent --------------------------------------------------------------------------------------


async def wait_for(child: subprocess.Popen[bytes]) -> int:
    """The child's exit status, as a shell gives it (128 + N after signal N)."""
    loop = asyncio.get_running_loop()
    try:
        pidfd = os.pidfd_open(child.pid)
    except (AttributeError, OSError):
        code = await asyncio.to_thread(child.wait)
    else:
        ended = loop.create_future()
        loop.add_reader(pidfd, lambda: None if ended.done() else ended.set_result(None))
        try:
            await ended
        finally:
            loop.remove_reader(pidfd)
            os.close(pidfd)
        code = child.wait()
    return 128 - code if code < 0 else code


async def run(config: dict[str, Any], command: list[str]) -> int:
    """Relay the network (when asked), start the agent, and wait for it."""
    loop = asyncio.get_running_loop()
    servers = []
    for host, port, path in config.get("forwards") or []:
        try:
            servers.append(await forward((host, int(port)), path))
        except OSError as exc:  # ::1 where the kernel has no IPv6: the agent's own error will say the rest
            print(f"mmb sandbox: cannot listen on {host}:{port}: {exc.strerror}", file=sys.stderr, flush=True)
    for handled in HANDLED:  # the agent's to act on; caught here, so the agent starts with the default action
        loop.add_signal_handler(handled, lambda: None)
    try:
        child = subprocess.Popen(command)
    except OSError as exc:
        print(f"mmb sandbox: cannot start {command[0]}: {exc.strerror}", file=sys.stderr, flush=True)
        return 127
    control = None
    if config.get("control"):
        control = asyncio.create_task(serve_control(config["control"], config["back"]))
    code = await wait_for(child)
    if control is not None:
        control.cancel()
    for server in servers:
        server.close()
    return code


def main(argv: list[str]) -> int:
    """``launch.py <config.json> -- <command…>``."""
    if len(argv) < 4 or argv[2] != "--":
        print("mmb sandbox: usage: launch.py <config.json> -- <command…>", file=sys.stderr)
        return FAILED
    try:
        with open(argv[1], encoding="utf-8") as handle:
            config = json.load(handle)
        prepare(config)
    except (OSError, ValueError, KeyError, LaunchError) as exc:
        print(f"mmb sandbox: {exc}", file=sys.stderr, flush=True)
        return FAILED
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(run(config, argv[3:]))
    return FAILED


if __name__ == "__main__":
    sys.exit(main(sys.argv))
