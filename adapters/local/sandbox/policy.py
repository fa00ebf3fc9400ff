"""An OS sandbox for the agent processes run on this machine (Hermes, OpenClaw): bubblewrap (``bwrap``).

The seed measures the agents as they ship, their own shell and file tools included; the sandbox is what makes
that safe. Run keys (``adapters/local/sandbox/options.py``): ``agent_sandbox`` ``"bwrap"`` (the default) or
``"none"`` (no sandbox, said in the report); ``agent_network`` ``"model"`` (the default) or ``"open"``;
``agent_limits`` (processes, memory, temp space).

What the agent sees inside (``Sandbox.argv``), a whitelist — what is not named here is not there at all:

- the system read-only: ``/usr`` and the ``/bin``, ``/sbin``, ``/lib*`` beside it, and of ``/etc`` only what
  programs need to run (``ETC_SHOWN``: libraries, certificates, time zone, name resolution, shells), with a
  ``passwd`` and ``group`` of its own (root, nobody and the agent): no ``shadow``, no host accounts;
- read-only, at their own paths: the pinned agent installs (``adapters/local/install.py``; the clock library of
  virtual time among them), the Python they and the launcher run on;
- its run's agent folder (``results/<run>/agent``), the only writable place of the host;
- a fresh ``/dev`` (read-only) and ``/proc``; its ``/tmp`` and ``/dev/shm``, each a tmpfs of ``tmp_mb``;
- the support folder of this start at ``/run/mmb``, read-only: the launcher, its config, the relay's sockets.

So no home folder, no checkout (benchmarks, answer keys, other runs' results), no ``/root``, ``/home``,
``/srv``, ``/mnt``, ``/opt``, ``/var`` or ``/sys``. Also its own mount, pid, IPC, UTS and cgroup namespaces,
its own network namespace (loopback only; ``adapters/local/sandbox/netrelay.py``) unless ``agent_network`` is ``"open"``,
the root folder read-only, and death with its parent (``--die-with-parent``).

Rights: under a root engine bubblewrap starts the launcher (``adapters/local/sandbox/launch.py``) with only the
capabilities it needs to change its identity, and the launcher runs the agent as an unprivileged uid of its own
(``adapters/local/sandbox/box.py``: the agent's folder is given to that uid); under another user the launcher and
the agent are that user, in a user namespace. Either way the agent has no capability at all. The environment is the one the
adapter builds from nothing (``LocalAgentAdapter.process_env``), with ``TMPDIR`` pointed at the private ``/tmp``.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from adapters.base import AdapterError

SANDBOX_KEY = "agent_sandbox"
KINDS = ("bwrap", "none")
DEFAULT_KIND = "bwrap"
HINT = 'run `make agents` (it installs bubblewrap) or set "agent_sandbox": "none" to run the agent unboxed'
CHECKOUT = Path(__file__).resolve().parents[3]  # adapters/local/sandbox/policy.py → the checkout
PROBE_TIMEOUT = 20.0
INSIDE = Path("/run/mmb")  # the support folder, inside
LAUNCHER = "launch.py"
LAUNCH_CONFIG = "launch.json"
HOSTNAME = "mmb-agent"

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# what of /etc a program needs to run; never shadow, gshadow, sudoers, ssh keys, pip/npm/git credentials
ETC_SHOWN = (
    "alternatives",
    "bash.bashrc",
    "ca-certificates",
    "ca-certificates.conf",
    "crypto-policies",
    "debian_version",
    "fonts",
    "gai.conf",
    "host.conf",
    "hosts",
    "inputrc",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "locale.alias",
    "locale.conf",
    "localtime",
    "lsb-release",
    "magic",
    "magic.mime",
    "mime.types",
    "networks",
    "nsswitch.conf",
    "os-release",
    "pki",
    "profile",
    "protocols",
    "python3",
    f"python3.{sys.version_info.minor}",
    "resolv.conf",
    "services",
    "shells",
    "ssl",
    "terminfo",
    "timezone",
)
ACCOUNTS = ("passwd", "group")  # written for the sandbox (``adapters/local/sandbox/box.py``)
# the launcher's capabilities under a root engine, until it drops them: the agent's uid and gid, the bounding
# set emptied, its own files read in the support folder already given to the agent
ROOT_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_DAC_READ_SEARCH")


def engine_is_root() -> bool:
    return os.geteuid() == 0


def bwrap_executable() -> str:
    """The ``bwrap`` on ``PATH``, checked to work here once per process; AdapterError saying how to get it."""
    found = shutil.which("bwrap")
    if found is None:
        raise AdapterError(f"{SANDBOX_KEY}: bubblewrap (`bwrap`) is not installed: {HINT}")
    problem = _probe(found, engine_is_root())
    if problem:
        raise AdapterError(f"{SANDBOX_KEY}: bubblewrap does not work on this machine ({problem}): {HINT}")
    return found


@functools.cache
def _probe(bwrap: str, root: bool) -> str:
    """'' when ``bwrap`` can make a sandbox like ours here, else its first error line (user namespaces off…)."""
    argv = [bwrap, "--ro-bind", "/", "/", "--proc", "/proc", "--size", "1048576", "--tmpfs", "/tmp"]
    argv += ["--unshare-pid", "--unshare-net", *_rights(root), "true"]
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if result.returncode == 0:
        return ""
    lines = (result.stderr or result.stdout).strip().splitlines()
    return lines[0] if lines else f"exit code {result.returncode}"


def _rights(root: bool) -> list[str]:
    """The launcher's rights: under a root engine only the capabilities it needs to become the agent's uid;
    else none, in a user namespace of its own (where one can be made)."""
    if not root:
        return ["--unshare-user-try", "--cap-drop", "ALL"]
    return ["--cap-drop", "ALL", *(arg for cap in ROOT_CAPS for arg in ("--cap-add", cap))]


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


def launcher_python() -> tuple[Path, Path]:
    """The interpreter the launcher runs on (the engine's own, its real file) and the installation it needs."""
    return Path(os.path.realpath(sys.executable)), Path(sys.base_prefix).resolve()


def in_system(path: Path) -> bool:
    """Whether ``path`` is already in the sandbox as part of the system (``/usr``…)."""
    return any(path == Path(root) or Path(root) in path.parents for root in SYSTEM)


def _existing(paths: Iterable[Path]) -> list[Path]:
    """Resolved, existing, without repeats or what a folder before them holds, outermost first."""
    resolved = sorted(
        {path.resolve() for path in paths if path.exists()}, key=lambda p: (len(p.parts), str(p))
    )
    kept: list[Path] = []
    for path in resolved:
        if not in_system(path) and not any(outer in path.parents for outer in kept):
            kept.append(path)
    return kept


def system_mounts() -> list[str]:
    """``/usr`` and its companions read-only; a merged-``/usr`` link stays a link."""
    argv: list[str] = []
    for name in SYSTEM:
        path = Path(name)
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), name]
        elif path.is_dir():
            argv += ["--ro-bind", name, name]
    return argv


