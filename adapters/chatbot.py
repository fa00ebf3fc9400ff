"""``chatbot``: the control. A model with the whole conversation in its context and no memory management.

``start_new_conversation`` is a no-op, so its context is never cleared. The history lives in
``results/<run>/agent/chatbot.jsonl``; state.json keeps only how many lines are committed.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from adapters.base import AdapterContext, AdapterError, AgentAdapter, AgentMessage, AgentStatus
from engine.models.base import ChatModel, Message, ModelError

SYSTEM = "You are a helpful personal assistant. Be concise and exact with numbers and dates."


class ChatbotAdapter(AgentAdapter):
    name: ClassVar[str] = "chatbot"
    supports_new_conversation: ClassVar[bool] = False
    supports_virtual_time: ClassVar[bool] = True  # every user message is stamped with the virtual time

    def __init__(self, ctx: AdapterContext) -> None:
        super().__init__(ctx)
        options = dict(ctx.options)
        self.model_name = str(options.pop("model", "scripted/recall"))
        self.system = str(options.pop("system_prompt", SYSTEM))
        if options:
            raise ValueError(f"unknown key {sorted(options)[0]!r} for agent chatbot (keys: model, system_prompt)")
        self.model: ChatModel = ctx.make_model(self.model_name)
        self.path = ctx.run_dir / "agent" / "chatbot.jsonl"
        self.history: list[Message] = []
        self.replies: list[AgentMessage] = []
        self.seq = 0
        self.virtual_time = False
        self.thinking = False

    def import_state(self, data: dict[str, Any]) -> None:
        committed = int(data.get("messages", 0))
        self.seq = int(data.get("seq", 0))
        self.virtual_time = bool(data.get("virtual_time", False))
        lines = self.path.read_text(encoding="utf-8").splitlines() if self.path.exists() else []
        self.history = [json.loads(line) for line in lines[:committed]]
        if len(lines) > committed:  # written after the last saved state: replayed on resume
            self._rewrite()

    def export_state(self) -> dict[str, Any]:
        return {"messages": len(self.history), "seq": self.seq, "virtual_time": self.virtual_time}

    def _rewrite(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in self.history), encoding="utf-8")

    def _append(self, message: Message) -> None:
        self.history.append(message)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(message, ensure_ascii=False) + "\n")

    async def create_session(self, name: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)

    async def send_message(self, text: str) -> None:
        if self.virtual_time:
            text = f"[{self.ctx.clock.now():%a %d %b %Y %H:%M}] {text}"
        self.thinking = True
        try:
            completion = await self.model.complete([{"role": "system", "content": self.system}, *self.history, {"role": "user", "content": text}])
        except ModelError as exc:
            raise AdapterError(f"chatbot model {self.model_name!r}: {exc}") from None
        finally:
            self.thinking = False
        reply = (completion.content or "").strip()
        self._append({"role": "user", "content": text})
        self._append({"role": "assistant", "content": reply})
        self.seq += 1
        self.replies.append(AgentMessage(seq=self.seq, text=reply or "(empty reply)", time=self.ctx.clock.iso()))

    async def get_responses(self, after_seq: int) -> list[AgentMessage]:
        return [m for m in self.replies if m.seq > after_seq]

    async def destroy_session(self) -> None:
        self.history, self.replies = [], []
        self.path.unlink(missing_ok=True)

    async def set_virtual_time(self, iso: str) -> None:
        """From now on each user message is stamped; the time itself is the run's shared clock."""
        self.virtual_time = True

    async def get_status(self) -> AgentStatus:
        return AgentStatus(state="thinking" if self.thinking else "sleeping")
