"""A hostile agent in the sandbox (issue 32): the real Hermes and OpenClaw, their model (``tool_model.py``) making
them run commands with their own shell tool (``terminal``, ``exec``), try what a hostile agent would.

- **Read what it should not**: a root-only file of the host, ``/etc/shadow``, a copy of a benchmark (its
  chapters) elsewhere on the machine, the checkout's benchmarks: none is there.
- **Reach what it should not**: the persona's model server and a host listener on loopback, the host's own
  address off loopback, the outside: none answers; its own model endpoint does; ``/proc/net/tcp`` lists only its
  own sockets.
- **Exhaust the machine**: a bounded fork bomb stops at ``agent_limits.processes``, a ``/tmp`` fill at
  ``tmp_mb``, and the agent works on; memory past ``memory_mb`` stops the sandbox, and the error (the run's
  waiting reason) says why.

Each command writes what it saw in a file of the agent's home, read here from the host.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from agent_helpers import ask
from tool_model import ToolModelServer

from adapters.base import AdapterError
from adapters.hermes.adapter import HermesAdapter
from adapters.local.agent import LocalAgentAdapter
from adapters.local.install import install_hermes, install_openclaw
from adapters.local.sandbox.policy import CHECKOUT
from adapters.openclaw.adapter import OpenClawAdapter
from engine.models.server import start_server

pytestmark = pytest.mark.agents

Factory = Callable[..., LocalAgentAdapter]
SHELL = {"hermes": "terminal", "openclaw": "exec"}
# memory_mb a little above what the agent itself holds while it runs a command (Hermes ~0.2 GB, OpenClaw ~1.4 GB)
MEMORY_LIMIT_MB = {"hermes": 768, "openclaw": 2560}
SEED = Path(__file__).resolve().parents[1] / "benchmarks" / "prose_seed"


@pytest.fixture(params=["hermes", "openclaw"])
def adapter_class(request: pytest.FixtureRequest) -> type[LocalAgentAdapter]:
    """Both real agents, installed (``make_tool_adapter`` of ``conftest.py`` makes them)."""
    if request.param == "hermes":
        install_hermes()
        return HermesAdapter
    install_openclaw()
    return OpenClawAdapter


@pytest.fixture
async def persona_server() -> AsyncIterator[int]:
    """The persona's scripted model server (``engine/models/server.py``) on loopback: its port."""
    runner, port = await start_server("127.0.0.1", 0)
    yield port
    await runner.cleanup()


def _host_address() -> str | None:
    """This machine's address off loopback (no packet sent), if it has one."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("10.255.255.255", 1))
        address = str(probe.getsockname()[0])
        return None if address.startswith("127.") else address
    return None


def script(lines: tuple[str, ...], name: str) -> str:
    """A shell command writing a Python script in ``$HOME/<name>`` (Hermes asks for approval of
    ``python -c``; a hostile model writes the file first). The lines hold no ``'`` and no ``%``."""
    return "printf '" + "\\n".join(lines) + "\\n' > $HOME/" + name


async def shell(adapter: LocalAgentAdapter, commands: dict[str, str]) -> dict[str, str]:
    """Make the agent run each command with its own shell tool, its output (stdout and stderr) into
    ``$HOME/<name>.out``; returns what each wrote, read from the host."""
    line = "; ".join(f"( {command} ) > $HOME/{name}.out 2>&1" for name, command in commands.items())
    answer = await ask(adapter, f"MMB-CALL {SHELL[adapter.name]} {json.dumps({'command': line})}", "escapes")
    home = adapter.agent_dir / "home"
    missing = [name for name in commands if not (home / f"{name}.out").is_file()]
    assert not missing, f"the agent ran no {missing}: {answer}"
    return {name: (home / f"{name}.out").read_text(errors="replace") for name in commands}


