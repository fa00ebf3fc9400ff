"""One agent's sandbox across its starts (``AgentBox``): who the agent is, the support folder of each start, the
network relay, and the agent's folder given to the agent.

- **Who**: when the engine runs as root, the agent runs as a uid (and gid) of its own (``agent_ids``): a number
  in ``1,600,000,000 + [0, 100,000,000)`` from its folder's path (a run keeps it across restarts; two runs
  collide with a chance of one in 10^8), never an existing account's. Its folder (``results/<run>/agent``) is
  given to it before each start (``give_folder``: what the engine wrote there since, never through a link, never
  a file with another name elsewhere), and the offset file of its clock is written for it. What it must read
  from the host (its installs, the Python they run on, a preloaded library) must be readable by all: a start
  says which is not (``unreadable``). When the engine is not root, the agent runs as the engine's user in a user
  namespace: it reads what that user may read, of what the sandbox shows.
- **The support folder** of a start (``/tmp/mmb-sandbox-<engine pid>-…``, ``/run/mmb`` inside, read-only): the
  launcher (``adapters/local/sandbox/launch.py``) and its config, the sandbox's ``passwd`` and ``group``, the relay's
  sockets. Removed when the start is replaced or the adapter closes; a killed engine's are removed by the next
  engine that starts an agent.
"""

from __future__ import annotations

import contextlib
import grp
import hashlib
import json
import os
import pwd
import shutil
import stat
import tempfile
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path

from adapters.base import AdapterError
from adapters.local.process import AgentProcess
from adapters.local.sandbox import launch as sandbox_launch
from adapters.local.sandbox.netrelay import Endpoint, NetRelay
from adapters.local.sandbox.options import SandboxOptions
from adapters.local.sandbox.policy import (
    ACCOUNTS,
    LAUNCH_CONFIG,
    LAUNCHER,
    SANDBOX_KEY,
    Sandbox,
    engine_is_root,
    launcher_python,
)
from adapters.local.sandbox.watch import MemoryWatch
from engine.run.tree_removal import remove_tree_quietly

UID_FIRST = 1_600_000_000
UID_SPAN = 100_000_000
AGENT_NAME = "mmb-agent"
SUPPORT_PREFIX = "mmb-sandbox-"


def _taken(number: int) -> bool:
    """Whether an account or a group of the host already has this id."""
    for lookup in (pwd.getpwuid, grp.getgrgid):
        try:
            lookup(number)
        except KeyError:
            continue
        return True
    return False


def agent_ids(agent_dir: Path) -> tuple[int, int]:
    """The uid and gid of the agent writing in ``agent_dir`` (the same number), when the engine is root."""
    digest = hashlib.sha256(str(agent_dir.resolve()).encode("utf-8")).digest()
    number = UID_FIRST + int.from_bytes(digest[:8], "big") % UID_SPAN
    while _taken(number):
        number += 1
    return number, number


def is_agent_id(number: int) -> bool:
    return UID_FIRST <= number < UID_FIRST + UID_SPAN + 1000


def give_folder(folder: Path, uid: int, gid: int) -> None:
    """Give ``folder`` and what it holds to ``uid``/``gid``: folders, and files with one name only, owned by the
    engine or by another agent id (the folder moved); never through a link (``os.fwalk`` with descriptors, no
    link followed). Called while the agent is stopped, so nothing changes under the walk."""
    engine = os.geteuid()

    def give(name: str, dir_fd: int | None) -> None:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        ours = info.st_uid == engine or (is_agent_id(info.st_uid) and info.st_uid != uid)
        single = stat.S_ISDIR(info.st_mode) or (stat.S_ISREG(info.st_mode) and info.st_nlink == 1)
        if ours and single:
            os.chown(name, uid, gid, dir_fd=dir_fd, follow_symlinks=False)

    give(str(folder), None)
    for _, dirs, files, dir_fd in os.fwalk(folder, follow_symlinks=False):
        for name in (*dirs, *files):
            with contextlib.suppress(FileNotFoundError):
                give(name, dir_fd)


def accounts(owner: tuple[int, int] | None, home: str) -> dict[str, str]:
    """The sandbox's ``/etc/passwd`` and ``/etc/group``: root, nobody, and the agent (the engine's user when the
    engine is not root). No host account is shown."""
    if owner is not None:
        uid, gid, name = owner[0], owner[1], AGENT_NAME
    else:
        uid, gid = os.getuid(), os.getgid()
        try:
            name = pwd.getpwuid(uid).pw_name
        except KeyError:
            name = AGENT_NAME
    users = {
        0: "root:x:0:0:root:/root:/usr/sbin/nologin",
        65534: "nobody:x:65534:65534::/nonexistent:/usr/sbin/nologin",
    }
    users[uid] = f"{name}:x:{uid}:{gid}:agent under test:{home}:/bin/sh"
    groups = {0: "root:x:0:", 65534: "nogroup:x:65534:", gid: f"{name}:x:{gid}:"}
    return {
        "passwd": "".join(line + "\n" for line in users.values()),
        "group": "".join(line + "\n" for line in groups.values()),
    }


def unreadable(paths: Sequence[Path]) -> Path | None:
    """The first of ``paths`` another user cannot read (a folder: read and enter), if any."""
    for path in paths:
        try:
            mode = path.stat().st_mode
        except OSError:
            continue
        wanted = 0o005 if stat.S_ISDIR(mode) else 0o004
        if mode & wanted != wanted:
            return path
    return None


def preloaded(env: dict[str, str]) -> list[Path]:
    """The libraries ``LD_PRELOAD`` names (the virtual clock)."""
    return [Path(item) for item in env.get("LD_PRELOAD", "").replace(":", " ").split() if item]


