"""An OS sandbox for the agent processes run on this machine (Hermes, OpenClaw): bubblewrap (``bwrap``).

The seed measures the agents as they ship, their own shell and file tools included; the sandbox is what makes
that safe. Run key ``agent_sandbox``: ``"bwrap"`` (the default) or ``"none"`` (no sandbox, said in the report).

What the agent sees inside (``Sandbox.argv``):

- the system read-only (``--ro-bind / /``), a fresh ``/dev`` and ``/proc``, a private ``/tmp``;
- the run's agent folder (``results/<run>/agent``) as the only writable place of the host;
- hidden (an empty, read-only folder in their place): the user's home, the project checkout, the folder
  holding every run's results (so no other run, and none of this run's files but the agent's own), and the
  engine's working folder;
- shown again, read-only, inside what is hidden: what the agent needs to run — the pinned agent installs
  (``adapters/install.py``; the clock library of virtual time among them), the base Python a venv points at;
- its own mount, pid and IPC namespaces (``--unshare-pid``: the agent sees only its own processes), every
  capability dropped (the engine may run as root: a root with capabilities could remount the system
  writable), and death with its parent (``--die-with-parent``): the whole sandbox goes when the engine does.

The network stays shared: the agent's model endpoint is on loopback. The environment is the one the adapter
already builds from nothing (``LocalAgentAdapter.process_env``), with ``TMPDIR`` pointed at the private
``/tmp``.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from adapters.base import AdapterError

SANDBOX_KEY = "agent_sandbox"
KINDS = ("bwrap", "none")
DEFAULT_KIND = "bwrap"
HINT = 'run `make agents` (it installs bubblewrap) or set "agent_sandbox": "none" to run the agent unboxed'
CHECKOUT = Path(__file__).resolve().parents[1]
PROBE_TIMEOUT = 20.0


def bwrap_executable() -> str:
    """The ``bwrap`` on ``PATH``, checked to work here once per process; AdapterError saying how to get it."""
    found = shutil.which("bwrap")
    if found is None:
        raise AdapterError(f"{SANDBOX_KEY}: bubblewrap (`bwrap`) is not installed: {HINT}")
    problem = _probe(found)
    if problem:
        raise AdapterError(f"{SANDBOX_KEY}: bubblewrap does not work on this machine ({problem}): {HINT}")
    return found


@functools.cache
def _probe(bwrap: str) -> str:
    """'' when ``bwrap`` can make a sandbox like ours here, else its first error line (user namespaces off…)."""
    argv = [bwrap, "--ro-bind", "/", "/", "--proc", "/proc", "--unshare-pid", "--cap-drop", "ALL", "true"]
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if result.returncode == 0:
        return ""
    lines = (result.stderr or result.stdout).strip().splitlines()
    return lines[0] if lines else f"exit code {result.returncode}"


@functools.cache
def bwrap_version() -> str:
    """``bubblewrap 0.8.0``, for the report ('bubblewrap' when it cannot say)."""
    try:
        result = subprocess.run(["bwrap", "--version"], capture_output=True, text=True, timeout=PROBE_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return "bubblewrap"
    return result.stdout.strip() or "bubblewrap"


def venv_base(venv: Path) -> Path | None:
    """The Python installation a venv runs on (``home`` of its ``pyvenv.cfg``, one folder up), if any."""
    try:
        lines = (venv / "pyvenv.cfg").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            return Path(value.strip()).parent
    return None


def _existing(paths: Iterable[Path]) -> list[Path]:
    """Resolved, existing, without repeats, outermost first (a folder's mount before its sub-folders')."""
    resolved = {path.resolve() for path in paths if path.exists()}
    return sorted(resolved, key=lambda path: (len(path.parts), str(path)))


@dataclass(frozen=True)
class Sandbox:
    """The bubblewrap sandbox of one agent: its writable folder, what it may read, what it must not see."""

    writable: Path
    readonly: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()

    @classmethod
    def for_agent(cls, agent_dir: Path, results_root: Path, readonly: Sequence[Path] = ()) -> Sandbox:
        """The sandbox of an agent writing in ``agent_dir``: hides the home, the checkout, ``results_root``
        and the working folder; shows ``readonly`` (its installs) inside them."""
        hidden = (Path.home(), CHECKOUT, results_root, Path.cwd())
        return cls(agent_dir, tuple(readonly), tuple(path for path in hidden if path != Path("/")))

    def argv(self, command: Sequence[str], cwd: Path) -> list[str]:
        """``bwrap … -- command``: ``command`` run in the sandbox, in ``cwd``."""
        writable = self.writable.resolve()
        hidden = [path for path in _existing(self.hidden) if path != Path("/")]
        argv = [
            bwrap_executable(),
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
        ]
        for path in hidden:
            argv += ["--tmpfs", str(path)]
        for path in _existing(self.readonly):
            argv += ["--ro-bind", str(path), str(path)]
        argv += ["--bind", str(writable), str(writable)]
        for path in hidden:  # after the binds inside them: an empty folder nobody can write
            argv += ["--remount-ro", str(path)]
        argv += ["--unshare-pid", "--unshare-ipc", "--cap-drop", "ALL", "--die-with-parent"]
        argv += ["--chdir", str(cwd.resolve()), "--", *command]
        return argv

    def env(self, env: dict[str, str]) -> dict[str, str]:
        """The agent's environment inside: its temporary files in the private ``/tmp``."""
        return {**env, "TMPDIR": "/tmp"}


def describe(kind: str) -> str:
    """The sandbox as the report names it: ``bubblewrap 0.8.0 (…)`` or ``none``."""
    if kind == "none":
        return "none (the agent runs with its user's rights)"
    return f"{bwrap_version()} (writes only in its run's agent folder; home, checkout and other runs hidden)"


def is_sandbox_process(pid: int) -> bool:
    """Whether ``pid`` is bubblewrap itself (the sandbox's keeper, not the agent): a SIGTERM to it would end
    the sandbox at once (``--die-with-parent``), before the agent could save its work."""
    try:
        return Path(f"/proc/{pid}/comm").read_text(encoding="utf-8").strip() == "bwrap"
    except OSError:
        return False