async def test_a_hostile_agent_reads_and_reaches_nothing_but_its_own(
    make_tool_adapter: Factory, tool_model: ToolModelServer, persona_server: int, tmp_path: Path
) -> None:
    secret = tmp_path / "secrets" / "root-only.key"
    secret.parent.mkdir()
    secret.write_text("the host's own key")
    os.chmod(secret, 0o600)
    elsewhere = tmp_path / "another-checkout" / "benchmarks" / "prose_seed"
    shutil.copytree(SEED, elsewhere)
    listener = socket.create_server(("127.0.0.1", 0))  # a program of the host, listening on loopback
    port = listener.getsockname()[1]
    address = _host_address() or "192.0.2.1"  # (a documentation address where the host has none)
    adapter = make_tool_adapter(model="tools")
    await adapter.create_session("escapes")
    curl = "curl -sS -m 5 -o /dev/null -w 'HTTP %{http_code}'"
    try:
        seen = await shell(
            adapter,
            {
                "uid": "id -u",
                "shadow": "cat /etc/shadow /etc/gshadow",
                "secret": f"cat {secret}",
                "bench": f"cat {elsewhere}/chapter1.md {elsewhere}/profile.md; ls {elsewhere.parent}",
                "checkout": f"ls {CHECKOUT}/benchmarks {CHECKOUT}/results",
                "homes": "ls /home /work /srv /mnt /var",
                "root": "ls -A /root /root/.cache",
                "persona": f"{curl} http://127.0.0.1:{persona_server}/v1/models",
                "listener": f"{curl} http://127.0.0.1:{port}/",
                "address": f"{curl} http://{address}:{port}/",
                "outside": f"{curl} http://1.1.1.1/",
                "model": f"{curl} {tool_model.base_url}/models",
                "tcp": "cat /proc/net/tcp /proc/net/tcp6",
            },
        )
    finally:
        listener.close()
    if os.geteuid() == 0:
        assert int(seen["uid"]) >= 1_600_000_000, seen["uid"]  # not root: a uid of its own
    for name in ("shadow", "secret", "bench", "checkout"):
        assert "No such file" in seen[name], (name, seen[name])
        assert "the host's own key" not in seen[name] and "❓" not in seen[name]
    assert seen["shadow"].count("No such file") == 2 and seen["bench"].count("No such file") == 3
    told = [line for line in (SEED / "chapter1.md").read_text().splitlines() if len(line) > 20]
    assert not any(line in seen["bench"] for line in told)  # not a line of the chapter
    assert seen["homes"].count("No such file") == 5, seen["homes"]
    assert set(seen["root"].split()) <= {"/root:", "/root/.cache:", ".cache", ".pyenv", "mmb"}, seen[
        "root"
    ]  # installs
    for name in ("persona", "listener", "address", "outside"):  # none answers: nothing there in its network
        assert "HTTP 000" in seen[name] and "Failed to connect" in seen[name], (name, seen[name])
    assert seen["model"].startswith("HTTP ") and "HTTP 000" not in seen["model"], seen["model"]  # answered
    ports = {
        int(line.split()[1].rsplit(":", 1)[1], 16) for line in seen["tcp"].splitlines() if ":" in line[:8]
    }
    assert persona_server not in ports and port not in ports, ports
    assert await ask(adapter, "Hello there.") == "Noted."  # and it works on


async def test_a_fork_bomb_and_a_full_tmp_are_stopped_and_the_agent_works_on(
    make_tool_adapter: Factory,
) -> None:
    adapter = make_tool_adapter(model="tools", agent_limits={"processes": 160, "tmp_mb": 16})
    await adapter.create_session("limits")
    bomb = (
        "import subprocess",
        "started = []",
        "try:",
        '    for _ in range(400): started.append(subprocess.Popen(["sleep", "30"]))',
        'except OSError as exc: print("refused", exc.errno)',
        'print("started", len(started))',
        "for child in started: child.kill()",
        "for child in started: child.wait()",
    )
    seen = await shell(
        adapter,
        {
            "bomb": f"{script(bomb, 'bomb.py')}; python3 $HOME/bomb.py",
            "fill": "head -c 40000000 /dev/zero > /tmp/fill; echo status $?; df -k /tmp",
        },
    )
    assert "refused 11" in seen["bomb"], seen["bomb"]  # EAGAIN: no more processes for its uid
    assert 0 < int(seen["bomb"].split("started ")[1].split()[0]) < 160
    assert "No space left on device" in seen["fill"] and "status 1" in seen["fill"], seen["fill"]
    assert " 16384 " in seen["fill"]  # its /tmp: 16 MB
    assert await ask(adapter, "Hello there.") == "Noted."
    assert "is up" in await adapter.agent_state()
    assert "limits: 160 processes, 8192 MB of memory, 16 MB /tmp" in adapter.setup_lines()[0]


async def test_an_agent_over_its_memory_is_stopped_and_the_error_says_why(
    make_tool_adapter: Factory, adapter_class: type[LocalAgentAdapter]
) -> None:
    limit = MEMORY_LIMIT_MB[adapter_class.name]
    adapter = make_tool_adapter(model="tools", agent_limits={"memory_mb": limit})
    await adapter.create_session("memory")
    hog = (f'held = b"x" * ({limit + 1024} << 20)', "import time", "time.sleep(60)")
    hold = f"{script(hog, 'hog.py')}; python3 $HOME/hog.py"
    with pytest.raises(AdapterError) as stopped:
        await adapter.send_message(f"MMB-CALL {SHELL[adapter.name]} {json.dumps({'command': hold})}")
    reason = str(stopped.value)  # what the run's waiting reason says
    assert "is down" in reason and f"over its limit agent_limits.memory_mb = {limit:,}" in reason, reason
    assert "mmb sandbox: stopped: its " in reason
    with pytest.raises(AdapterError, match="the agent is not running"):
        adapter.require_running()  # the run waits with that reason until the operator revives it
