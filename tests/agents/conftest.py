"""Fixtures of the real-agent integration tests, found by name (never imported).

A test module names its adapter with an ``adapter_class`` fixture; then

- ``make_adapter``: ``factory(**options) -> adapter`` on the scripted agent model (run id ``<name>-test``);
- ``tool_model``: a ``ToolModelServer`` (``tool_model.py``) that can force any tool call;
- ``make_tool_adapter``: the same factory on the ``tool_model`` (run id ``<name>-tools``, model ``tools``).

Every adapter made is closed and its process gone after the test (``agent_helpers.adapter_factory``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from agent_helpers import adapter_factory
from tool_model import ToolModelServer

from adapters.local.agent import LocalAgentAdapter
from adapters.local.install import install_sandbox

Factory = Callable[..., LocalAgentAdapter]


@pytest.fixture(scope="session", autouse=True)
def sandbox_installed() -> None:
    """bubblewrap, which every agent runs in by default (``adapters/local/sandbox/policy.py``), installed on first use."""
    install_sandbox()


@pytest.fixture
async def make_adapter(tmp_path: Path, adapter_class: type[LocalAgentAdapter]) -> AsyncIterator[Factory]:
    """``factory(**options) -> adapter`` of the module's ``adapter_class``, on the scripted agent model."""
    async for factory in adapter_factory(adapter_class, f"{adapter_class.name}-test", tmp_path):
        yield factory


@pytest.fixture
async def tool_model() -> AsyncIterator[ToolModelServer]:
    """A model server that forces any tool call (``MMB-CALL``); keeps the tools offered and the results."""
    server = ToolModelServer()
    server.base_url = await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def make_tool_adapter(
    tmp_path: Path, tool_model: ToolModelServer, adapter_class: type[LocalAgentAdapter]
) -> AsyncIterator[Factory]:
    """``factory(**options) -> adapter`` with the ``tool_model`` as the config's model ``tools``."""
    endpoints = {"tools": {"base_url": tool_model.base_url, "model": "tools", "api_key": "k"}}
    async for factory in adapter_factory(adapter_class, f"{adapter_class.name}-tools", tmp_path, endpoints):
        yield factory
