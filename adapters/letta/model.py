"""Letta Code's model (``LettaModel``): a local agent's ``ModelBackend``, with one difference. Letta looks its model
up in the endpoint's ``GET /v1/models`` before it calls it ("Unknown model" otherwise), and the scripted model
server lists only plain names: a scripted model with options (``scripted/agent?faults=1:hang``, a plan) is served
here under a plain alias (``mmb-scripted-agent-<hash>``), a configured scripted model of the server's own config.
"""

from __future__ import annotations

import hashlib

from adapters.local.agent import SCRIPTED_API_KEY, ModelBackend, is_scripted
from engine.config import Config, ModelSpec


def alias_of(name: str) -> str:
    """A plain model name for the scripted ``name`` with options, the same for the same name."""
    base = name.partition("?")[0].replace("/", "-")
    return f"mmb-{base}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:10]}"


class LettaModel(ModelBackend):
    """The run's model for Letta: as for any local agent, a scripted one with options under a listed alias."""

    def scripted_name(self) -> str | None:
        """The scripted model behind the run's ``model`` (a config entry may name one), or None."""
        if is_scripted(self.name):
            return self.name
        endpoint = self.ctx.model_endpoint(self.name) or {}
        model = endpoint.get("model") or ""
        return model if not endpoint.get("base_url") and model and is_scripted(model) else None

    async def start(self) -> dict[str, str]:
        scripted = self.scripted_name()
        if scripted is None or "?" not in scripted:
            return await super().start()
        alias = alias_of(scripted)
        if self._runner is None:
            from engine.models.server import start_server

            served = Config(models={alias: ModelSpec(model=scripted)})
            self._runner, self._port = await start_server("127.0.0.1", 0, served)
        self.base_url = f"http://127.0.0.1:{self._port}/v1"
        return {"base_url": self.base_url, "model": alias, "api_key": SCRIPTED_API_KEY}
