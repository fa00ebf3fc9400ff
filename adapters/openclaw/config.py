"""OpenClaw's config for a run: the adapter's run keys (``OpenClawSettings``), the ``openclaw.json`` they make
(gateway, model provider, compaction, heartbeat, dreaming, boxed host tools), and its writing.

OpenClaw adds its own keys to the file (``meta``, ``agents.entries``) and keeps a last-good copy; a config
rewritten without ``meta`` is taken as clobbered and restored. So the file is rewritten only when a value
really changed, and then merged into what is there (``merge_config``), OpenClaw's additions kept.

The file lies in the agent's folder (OpenClaw writes it too): it is read and written through the folder's
``AgentFolder`` (``adapters/local/files/safe_files.py``), never through a link the agent put in its place.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters.base import AdapterError
from adapters.local.files.safe_files import AgentFolder
from adapters.options import opt_bool, opt_flags, opt_number, opt_str, problem

OPTIONS = {
    "openclaw_context_window",
    "openclaw_compaction",
    "openclaw_keep_recent_tokens",
    "openclaw_memory_flush",
    "openclaw_heartbeat",
    "openclaw_dreaming",
    "openclaw_host_tools",
}
HOST_TOOLS = ("shell", "files", "browser", "web")
# what each host-tool switch denies while it is off (OpenClaw tool ids and groups; deny wins over any allow)
DENIED_WHEN_OFF = {
    # shell, background processes, code execution, and the control-plane tools that run or change things
    # on the host (its own config, updates, plugins, scheduled jobs, paired machines)
    "shell": ["group:runtime", "gateway", "cron", "automations", "plugins", "openclaw", "group:nodes"],
    "browser": ["group:ui"],
    "web": ["group:web"],
}
API_KEY_ENV = "BENCH_LLM_API_KEY"
# whole subtrees of the config this adapter owns: replaced, not merged (a switch turned off leaves nothing)
REPLACED = {("tools",)}
CONFIG_LIMIT = 4 * 1024 * 1024  # bytes of the config read at most


@dataclass(frozen=True)
class OpenClawSettings:
    """The ``openclaw_*`` run keys, checked (``ValueError`` naming the key)."""

    context_window: int
    compaction: bool
    keep_recent: int
    memory_flush: bool
    heartbeat: str
    dreaming: bool
    host_tools: frozenset[str]

    @classmethod
    def from_options(cls, options: dict[str, Any], host_tools: bool = False) -> OpenClawSettings:
        """The settings; ``host_tools``: whether OpenClaw's host tools are on unless the run says otherwise (on
        in the sandbox, as OpenClaw ships; off without one)."""
        context_window = int(opt_number(options, "openclaw_context_window", 128000, 16000, 10**7, True) or 0)
        compaction = opt_bool(options, "openclaw_compaction", True)
        keep_recent = int(opt_number(options, "openclaw_keep_recent_tokens", 20000, 0, 10**7, True) or 0)
        memory_flush = opt_bool(options, "openclaw_memory_flush", True)
        heartbeat = opt_str(options, "openclaw_heartbeat", "0m") or "0m"
        if not re.fullmatch(r"\d+[smh]", heartbeat):
            heartbeat = problem(
                f"openclaw_heartbeat: a duration like '0m' (off) or '30m', got {heartbeat!r}", "0m"
            )
        dreaming = opt_bool(options, "openclaw_dreaming", False)
        tools = opt_flags(options, "openclaw_host_tools", HOST_TOOLS, host_tools)
        return cls(context_window, compaction, keep_recent, memory_flush, heartbeat, dreaming, tools)


def tools_config(host_tools: frozenset[str]) -> dict[str, Any]:
    """The ``tools`` block: host tools off unless ``openclaw_host_tools`` turns them on.

    With ``files`` off the file tools (``read``/``write``/``edit``/``apply_patch``) stay, limited to the
    workspace: the agent's memory (``MEMORY.md``, ``memory/*.md``) lives there.
    """
    deny = [tool for switch, tools in DENIED_WHEN_OFF.items() if switch not in host_tools for tool in tools]
    tools: dict[str, Any] = {
        "deny": deny,
        "fs": {"workspaceOnly": "files" not in host_tools},
        "elevated": {"enabled": False},
    }
    if "shell" not in host_tools:
        tools["exec"] = {"security": "deny", "applyPatch": {"workspaceOnly": True}}
    return tools


def run_config(
    settings: OpenClawSettings, endpoint: dict[str, str], port: int, workspace: Path, log_path: Path
) -> dict[str, Any]:
    """This run's values of the config (OpenClaw adds ``meta`` and ``agents.entries`` itself)."""
    model = endpoint["model"]
    compaction: dict[str, Any] = {
        # ``enabled: false`` stops threshold compaction; OpenClaw still compacts to recover from an
        # overflow (its modes are only "default" and "safeguard")
        "enabled": settings.compaction,
        "mode": "safeguard",
        "keepRecentTokens": settings.keep_recent,
        "memoryFlush": {"enabled": settings.memory_flush},
    }
    return {
        "gateway": {
            "mode": "local",
            "port": port,
            "bind": "loopback",
            "auth": {"mode": "token", "token": "${OPENCLAW_GATEWAY_TOKEN}"},  # the token: env only
            "http": {"endpoints": {"chatCompletions": {"enabled": True}}},
            # no browser UI: it unpacked 54 MB (1,555 files) of assets into every run's folder
            "controlUi": {"enabled": False},
        },
        "models": {
            "mode": "merge",
            "providers": {
                "bench": {
                    "baseUrl": endpoint["base_url"],
                    "api": "openai-completions",
                    "apiKey": "${" + API_KEY_ENV + "}",
                    "models": [
                        {
                            "id": model,
                            "name": model,
                            "contextWindow": settings.context_window,
                            "maxTokens": 4096,
                            "input": ["text"],
                            "reasoning": False,
                            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                        }
                    ],
                }
            },
        },
        "agents": {
            "defaults": {
                "workspace": str(workspace),
                "model": {"primary": f"bench/{model}"},
                "heartbeat": {"every": settings.heartbeat},
                "compaction": compaction,
            }
        },
        "plugins": {"entries": {"memory-core": {"config": {"dreaming": {"enabled": settings.dreaming}}}}},
        "memory": {"search": {"provider": "none"}},
        "logging": {"file": str(log_path)},
        "tools": tools_config(settings.host_tools),
    }


