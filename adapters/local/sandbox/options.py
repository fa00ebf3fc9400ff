"""The sandbox's run keys, checked (``adapters/options.py``): ``agent_sandbox``, ``agent_network``,
``agent_limits``.

- ``agent_sandbox``: ``"bwrap"`` (the default) or ``"none"``;
- ``agent_network``: ``"model"`` (the default: its model endpoint and nothing else, ``adapters/local/sandbox/netrelay.py``) or
  ``"open"`` (the host's network, for a run that needs more: say so in the report, which names it);
- ``agent_limits``: ``{"processes": 512, "memory_mb": 8192, "tmp_mb": 512}`` by default, each field optional:
  processes and threads of the agent's uid at once (``RLIMIT_NPROC``), the memory its processes hold in RAM
  together (checked every second: ``adapters/local/sandbox/watch.py``), the size of its ``/tmp`` and of its
  ``/dev/shm`` (RAM-backed tmpfs). The defaults are far above what Hermes or OpenClaw use (about 25 threads,
  1.3 GB resident for OpenClaw's gateway, a few MB of ``/tmp``): a real run never meets them, a runaway agent
  does.

Without a sandbox neither ``agent_network`` nor ``agent_limits`` can hold: given, they are a problem.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from adapters.local.sandbox.policy import DEFAULT_KIND, KINDS, SANDBOX_KEY, describe
from adapters.options import opt_choice, opt_table, problem

NETWORK_KEY = "agent_network"
NETWORKS = ("model", "open")
LIMITS_KEY = "agent_limits"
# field -> (default, lowest, highest)
LIMITS: dict[str, tuple[int, int, int]] = {
    "processes": (512, 16, 1_000_000),
    "memory_mb": (8192, 64, 10_000_000),
    "tmp_mb": (512, 1, 1_000_000),
}
SANDBOX_KEYS = frozenset({SANDBOX_KEY, NETWORK_KEY, LIMITS_KEY})


@dataclass(frozen=True)
class SandboxOptions:
    """The sandbox a run asks for: its kind, its network, its limits."""

    kind: str = DEFAULT_KIND
    network: str = "model"
    limits: tuple[tuple[str, int], ...] = tuple((name, spec[0]) for name, spec in LIMITS.items())

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> SandboxOptions:
        """The run's keys, each problem named (``agent_limits.tmp_mb: must be an integer between …``)."""
        kind = opt_choice(options, SANDBOX_KEY, DEFAULT_KIND, KINDS)
        network = opt_choice(options, NETWORK_KEY, "model", NETWORKS)
        limits = opt_table(options, LIMITS_KEY, LIMITS)
        if kind == "none":
            for key in (NETWORK_KEY, LIMITS_KEY):
                if key in options:
                    problem(f"{key}: needs the sandbox, but {SANDBOX_KEY} is 'none'", None)
        return cls(kind, network, tuple(limits.items()))

    @property
    def boxed(self) -> bool:
        return self.kind != "none"

    def limit(self, name: str) -> int:
        return dict(self.limits)[name]

    def describe(self) -> str:
        """The report's ``Agent sandbox:`` line (``adapters/local/sandbox/policy.py`` ``describe``)."""
        return describe(self.kind, self.network, dict(self.limits))
