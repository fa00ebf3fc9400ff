"""A hostile agent against the engine that runs it (issue 32, items 1, 2 and 5), on both real agents: its model
(``tool_model``'s ``MMB-CALL``) drives the agent's own shell tool, inside its sandbox, to plant links in its
folder where the engine reads, writes or copies, to kill its own gateway so the engine revives it, and to fill
its folder. Each escape must fail with the host unchanged — a canary file outside that stays byte-identical,
host folders where nothing appears, a root-only file whose contents never reach the results — and the adapter
must work on, or refuse with an error naming the file (the run's waiting reason).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from agent_helpers import ask, scaled, until

from adapters.base import AdapterError
from adapters.hermes.adapter import HermesAdapter
from adapters.local.agent import LocalAgentAdapter
from adapters.local.files.safe_files import UnsafePath
from adapters.local.files.safe_tree import folder_usage
from adapters.local.install import install_hermes, install_openclaw
from adapters.openclaw.adapter import OpenClawAdapter
from adapters.openclaw.transcript import TRANSCRIPT_DB

pytestmark = pytest.mark.agents

Factory = Callable[..., LocalAgentAdapter]
CANARY = "host file: must stay byte-identical\n"
SECRET = "root-only-secret-91b7e4"
SHELL = {"hermes": "terminal", "openclaw": "exec"}
# the files the adapter writes for its agent, in the order it writes them
CONFIGS = {"hermes": ["home/.env", "home/config.yaml"], "openclaw": ["home/openclaw.json"]}
# the logs and databases the engine reads while the agent runs
READ_WHILE_RUNNING = {
    "hermes": ["home/logs/agent.log"],
    "openclaw": ["home/openclaw.log", f"home/{TRANSCRIPT_DB}"],
}
# the memory the adapter snapshots: (a file, a folder of more)
MEMORY = {
    "hermes": ("home/memories/MEMORY.md", "home/memories"),
    "openclaw": ("home/workspace/MEMORY.md", "home/workspace/memory"),
}
# the gateway as the agent's shell finds it: its topmost ancestor of its own user below the sandbox's init
KILL_GATEWAY = (
    "me=$(id -u); p=$$; while :; do pp=$(awk '{print $4}' /proc/$p/stat); [ \"$pp\" -le 1 ] && break; "
    '[ "$(awk \'/^Uid:/{print $2}\' /proc/$pp/status)" = "$me" ] || break; p=$pp; done; kill -9 $p'
)


@pytest.fixture(params=["hermes", "openclaw"])
def adapter_class(request: pytest.FixtureRequest) -> type[LocalAgentAdapter]:
    """Both agents, for ``make_tool_adapter`` (``conftest.py``)."""
    if request.param == "hermes":
        install_hermes()
        return HermesAdapter
    install_openclaw()
    return OpenClawAdapter


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """Host files the agent aims at, outside its sandbox: a canary, a root-only secret, a folder."""
    outside = tmp_path / "host"
    (outside / "dir").mkdir(parents=True)
    (outside / "canary.txt").write_text(CANARY)
    (outside / "secret.txt").write_text(SECRET)
    (outside / "secret.txt").chmod(0o600)
    (outside / "dir" / "secret.md").write_text(SECRET)
    return outside


def host_unchanged(host: Path, results: Path) -> None:
    """The canary as it was, nothing new among the host files, the secret nowhere in the results."""
    assert (host / "canary.txt").read_text() == CANARY
    assert sorted(str(p.relative_to(host)) for p in host.rglob("*")) == [
        "canary.txt",
        "dir",
        "dir/secret.md",
        "secret.txt",
    ]
    for path in results.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert SECRET not in path.read_text(errors="replace"), path


async def shell(adapter: LocalAgentAdapter, *commands: str) -> None:
    """The agent runs ``commands`` with its own shell tool, in a turn that completes (its last command leaves a
    mark in its folder: OpenClaw at times answers a tool's result with a reply of its own)."""
    mark = adapter.agent_dir / f".ran-{secrets.token_hex(4)}"
    call = {"command": "; ".join([*commands, f"touch {mark}"])}
    await ask(adapter, f"MMB-CALL {SHELL[adapter.name]} {json.dumps(call)}")
    assert mark.exists(), f"the agent's shell did not run {commands}"


async def kill_own_gateway(adapter: LocalAgentAdapter, *first: str) -> None:
    """The agent runs ``first`` then kills its own gateway with its shell tool, in one turn (a planted config
    may fail the next one): the turn fails as a crash does."""
    call = {"command": "; ".join([*first, KILL_GATEWAY])}
    with pytest.raises(AdapterError):
        await adapter.send_message(f"MMB-CALL {SHELL[adapter.name]} {json.dumps(call)}")
    await until(lambda: not adapter.process.alive(), 10, "the sandbox gone with the gateway")


async def ask_revived(adapter: LocalAgentAdapter, text: str) -> str:
    """``ask`` of an agent just revived after a crash, tried again a few times as a run does: OpenClaw first
    recovers the turn the crash cut (``Session … changed while starting work. Retry.``, HTTP 500)."""
    for _ in range(4):
        try:
            return await ask(adapter, text)
        except AdapterError as exc:
            if "HTTP 500" not in str(exc):
                raise
            await asyncio.sleep(scaled(2))
    return await ask(adapter, text)


def ln(target: Path | str, at: Path) -> str:
    return f"ln -sfn {shlex.quote(str(target))} {shlex.quote(str(at))}"


async def test_links_where_the_engine_kept_its_own_files_are_never_followed_and_the_agent_comes_back(
    make_tool_adapter: Factory, host: Path
) -> None:
    # issue 32 item 1: process.log, the pid record and its temp file, the clock's offset file: links to host
    # files, a forged record naming pid 1; the gateway killed; the engine revives it
    adapter = make_tool_adapter(model="tools", virtual_time=True)
    await adapter.create_session("planted")
    agent = adapter.agent_dir
    forged = json.dumps({"pid": 1, "pgid": 1, "cmdline": "/sbin/init", "cwd": "/"})
    await shell(
        adapter,
        ln(host / "canary.txt", agent / "process.log"),
        ln(host / "created-by-the-log", agent / "process.log.1"),
        ln(host / "created-by-the-pid-record", agent / ".agent.pid.tmp"),
        f"echo {shlex.quote(forged)} > {agent}/agent.pid",
    )
    await kill_own_gateway(adapter, ln(host / "canary.txt", agent / "faketime.rc"))  # its own clock, last
    await adapter.close()
    await adapter.create_session("planted")  # the revive: its log and pid file are the engine's own
    await adapter.set_virtual_time("2031-03-14T09:30:00")
    assert await ask_revived(adapter, "Hello there.") == "Noted."
    log = adapter.process.log_path
    assert log.parent == adapter.ctx.run_dir / "adapter" and not log.is_symlink() and log.stat().st_size > 0
    assert (agent / "process.log").is_symlink()  # left as the agent made it: nothing of the engine's is there
    host_unchanged(host, adapter.ctx.run_dir)


async def test_a_link_in_place_of_a_config_the_adapter_writes_is_refused_and_the_revive_names_it(
    make_tool_adapter: Factory, host: Path
) -> None:
    # issue 32 item 1: the agent's .env / config replaced by links to a host file and to new host paths (and the
    # temp name an earlier version wrote through), then its gateway killed
    adapter = make_tool_adapter(model="tools")
    await adapter.create_session("planted")
    agent = adapter.agent_dir
    configs = CONFIGS[adapter.name]
    targets = [host / "canary.txt", *(host / f"created-{n}" for n in range(1, len(configs)))]
    plants = [ln(target, agent / config) for target, config in zip(targets, configs, strict=True)]
    await kill_own_gateway(
        adapter, *plants, ln(host / "created-tmp", agent / "home" / ".openclaw.json.mmb-tmp")
    )
    await adapter.close()
    with pytest.raises(UnsafePath) as refused:
        await adapter.create_session("planted")
    assert str(refused.value).startswith(f"refused {agent / configs[0]}: a symbolic link"), refused.value
    with pytest.raises(AdapterError, match=rf"the agent is not running: not started again: refused {agent}"):
        await adapter.get_status()  # what every request says, so the run waits with it as its reason
    host_unchanged(host, adapter.ctx.run_dir)


async def test_links_in_the_memory_folder_never_bring_a_host_file_into_the_results(
    make_tool_adapter: Factory, host: Path
) -> None:
    # issue 32 item 2: the memory file and more memory files as links to a root-only host file, a link to a
    # host folder, a FIFO; then the memory folder itself a link to a host folder
    adapter = make_tool_adapter(model="tools")
    await adapter.create_session("memory")
    agent = adapter.agent_dir
    memory_file, memory_dir = MEMORY[adapter.name]
    await shell(
        adapter,
        f"mkdir -p {agent / memory_dir}",
        ln(host / "secret.txt", agent / memory_file),
        ln(host / "secret.txt", agent / memory_dir / "2026-01-01.md"),
        ln(host / "dir", agent / memory_dir / "folder.md"),
        f"mkfifo {agent / memory_dir / 'pipe.md'}",
    )
    memory = adapter.memory_files()  # what the run's memory history reads after every message
    assert memory is not None and not any(SECRET.encode() in text for text in memory.values()), memory
    assert not {"2026-01-01.md", "memory/2026-01-01.md", "folder.md", "pipe.md"} & set(memory), memory
    snapshot = adapter.snapshot_memory("planted")
    assert snapshot is not None
    note = (snapshot / "skipped.txt").read_text()
    assert f"{agent / memory_file}: a symbolic link" in note and "pipe.md: a FIFO" in note, note
    assert f"{agent / memory_dir / 'folder.md'}: a symbolic link" in note, note
    await shell(
        adapter, f"mv {agent / memory_dir} {agent / memory_dir}.away", ln(host / "dir", agent / memory_dir)
    )
    snapshot = adapter.snapshot_memory("planted again")
    assert (
        snapshot is not None
        and f"refused {agent / memory_dir}: a symbolic link" in (snapshot / "skipped.txt").read_text()
    )
    assert await ask(adapter, "Hello there.") == "Noted."  # the adapter works on
    host_unchanged(host, adapter.ctx.run_dir)


async def test_a_link_in_place_of_a_file_the_engine_reads_while_the_agent_runs_is_refused(
    make_tool_adapter: Factory, host: Path
) -> None:
    # its log (and OpenClaw's transcript database): the engine reads them on every status; a link to a
    # root-only host file there is refused, naming it, and nothing of the host file is read into the results
    adapter = make_tool_adapter(model="tools")
    await adapter.create_session("logs")
    agent = adapter.agent_dir
    for read in READ_WHILE_RUNNING[adapter.name]:
        await shell(
            adapter, f"mv {agent / read} {agent / read}.away || true", ln(host / "secret.txt", agent / read)
        )
        with pytest.raises(UnsafePath, match=rf"^refused {agent / read}: a symbolic link"):
            await adapter.get_status()
        (
            agent / read
        ).unlink()  # the operator puts it back (the agent cannot: OpenClaw fails without its database)
        if (agent / f"{read}.away").exists():
            (agent / f"{read}.away").rename(agent / read)
    await adapter.get_status()  # put back: read again
    host_unchanged(host, adapter.ctx.run_dir)


async def test_an_agent_that_fills_its_folder_is_stopped_at_its_next_message_naming_the_size(
    make_tool_adapter: Factory, host: Path
) -> None:
    # issue 32 item 5: a folder past ``agent_disk_mb`` (here its size once started plus 8 MB; 2048 MB by
    # default: the run key's value is what the adapter holds, set here once the started size is known)
    adapter = make_tool_adapter(model="tools", agent_disk_mb=2048)
    await adapter.create_session("size")
    adapter.disk_limit_mb = folder_usage(adapter.agent_dir).bytes // 2**20 + 8
    big = adapter.agent_dir / "home" / "big.bin"
    await shell(adapter, f"head -c {12 * 2**20} /dev/urandom > {big}")
    expected = (
        rf"the agent's folder {adapter.agent_dir} holds [\d,.]+ MB in [\d,]+ entries, over agent_disk_mb"
    )
    with pytest.raises(AdapterError, match=expected):
        await adapter.send_message("Hello there.")
    await adapter.close()
    with pytest.raises(AdapterError, match=expected):
        await adapter.create_session("size")  # the revive refuses too: the run waits
    big.unlink()  # the operator frees room and resumes
    await adapter.create_session("size")
    assert await ask_revived(adapter, "Hello there.") == "Noted."
    host_unchanged(host, adapter.ctx.run_dir)
