"""The agents' sandbox (``adapters/local/sandbox/policy.py``, ``sandbox_box.py``, ``sandbox_launch.py``) with plain programs in
it: what it sees (a whitelist), who it runs as, what it may write, how it stops; the one-line refusals (no
bubblewrap, an install its uid cannot read). Its argv and run keys without running it:
``tests/test_sandbox_argv.py``; its network: ``tests/test_sandbox_network.py``; its limits:
``tests/test_sandbox_limits.py``; the real agents in it: ``tests/agents/``."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from engine_helpers import scaled

from adapters.base import AdapterError
from adapters.local.install import install_sandbox
from adapters.local.process import AgentProcess
from adapters.local.sandbox import box as sandbox_box
from adapters.local.sandbox import policy as sandbox_module
from adapters.local.sandbox.box import AgentBox, agent_ids, give_folder, is_agent_id
from adapters.local.sandbox.options import SandboxOptions
from adapters.local.sandbox.policy import Sandbox

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux only")
ROOT = os.geteuid() == 0


@pytest.fixture(scope="module", autouse=True)
def bwrap() -> None:
    install_sandbox()


def _layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    """This run's agent folder, another run's folder beside it, and an install in a home of its own."""
    results = tmp_path / "results"
    agent = results / "run-a" / "agent"
    (agent / "home").mkdir(parents=True)
    other = results / "run-b"
    other.mkdir()
    (other / "transcript.jsonl").write_text("another run's secret")
    install = tmp_path / "home" / ".cache" / "agents"
    install.mkdir(parents=True)
    (install / "tool").write_text("the agent's install")
    os.chmod(install / "tool", 0o644)
    for folder in (tmp_path / "home", tmp_path / "home" / ".cache", install):
        os.chmod(folder, 0o755)
    (tmp_path / "home" / "notes").write_text("the user's own")
    return agent, other, install


async def _run(
    box: AgentBox, agent: Path, script: str, installs: list[Path]
) -> subprocess.CompletedProcess[str]:
    argv, env = box.wrap(
        ["sh", "-c", script], {"PATH": "/usr/bin:/bin", "HOME": str(agent / "home")}, agent / "home", installs
    )
    try:
        return await asyncio.to_thread(
            subprocess.run, argv, env=env, capture_output=True, text=True, timeout=scaled(30)
        )
    finally:
        box.close()


def _box(agent: Path, **limits: int) -> AgentBox:
    options = {"agent_limits": limits} if limits else {}
    return AgentBox(agent, SandboxOptions.from_options(options))


# --- what it sees and writes -------------------------------------------------------------------------


async def test_the_agent_sees_only_the_system_its_installs_and_its_folder(tmp_path: Path) -> None:
    agent, other, install = _layout(tmp_path)
    secret = tmp_path / "root-only.key"
    secret.write_text("root's own")
    os.chmod(secret, 0o600)
    checkout = sandbox_module.CHECKOUT
    done = await _run(
        _box(agent),
        agent,
        f"echo kept > $HOME/memory.md; cat {install}/tool; ls {other}; cat {tmp_path}/home/notes; cat {secret}; "
        f"cat /etc/shadow; cat /etc/gshadow; ls /root /home /work /srv /var /opt /sys 2>&1 | sort; "
        f"ls {checkout}/benchmarks; touch /usr/x /etc/x /x; echo users=$(cut -d: -f1 /etc/passwd); "
        "echo; echo cwd=$(pwd) tmp=$TMPDIR host=$(hostname)",
        [install],
    )
    out, err = done.stdout, done.stderr
    assert (agent / "home" / "memory.md").read_text() == "kept\n"  # its own folder: writable
    assert "the agent's install" in out  # its installs: readable
    for hidden in (
        other,
        tmp_path / "home" / "notes",
        secret,
        checkout / "benchmarks",
        "/etc/shadow",
        "/etc/gshadow",
    ):
        assert f"{hidden}: No such file" in err or f"'{hidden}': No such file" in err, (hidden, err)
    for absent in ("/home", "/work", "/srv", "/var", "/opt", "/sys"):
        assert f"cannot access '{absent}': No such file" in out + err, absent
    assert err.count("Read-only file system") == 3  # the system, /etc and the root: nothing to write
    users = (
        next(line for line in out.splitlines() if line.startswith("users=")).removeprefix("users=").split()
    )
    assert set(users) <= {"root", "nobody", "mmb-agent", *_own_name()}, users  # no host account listed
    assert f"cwd={agent / 'home'} tmp=/tmp host=mmb-agent" in out


def _own_name() -> list[str]:
    import pwd

    return [pwd.getpwuid(os.getuid()).pw_name]


@pytest.mark.skipif(not ROOT, reason="the agent's own uid: a root engine")
async def test_under_a_root_engine_the_agent_runs_as_a_uid_of_its_own_without_capabilities(
    tmp_path: Path,
) -> None:
    agent, _, install = _layout(tmp_path)
    (agent / "home" / "config.yaml").write_text("written by the engine")  # root's, 0644 here, 0600 in a run
    outside = tmp_path / "host-file"
    outside.write_text("a host file")
    os.chmod(outside, 0o600)
    os.symlink(outside, agent / "home" / "link")  # planted by an earlier agent: never followed
    os.link(outside, agent / "home" / "hardlink")  # another name of a host file: never given away
    box = _box(agent)
    uid, gid = box.owner or (0, 0)
    done = await _run(
        box,
        agent,
        "id -u; id -g; id -G; grep -E '^(CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs)' /proc/self/status; "
        "cat $HOME/config.yaml; cat $HOME/hardlink; cat /proc/1/environ",
        [install],
    )
    lines = done.stdout.splitlines()
    assert lines[:3] == [str(uid), str(gid), str(gid)] and is_agent_id(uid) and uid != 0
    caps = {line.split(":")[0]: line.split()[-1] for line in lines[3:8]}
    assert caps == {
        "CapPrm": "0000000000000000",
        "CapEff": "0000000000000000",
        "CapBnd": "0000000000000000",
        "CapAmb": "0000000000000000",
        "NoNewPrivs": "1",
    }
    assert "written by the engine" in done.stdout  # the folder was given to it before the start
    assert (
        "hardlink: Permission denied" in done.stderr and "/proc/1/environ: Permission denied" in done.stderr
    )
    assert outside.stat().st_uid == os.geteuid()  # neither the link nor the hard link gave the host file away
    assert (agent / "home").stat().st_uid == uid and agent.stat().st_uid == uid


def test_the_agents_uid_is_stable_unused_and_in_its_range(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = agent_ids(tmp_path / "a" / "agent")
    assert first == agent_ids(tmp_path / "a" / "agent") and first[0] == first[1] and is_agent_id(first[0])
    assert agent_ids(tmp_path / "b" / "agent") != first
    taken = {first[0], first[0] + 1}
    monkeypatch.setattr(sandbox_box, "_taken", lambda number: number in taken)
    assert agent_ids(tmp_path / "a" / "agent") == (
        first[0] + 2,
        first[0] + 2,
    )  # an existing account's is skipped


@pytest.mark.skipif(not ROOT, reason="chown needs root")
def test_the_folder_is_given_without_following_a_link(tmp_path: Path) -> None:
    folder = tmp_path / "agent"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "file").write_text("x")
    host = tmp_path / "host"
    host.mkdir()
    (host / "file").write_text("host")
    os.symlink(host, folder / "sub" / "to-host")
    os.link(host / "file", folder / "twice")
    uid = agent_ids(folder)[0]
    give_folder(folder, uid, uid)
    assert {
        path.stat(follow_symlinks=False).st_uid for path in (folder, folder / "sub", folder / "sub" / "file")
    } == {uid}
    assert (host.stat().st_uid, (host / "file").stat().st_uid) == (0, 0)
    assert (folder / "sub" / "to-host").lstat().st_uid == 0  # the link itself stays the engine's


# --- how it stops ------------------------------------------------------------------------------------


async def test_a_stop_lets_the_agent_save_before_the_sandbox_goes(tmp_path: Path) -> None:
    agent, _, install = _layout(tmp_path)
    box = _box(agent)
    saver = (
        "import signal, sys, time\n"
        "def stop(*_):\n"
        f"    time.sleep(0.3); open({str(agent / 'saved')!r}, 'w').write('saved'); sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, stop)\n"
        f"open({str(agent / 'ready')!r}, 'w').close()\n"
        "while True: time.sleep(0.05)\n"
    )
    python = os.path.realpath(sys.executable)  # the interpreter itself: the checkout is not in the box
    process = AgentProcess("saver", tmp_path / "adapter" / "process.log")
    argv, env = box.wrap([python, "-c", saver], {"PATH": os.defpath}, agent, [install])
    process.start(argv, env, agent)
    try:
        deadline = asyncio.get_running_loop().time() + scaled(20)
        while not (agent / "ready").exists():
            assert asyncio.get_running_loop().time() < deadline, process.describe_exit()
            await asyncio.sleep(0.05)
        await process.stop(grace=scaled(5))
    finally:
        box.close()
    assert (
        agent / "saved"
    ).read_text() == "saved"  # SIGTERM reached the agent, not bubblewrap or the launcher
    assert not process.alive() and process.exit_code() == 0  # the launcher exits as the agent did


async def test_the_support_folder_goes_with_the_start_and_a_dead_engines_is_swept(tmp_path: Path) -> None:
    agent, _, install = _layout(tmp_path)
    base = Path(sandbox_box.tempfile.gettempdir())
    stale = base / f"{sandbox_box.SUPPORT_PREFIX}999999999-leftover"  # no such pid
    stale.mkdir()
    box = _box(agent)
    box.wrap(["true"], {"PATH": os.defpath}, agent, [install])
    assert box.launch is not None
    folder = box.launch.folder
    assert folder.is_dir() and not stale.exists()
    assert {path.name for path in folder.iterdir()} == {"launch.py", "launch.json", "passwd", "group"}
    box.close()
    assert not folder.exists()


def test_without_bubblewrap_a_run_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox_module.shutil, "which", lambda name: None)
    agent, _, _ = _layout(tmp_path)
    with pytest.raises(AdapterError) as refused:
        Sandbox(agent, tmp_path).argv(["true"], agent)
    message = str(refused.value)
    assert "\n" not in message and message.startswith("agent_sandbox: bubblewrap (`bwrap`) is not installed")
    assert "make agents" in message and '"agent_sandbox": "none"' in message


@pytest.mark.skipif(not ROOT, reason="the agent's own uid: a root engine")
def test_an_install_the_agents_uid_cannot_read_is_named(tmp_path: Path) -> None:
    agent, _, install = _layout(tmp_path)
    os.chmod(install, 0o700)
    with pytest.raises(AdapterError) as refused:
        _box(agent).wrap(["true"], {"PATH": os.defpath}, agent, [install])
    message = str(refused.value)
    assert (
        "\n" not in message and f"agent_sandbox: {install} is not readable by the agent's own user" in message
    )
    assert f"chmod -R a+rX {install}" in message
