"""``chatbot``: the control. A model with the whole conversation in its context and no memory management.

``start_new_conversation`` is a no-op, so its context is never cleared (``supports_new_conversation`` is
False: the persona is told that it still sees the whole chat). The history lives in
``results/<run>/agent/chatbot.jsonl`` (``adapters/history_file.py``); state.json keeps only how many lines are
committed and the reply counter. Options: ``model`` (default ``scripted/recall``), ``system_prompt``. A reply
may take as long as the model's entry allows (``timeout`` × its attempts and the waits between them:
``reply_timeout``).
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from adapters.base import AdapterContext, AdapterError, BaseAdapter
from adapters.history_file import HistoryFile
from adapters.options import check_known, every_problem, opt_str
from engine.models.base import ChatModel, Message, ModelError
from engine.sanitize import valid_text

SYSTEM = "You are a helpful personal assistant. Be concise and exact with numbers and dates."


@runtime_checkable
class _Bounded(Protocol):
    """A model whose calls have a known longest duration (an endpoint's ``timeout`` and ``max_retries``)."""

    @property
    def longest_call(self) -> float: ...


class ChatbotAdapter(BaseAdapter):
    name: ClassVar[str] = "chatbot"
    supports_new_conversation: ClassVar[bool] = False
    checkpointed = True  # a message and its reply join the history together, which the checkpoint keeps
    supports_virtual_time: ClassVar[bool] = True  # every user message is stamped with the virtual time

    def __init__(self, ctx: AdapterContext) -> None:
        super().__init__(ctx)
        options = ctx.options
        with every_problem():  # every bad key named at once
            check_known(options, ("model", "system_prompt"), self.name)
            self.model_name = opt_str(options, "model", "scripted/recall") or "scripted/recall"
            self.system = opt_str(options, "system_prompt", SYSTEM, allow_empty=True) or ""
        self._system_message: Message = {"role": "system", "content": self.system}
        self.model: ChatModel = ctx.make_model(self.model_name)
        # a reply is one model call: the engine waits as long as the model's entry lets that call take
        self.reply_timeout = self.model.longest_call if isinstance(self.model, _Bounded) else None
        self.log = HistoryFile(ctx.run_dir / "agent" / "chatbot.jsonl")
        self.virtual_time = False

    def import_state(self, data: dict[str, Any]) -> None:
        super().import_state(data)  # also reads the ``seq`` (last reply) saved before ``next_seq``
        self.virtual_time = bool(data.get("virtual_time", False))
        self.log.restore(int(data.get("messages", 0)))  # lines written after the state: replayed on resume

    def export_state(self) -> dict[str, Any]:
        return {**super().export_state(), "messages": self.log.lines, "virtual_time": self.virtual_time}

    async def create_session(self, name: str) -> None:
        self.log.path.parent.mkdir(parents=True, exist_ok=True)

    async def send_message(self, text: str) -> None:
        text = valid_text(text)
        if self.virtual_time:
            text = f"[{self.ctx.clock.now():%a %d %b %Y %H:%M}] {text}"
        message: Message = {"role": "user", "content": text}  # joins the history as it is: a model
        messages: list[Message] = [self._system_message, *self.log.messages, message]  # sees the same again
        with self.working():
            try:
                completion = await self.model.complete(messages)
            except ModelError as exc:
                raise AdapterError(f"chatbot model {self.model_name!r}: {exc}") from None
        reply = valid_text(completion.content or "").strip()  # a lone surrogate would break chatbot.jsonl
        self.log.append(message, {"role": "assistant", "content": reply})
        self.record_reply(reply or "(empty reply)")

    async def destroy_session(self) -> None:
        self.log.remove()
        self.replies.clear()

    async def set_virtual_time(self, iso: str) -> None:
        """From now on each user message is stamped; the time itself is the run's shared clock."""
        self.virtual_time = True