def merge_config(
    current: dict[str, Any], wanted: dict[str, Any], path: tuple[str, ...] = ()
) -> dict[str, Any]:
    """``current`` with ``wanted`` laid over it: objects merged key by key, other values (and the
    ``REPLACED`` subtrees) replaced; keys only ``current`` has (OpenClaw's ``meta``, ``agents.entries``)
    kept."""
    merged = dict(current)
    for key, value in wanted.items():
        here = (*path, key)
        old = merged.get(key)
        if isinstance(value, dict) and isinstance(old, dict) and here not in REPLACED:
            merged[key] = merge_config(old, value, here)
        else:
            merged[key] = value
    return merged


def read_config(folder: AgentFolder, relative: Path) -> dict[str, Any]:
    """The config OpenClaw keeps at ``relative`` in the agent's folder (it writes plain JSON); {} when absent or
    not JSON; an ``UnsafePath`` when a link or a special file stands in its place."""
    text = folder.read_text(relative, CONFIG_LIMIT)
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def write_config(folder: AgentFolder, relative: Path, wanted: dict[str, Any]) -> None:
    """Write the config, or merge ``wanted`` into the existing one when a value changed: a new file (0600)
    renamed over its name, never written through what the agent put there (refused, naming it)."""
    current = read_config(folder, relative)
    merged = merge_config(current, wanted) if current else wanted
    if merged == current:
        return  # unchanged: OpenClaw's file and its last-good copy stay as they are
    folder.write_text(relative, json.dumps(merged, indent=2) + "\n")


def configured_port(folder: AgentFolder, relative: Path) -> int | None:
    """``gateway.port`` of the config (the port of its last start), if any (None when it cannot be read
    safely: the write that follows refuses what is wrong)."""
    try:
        port = (read_config(folder, relative).get("gateway") or {}).get("port")
    except AdapterError:
        return None
    return port if isinstance(port, int) and not isinstance(port, bool) and 0 < port < 65536 else None