def sweep_support_folders(base: Path) -> None:
    """Remove the support folders of engines that are gone (a ``kill -9`` leaves its own behind)."""
    for folder in base.glob(f"{SUPPORT_PREFIX}*"):
        pid = folder.name[len(SUPPORT_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not Path(f"/proc/{pid}").exists():
            remove_tree_quietly(folder)


class Launch:
    """One start's support folder and relay; ``close`` removes both (also when garbage collected)."""

    def __init__(self, folder: Path, relay: NetRelay | None) -> None:
        self.folder = folder
        self.relay = relay
        self.watch: MemoryWatch | None = None
        self._removal = weakref.finalize(self, remove_tree_quietly, folder)

    def close(self) -> None:
        if self.watch is not None:
            self.watch.stop()
        if self.relay is not None:
            self.relay.close()
        self._removal()


class AgentBox:
    """The sandbox of one agent (its folder, the run's options): ``wrap`` a command for each start, ``close``."""

    def __init__(self, agent_dir: Path, options: SandboxOptions) -> None:
        self.agent_dir = agent_dir
        self.options = options
        self.owner: tuple[int, int] | None = (
            agent_ids(agent_dir) if engine_is_root() and options.boxed else None
        )
        self.launch: Launch | None = None

    def wrap(
        self,
        command: list[str],
        env: dict[str, str],
        cwd: Path,
        installs: Sequence[Path],
        endpoints: Sequence[str] = (),
        served: Sequence[int] = (),
        secrets: Mapping[Path, str] | None = None,
    ) -> tuple[list[str], dict[str, str]]:
        """``command`` and ``env`` as they run in the sandbox, ready to start: the folder given to the agent,
        the support folder written, the relay listening (``endpoints``: the model's base URLs; ``served``: the
        agent's own server ports) when the network is the model's only. ``secrets``: files of the agent's folder
        (an existing placeholder each) the agent reads with this text, kept in the support folder and shown
        over the placeholder: the text never reaches the run folder. The previous start's support is closed."""
        self.close()
        python, python_base = launcher_python()
        readonly = (*installs, python_base)
        if self.owner is not None and (found := unreadable([*readonly, python, *preloaded(env)])):
            raise AdapterError(
                f"{SANDBOX_KEY}: {found} is not readable by the agent's own user (the engine is root): "
                f"make it readable by all (chmod -R a+rX {found})"
            )
        base = Path(tempfile.gettempdir())
        sweep_support_folders(base)
        folder = Path(tempfile.mkdtemp(prefix=f"{SUPPORT_PREFIX}{os.getpid()}-", dir=base))
        self.launch = Launch(folder, None)
        try:
            relay = self.launch.relay = self._relay(folder, endpoints, served)
            self._write_support(folder, env, relay)
            overlays = self._write_secrets(folder, secrets or {})
            if relay is not None:
                relay.open()
        except BaseException:
            self.close()
            raise
        box = Sandbox(
            self.agent_dir,
            folder,
            tuple(readonly),
            self.options.network,
            self.options.limit("tmp_mb"),
            overlays=overlays,
        )
        return box.argv(command, cwd), {**box.env(env), **(relay.env() if relay else {})}

    def watch(self, process: AgentProcess) -> None:
        """Check the memory of the sandbox ``process`` started (its bubblewrap) against the limit, every second,
        until the sandbox ends or the start is closed (``adapters/local/sandbox/watch.py``)."""
        if self.launch is not None and process.pid is not None:
            limit = self.options.limit("memory_mb")
            self.launch.watch = MemoryWatch(process.pid, limit, process.log_path, process.alive)
            self.launch.watch.start()

    def close(self) -> None:
        """End the current start's relay and memory check, and remove its support folder."""
        launch, self.launch = self.launch, None
        if launch is not None:
            launch.close()

    def _relay(self, folder: Path, endpoints: Sequence[str], served: Sequence[int]) -> NetRelay | None:
        if self.options.network != "model" or not (endpoints or served):
            return None
        try:
            parsed = [Endpoint.of(url) for url in endpoints if url]
        except ValueError as exc:
            raise AdapterError(str(exc)) from None
        return NetRelay(folder, parsed, [port for port in served if port], self.owner)

    def _write_support(self, folder: Path, env: dict[str, str], relay: NetRelay | None) -> None:
        for name, text in accounts(self.owner, env.get("HOME", str(self.agent_dir))).items():
            (folder / name).write_text(text, encoding="utf-8")
        shutil.copyfile(sandbox_launch.__file__, folder / LAUNCHER)
        config = {
            "limits": {"processes": self.options.limit("processes")},
            "identity": self._identity(),
            **(relay.launcher_config() if relay else {}),
        }
        (folder / LAUNCH_CONFIG).write_text(json.dumps(config), encoding="utf-8")
        if self.owner is not None:
            give_folder(self.agent_dir, *self.owner)
            for path in (folder, *(folder / name for name in ACCOUNTS)):
                os.chown(path, *self.owner)  # the agent reads its accounts; the folder is read-only inside

    def _write_secrets(self, folder: Path, secrets: Mapping[Path, str]) -> tuple[tuple[Path, Path], ...]:
        """Each secret's text in a file of the support folder (readable by the agent alone), with where it is
        shown."""
        overlays = []
        for number, (target, text) in enumerate(secrets.items()):
            source = folder / f"secret-{number}"
            fd = os.open(source, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o400)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            if self.owner is not None:
                os.chown(source, *self.owner)
            overlays.append((source, target))
        return tuple(overlays)

    def _identity(self) -> dict[str, int] | None:
        return None if self.owner is None else {"uid": self.owner[0], "gid": self.owner[1]}
