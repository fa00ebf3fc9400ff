"""The agents' sandbox without running it: the bubblewrap argv is a whitelist of mounts (``adapters/local/sandbox/policy.py``),
the rights the launcher gets, the part of ``/etc`` shown, the folders made above mount points; the sandbox's run
keys (``adapters/local/sandbox/options.py``), checked one line each, and the report's line naming them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from adapters.local.sandbox import policy as sandbox_module
from adapters.local.sandbox.options import SandboxOptions
from adapters.local.sandbox.policy import ETC_SHOWN, Sandbox, etc_mounts, parent_folders, venv_base

ROOT = os.geteuid() == 0


# --- the argv, without running it --------------------------------------------------------------------


def test_the_argv_is_a_whitelist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox_module, "bwrap_executable", lambda: "bwrap")
    agent = tmp_path / "results" / "r" / "agent"
    agent.mkdir(parents=True)
    (tmp_path / "inside").mkdir()
    usr_install = Path("/usr/lib")  # already part of the system: not bound twice
    argv = Sandbox(agent, tmp_path / "support", (tmp_path, tmp_path / "inside", usr_install), tmp_mb=64).argv(
        ["agent", "run"], agent
    )
    pairs = list(zip(argv, argv[1:], argv[2:], strict=False))
    binds = [(a, b, c) for a, b, c in pairs if a in ("--bind", "--ro-bind")]
    assert ("--bind", str(agent), str(agent)) in binds  # the one writable place
    assert [b for b in binds if b[0] == "--bind"] == [("--bind", str(agent), str(agent))]
    assert ("--ro-bind", "/", "/") not in binds and ("--ro-bind", str(tmp_path), str(tmp_path)) in binds
    assert not any(c == str(tmp_path / "inside") or c == "/usr/lib" for _, _, c in binds)  # inside one shown
    assert not any(c in ("/etc/shadow", "/etc/gshadow", "/etc/sudoers") for _, _, c in binds)
    assert ("--ro-bind", str(tmp_path / "support" / "passwd"), "/etc/passwd") in binds
    assert argv[argv.index("/tmp") - 5 : argv.index("/tmp")] == [
        "--size",
        str(64 << 20),
        "--perms",
        "01777",
        "--tmpfs",
    ]
    assert "--unshare-net" in argv and argv[-3:] == ["--", "agent", "run"]
    assert "/run/mmb/launch.py" in argv
    opened = Sandbox(agent, tmp_path / "support", network="open").argv(["agent"], agent)
    assert "--unshare-net" not in opened


def test_the_rights_given_to_the_launcher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox_module, "bwrap_executable", lambda: "bwrap")
    as_root = Sandbox(tmp_path, tmp_path, root=True).argv(["a"], tmp_path)
    added = [as_root[i + 1] for i, arg in enumerate(as_root) if arg == "--cap-add"]
    assert added == ["CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_DAC_READ_SEARCH"]  # no CAP_SYS_ADMIN
    as_user = Sandbox(tmp_path, tmp_path, root=False).argv(["a"], tmp_path)
    assert "--cap-add" not in as_user and "--unshare-user-try" in as_user and "--cap-drop" in as_user


def test_etc_is_shown_by_name_and_links_stay_links(tmp_path: Path) -> None:
    etc = tmp_path / "etc"
    etc.mkdir()
    for name in ("hosts", "shadow", "gshadow", "sudoers", "pip.conf", "npmrc", "gitconfig"):
        (etc / name).write_text(name)
    (etc / "localtime").symlink_to("/usr/share/zoneinfo/Etc/UTC")
    (etc / "resolv.conf").symlink_to(etc / "hosts")  # a link out of the system: its file is bound
    (etc / "ssl").mkdir()
    argv = etc_mounts(etc)
    shown = {argv[i + 2] for i in range(0, len(argv), 3)}
    assert shown == {"/etc/hosts", "/etc/localtime", "/etc/resolv.conf", "/etc/ssl"}
    assert ["--symlink", "/usr/share/zoneinfo/Etc/UTC", "/etc/localtime"] == argv[
        argv.index("--symlink") : argv.index("--symlink") + 3
    ]
    assert ["--ro-bind", str(etc / "hosts"), "/etc/resolv.conf"] in [
        argv[i : i + 3] for i in range(len(argv))
    ]
    assert not {"shadow", "gshadow", "sudoers", "passwd", "group"} & set(ETC_SHOWN)


def test_folders_above_mount_points_are_made_enterable(tmp_path: Path) -> None:
    argv = parent_folders([Path("/root/.cache/agents"), Path("/usr/lib/x"), Path("/tmp/a/b/agent")])
    made = [argv[i + 3] for i in range(0, len(argv), 4)]
    assert made == ["/root", "/root/.cache", "/tmp/a", "/tmp/a/b"]  # not /, /tmp or the system
    assert argv[:4] == ["--perms", "0755", "--dir", "/root"]


def test_a_venvs_python_is_found_for_the_sandbox(tmp_path: Path) -> None:
    (tmp_path / "pyvenv.cfg").write_text("home = /opt/python/3.11/bin\nversion = 3.11.7\n")
    assert venv_base(tmp_path) == Path("/opt/python/3.11")
    assert venv_base(tmp_path / "missing") is None


# --- the run keys ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"agent_network": "lan"}, "agent_network: must be 'model' or 'open', got 'lan'"),
        ({"agent_network": True}, "agent_network: must be 'model' or 'open', got True"),
        (
            {"agent_limits": 64},
            'agent_limits: must be an object such as {"processes": 512, "memory_mb": 8192}, got 64',
        ),
        (
            {"agent_limits": {"procs": 64}},
            "agent_limits: unknown field 'procs' (known: memory_mb, processes, tmp_mb)",
        ),
        (
            {"agent_limits": {"processes": 3}},
            "agent_limits.processes: must be an integer between 16 and 1000000, got 3",
        ),
        (
            {"agent_limits": {"tmp_mb": "1G"}},
            "agent_limits.tmp_mb: must be an integer between 1 and 1000000, got '1G'",
        ),
        (
            {"agent_limits": {"memory_mb": 1.5}},
            "agent_limits.memory_mb: must be an integer between 64 and 10000000, got 1.5",
        ),
        (
            {"agent_sandbox": "none", "agent_network": "open"},
            "agent_network: needs the sandbox, but agent_sandbox is 'none'",
        ),
        (
            {"agent_sandbox": "none", "agent_limits": {}},
            "agent_limits: needs the sandbox, but agent_sandbox is 'none'",
        ),
    ],
)
def test_the_sandbox_keys_are_checked(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as refused:
        SandboxOptions.from_options(options)
    assert str(refused.value) == message


def test_the_keys_have_defaults_and_the_report_names_them() -> None:
    default = SandboxOptions.from_options({})
    assert (default.kind, default.network, dict(default.limits)) == (
        "bwrap",
        "model",
        {"processes": 512, "memory_mb": 8192, "tmp_mb": 512},
    )
    line = SandboxOptions.from_options({"agent_network": "open", "agent_limits": {"tmp_mb": 64}}).describe()
    assert line.startswith("bubblewrap") and "network: open (the host's network)" in line
    assert "limits: 512 processes, 8192 MB of memory, 64 MB /tmp (and /dev/shm)" in line
    assert "network: its model endpoint only" in default.describe()
    who = "a uid of its own, not root" if ROOT else "its user's uid, in a user namespace"
    assert f"runs as {who}" in default.describe()
    assert SandboxOptions.from_options({"agent_sandbox": "none"}).describe().startswith("none")
