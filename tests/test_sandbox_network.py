"""The sandbox's network (``agent_network``; ``adapters/local/sandbox/netrelay.py`` and the launcher's relay): a plain program
in the box reaches its model endpoint and nothing else — not the persona's model server, not a host listener,
not the host's other addresses, not the outside — while the engine reaches the program's own port; an endpoint
off loopback goes through the proxy, which lets through its host and port only; ``"open"`` is the host's
network. The real agents: ``tests/agents/test_sandbox_escapes.py``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from aiohttp import web
from engine_helpers import scaled

from adapters.local.install import install_sandbox
from adapters.local.ports import free_port, port_is_free
from adapters.local.sandbox.box import AgentBox
from adapters.local.sandbox.options import SandboxOptions
from engine.models.server import start_server

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux only")

# fetches every URL of argv[1] (JSON) and prints {url: body or error}; then serves argv[2] (a port) a while
# (``connect://host:port``: a CONNECT through the proxy of ``https_proxy``, then a plain GET in the tunnel)
PROBE = """
import json, os, socket, sys, time, threading, http.server, urllib.request
def tunnel(target):
    host, port = os.environ['https_proxy'].split('//')[1].rsplit(':', 1)
    with socket.create_connection((host, int(port)), timeout=3) as sock:
        sock.sendall(f'CONNECT {target} HTTP/1.1\\r\\nHost: {target}\\r\\n\\r\\n'.encode())
        status = sock.recv(4096).decode().splitlines()[0]
        if ' 200 ' not in status:
            return 'ERR ' + status
        sock.sendall(b'GET /v1/models HTTP/1.0\\r\\n\\r\\n')
        return sock.recv(4096).decode().splitlines()[-1]
seen = {}
for url in json.loads(sys.argv[1]):
    try:
        if url.startswith('connect://'):
            seen[url] = tunnel(url[len('connect://'):])
        else:
            seen[url] = urllib.request.urlopen(url, timeout=3).read().decode()[:60]
    except Exception as exc:
        seen[url] = 'ERR ' + repr(exc)[:160]
seen['tcp'] = open('/proc/net/tcp').read()
print(json.dumps(seen), flush=True)
class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b'agent here')
    def log_message(self, *args): pass
server = http.server.HTTPServer(('127.0.0.1', int(sys.argv[2])), Hello)
threading.Thread(target=server.serve_forever, daemon=True).start()
time.sleep(float(sys.argv[3]))
"""


@pytest.fixture(scope="module", autouse=True)
def bwrap() -> None:
    install_sandbox()


async def _web(host: str, text: str) -> tuple[web.AppRunner, int]:
    async def answer(request: web.Request) -> web.Response:
        return web.Response(text=text)

    app = web.Application()
    app.router.add_get("/v1/models", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, 0).start()
    return runner, int(runner.addresses[0][1])


@pytest.fixture
async def model() -> AsyncIterator[int]:
    """The agent's model endpoint on loopback: its port."""
    runner, port = await _web("127.0.0.1", "model here")
    yield port
    await runner.cleanup()


@pytest.fixture
async def persona() -> AsyncIterator[int]:
    """The persona's scripted model server (``engine/models/server.py``), on loopback: its port."""
    runner, port = await start_server("127.0.0.1", 0)
    yield port
    await runner.cleanup()


