"""``mybot``: my agent behind ``POST {base_url}/chat`` ({"session", "message"} -> {"reply"})."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from adapters.base import AdapterContext, AdapterError, BaseAdapter
from adapters.options import check_known, opt_str, require


class MyBotAdapter(BaseAdapter):
    name = "mybot"
    supports_new_conversation = True

    def __init__(self, ctx: AdapterContext) -> None:
        super().__init__(ctx)
        check_known(ctx.options, {"base_url", "api_key_env"}, self.name)
        self.base_url = require(opt_str(ctx.options, "base_url", None), "base_url", self.name)
        self.key_env = opt_str(ctx.options, "api_key_env", "MYBOT_KEY") or "MYBOT_KEY"
        self.session = uuid.uuid4().hex

    async def create_session(self, name: str) -> None:
        self.env_key(self.key_env)  # a missing key stops the run at its start

    async def send_message(self, text: str) -> None:
        headers = {"Authorization": f"Bearer {self.env_key(self.key_env)}"}
        with self.working():  # get_status says "thinking" meanwhile
            try:
                async with httpx.AsyncClient(timeout=300) as client:
                    response = await client.post(
                        f"{self.base_url}/chat",
                        headers=headers,
                        json={"session": self.session, "message": text},
                    )
            except httpx.HTTPError as exc:
                raise AdapterError(f"mybot: request failed: {exc!r}") from None
        self.record_reply(self.read_chat_reply(response, "reply"))

    async def start_new_conversation(self) -> None:
        self.session = uuid.uuid4().hex

    async def destroy_session(self) -> None:
        await self.start_new_conversation()  # its long-term memory is out of reach from here

    def export_state(self) -> dict[str, Any]:
        return {**super().export_state(), "session": self.session}

    def import_state(self, data: dict[str, Any]) -> None:
        super().import_state(data)
        self.session = str(data.get("session", self.session))