def parent_folders(paths: Iterable[Path]) -> list[str]:
    """``--dir`` for the folders above mount points, outermost first: bubblewrap would make them 0700, which
    the agent's own uid could not enter."""
    made: dict[Path, None] = {}
    for path in paths:
        for parent in reversed(path.parents):
            if parent != Path("/") and parent != Path("/tmp") and not in_system(parent):
                made[parent] = None
    return [arg for folder in made for arg in ("--perms", "0755", "--dir", str(folder))]


def etc_mounts(etc: Path = Path("/etc")) -> list[str]:
    """The shown part of ``/etc``: a link into the system stays a link; anything else is bound read-only."""
    argv: list[str] = []
    for name in ETC_SHOWN:
        path = etc / name
        if not path.exists():
            continue  # missing, or a link to nothing
        target = path.resolve()
        if path.is_symlink() and in_system(target):
            argv += ["--symlink", os.readlink(path), f"/etc/{name}"]  # its name is read (the time zone's)
        else:
            argv += ["--ro-bind", str(target), f"/etc/{name}"]
    return argv


@dataclass(frozen=True)
class Sandbox:
    """The bubblewrap sandbox of one agent start: its writable folder, what it may read, its support folder."""

    writable: Path
    support: Path
    readonly: tuple[Path, ...] = ()
    network: str = "model"  # "model": a network namespace of its own; "open": the host's
    tmp_mb: int = 512  # the size of its /tmp, and of its /dev/shm
    root: bool = field(default_factory=engine_is_root)
    # files of the support folder shown read-only at paths of the writable folder (a secret the agent reads
    # where it expects it, while the run folder holds only a placeholder)
    overlays: tuple[tuple[Path, Path], ...] = ()

    def argv(self, command: Sequence[str], cwd: Path) -> list[str]:
        """``bwrap … -- python launch.py launch.json -- command``: ``command`` run in the sandbox, in ``cwd``."""
        python, _ = launcher_python()
        writable, readonly = self.writable.resolve(), _existing(self.readonly)
        tmp = ["--size", str(self.tmp_mb << 20), "--perms", "01777", "--tmpfs"]
        argv = [
            bwrap_executable(),
            *system_mounts(),
            *tmp,
            "/tmp",
        ]  # first: what lies under /tmp is bound on it
        argv += parent_folders([Path("/etc/x"), INSIDE, writable, *readonly])
        argv += etc_mounts()
        for name in ACCOUNTS:
            argv += ["--ro-bind", str(self.support / name), f"/etc/{name}"]
        for path in readonly:
            argv += ["--ro-bind", str(path), str(path)]
        argv += ["--ro-bind", str(self.support), str(INSIDE), "--bind", str(writable), str(writable)]
        for source, target in self.overlays:
            argv += ["--ro-bind", str(source), str(writable / target.relative_to(self.writable))]
        argv += ["--dev", "/dev", *tmp, "/dev/shm", "--remount-ro", "/dev", "--proc", "/proc"]
        argv += [
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--hostname",
            HOSTNAME,
            "--unshare-cgroup-try",
        ]
        if self.network != "open":
            argv.append("--unshare-net")
        argv += [*_rights(self.root), "--remount-ro", "/", "--die-with-parent", "--chdir", str(cwd.resolve())]
        launcher = [str(python), "-I", "-S", str(INSIDE / LAUNCHER), str(INSIDE / LAUNCH_CONFIG)]
        return [*argv, "--", *launcher, "--", *command]

    def env(self, env: dict[str, str]) -> dict[str, str]:
        """The agent's environment inside: its temporary files in the private ``/tmp``."""
        return {**env, "TMPDIR": "/tmp"}


def describe(kind: str, network: str = "model", limits: dict[str, int] | None = None) -> str:
    """The sandbox as the report names it: ``bubblewrap 0.8.0 (…)`` or ``none``."""
    if kind == "none":
        return "none (the agent runs with its user's rights)"
    who = "a uid of its own, not root" if engine_is_root() else "its user's uid, in a user namespace"
    reach = "its model endpoint only" if network == "model" else "open (the host's network)"
    said = ""
    if limits:
        said = (
            f"; limits: {limits['processes']} processes, {limits['memory_mb']} MB of memory, "
            f"{limits['tmp_mb']} MB /tmp (and /dev/shm)"
        )
    return (
        f"{bwrap_version()} (sees the system, its installs and its own folder, writes only there; runs as {who};"
        f" network: {reach}{said})"
    )


def is_sandbox_process(pid: int) -> bool:
    """Whether ``pid`` is bubblewrap itself (the sandbox's keeper, not the agent): a SIGTERM to it would end
    the sandbox at once (``--die-with-parent``), before the agent could save its work."""
    try:
        return Path(f"/proc/{pid}/comm").read_text(encoding="utf-8").strip() == "bwrap"
    except OSError:
        return False