def _host_address() -> str | None:
    """This machine's own address off loopback (no packet is sent), if it has one."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("10.255.255.255", 1))
        address = str(probe.getsockname()[0])
        return None if address.startswith("127.") else address
    return None


async def _probe(
    tmp_path: Path,
    urls: list[str],
    endpoints: list[str],
    served: int,
    network: str = "model",
    stay: float = 6,
    also: list[int] | None = None,
) -> tuple[asyncio.subprocess.Process, AgentBox]:
    """The probe program in a box reaching ``endpoints``, serving ``served`` (the engine reaches it and ``also``)."""
    agent = tmp_path / "run" / "agent"
    (agent / "home").mkdir(parents=True, exist_ok=True)
    box = AgentBox(agent, SandboxOptions.from_options({"agent_network": network}))
    python = os.path.realpath(sys.executable)
    command = [python, "-c", PROBE, json.dumps(urls), str(served), str(scaled(stay))]
    env = {"PATH": os.defpath, "HOME": str(agent)}
    argv, env = box.wrap(command, env, agent, [], endpoints, [served, *(also or [])])
    process = await asyncio.create_subprocess_exec(
        *argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    return process, box


async def _seen(process: asyncio.subprocess.Process) -> dict[str, str]:
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), scaled(30))
    assert line, (await process.stderr.read()).decode() if process.stderr else "no output"
    return dict(json.loads(line))


async def test_only_the_model_endpoint_is_reached_and_the_engine_reaches_the_agent(
    tmp_path: Path, model: int, persona: int
) -> None:
    squatter = socket.create_server(("127.0.0.1", 0))  # any program listening on the host's loopback
    host_port = squatter.getsockname()[1]
    served = free_port()
    urls = [
        f"http://127.0.0.1:{model}/v1/models",
        f"http://localhost:{model}/v1/models",
        f"http://127.0.0.1:{persona}/v1/models",
        f"http://127.0.0.1:{host_port}/",
        "http://1.1.1.1/",
    ]
    if address := _host_address():
        urls.append(f"http://{address}:{host_port}/")
    process, box = await _probe(tmp_path, urls, [f"http://127.0.0.1:{model}/v1"], served)
    try:
        seen = await _seen(process)
        async with httpx.AsyncClient() as client:  # the engine, on the host, to the program's own port
            answer = await client.get(f"http://127.0.0.1:{served}/", timeout=scaled(10))
        await process.wait()
    finally:
        squatter.close()
        box.close()
    assert seen[urls[0]] == "model here" and seen[urls[1]] == "model here"
    for refused in urls[2:4]:  # the persona's model, a host listener: nothing listens there inside
        assert "Connection refused" in seen[refused], seen[refused]
    for unreachable in urls[4:]:
        assert "Network is unreachable" in seen[unreachable], seen[unreachable]
    listening = [line.split()[1] for line in seen["tcp"].splitlines()[1:] if line.split()[3] == "0A"]
    assert f"{persona:04X}" not in {entry.split(":")[1] for entry in listening}  # its own listeners only
    assert answer.text == "agent here"
    assert port_is_free(served)  # the sandbox ended: the engine's listener went with it


async def test_a_port_nobody_listens_on_inside_ends_the_engines_connection_at_once(
    tmp_path: Path, model: int
) -> None:
    served, silent = free_port(), free_port()  # the program listens on the first only
    process, box = await _probe(tmp_path, [], [f"http://127.0.0.1:{model}/v1"], served, also=[silent])
    try:
        await _seen(process)
        started = asyncio.get_running_loop().time()
        async with httpx.AsyncClient() as client:
            with pytest.raises(httpx.HTTPError):
                await client.get(f"http://127.0.0.1:{silent}/", timeout=scaled(10))
        assert asyncio.get_running_loop().time() - started < scaled(2)  # refused, not timed out
    finally:
        process.kill()
        await process.wait()
        box.close()


@pytest.mark.skipif(_host_address() is None, reason="no address off loopback on this machine")
async def test_an_endpoint_off_loopback_goes_through_a_proxy_that_lets_only_it_through(
    tmp_path: Path,
) -> None:
    address = _host_address()
    runner, port = await _web("0.0.0.0", "remote model here")
    other_runner, other = await _web("0.0.0.0", "another service")
    urls = [
        f"http://{address}:{port}/v1/models",
        f"connect://{address}:{port}",  # as an https client asks (its TLS would go through the tunnel)
        f"http://{address}:{other}/v1/models",
        "http://example.com/",
        f"connect://{address}:{other}",
        "connect://example.com:443",
    ]
    try:
        process, box = await _probe(tmp_path, urls, [f"http://{address}:{port}/v1"], free_port(), stay=0)
        try:
            seen = await _seen(process)
            await process.wait()
        finally:
            box.close()
    finally:
        await runner.cleanup()
        await other_runner.cleanup()
    assert seen[urls[0]] == seen[urls[1]] == "remote model here"
    for refused in urls[2:]:
        assert "403" in seen[refused], seen


async def test_an_open_network_is_the_hosts(tmp_path: Path, persona: int) -> None:
    served = free_port()
    url = f"http://127.0.0.1:{persona}/v1/models"
    process, box = await _probe(tmp_path, [url], [], served, network="open", stay=4)
    try:
        seen = await _seen(process)
        async with httpx.AsyncClient() as client:  # its own port is on the host's loopback itself
            answer = await client.get(f"http://127.0.0.1:{served}/", timeout=scaled(10))
        await process.wait()
    finally:
        box.close()
    assert not seen[url].startswith("ERR") and answer.text == "agent here"
