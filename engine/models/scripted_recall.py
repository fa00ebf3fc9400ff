"""``scripted/recall``: a deterministic agent-side baseline that "remembers" by lexical overlap.

It measures nothing about real agents. It answers the last user message from the earlier user messages:
a statement gets "Noted."; a question gets the earlier user sentence sharing the most content words, quoted
verbatim; a request to search memory re-asks the previous question. System messages (the time, ...) and
assistant turns are ignored. Each message is read once: a history that continues one answered before is
read from where that one ended (``Conversation``, ``RecallMemory``).
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_left
from collections import Counter
from functools import lru_cache
from typing import Any

from engine.models.base import Completion, Message, ToolSchema, Usage
from engine.models.tokens import TokenTally, common_prefix, count_text

NAME = "scripted/recall"
ACKNOWLEDGEMENT = "Noted."
DONT_KNOW = "I don't know — you didn't tell me that."
TOLD_PREFIX = "You told me: "

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")
_LEADING_TAG = re.compile(r"^\s*\[[^\]\n]{0,80}\]\s*")  # "[Tue 2026-03-10 10:00] ..." stamps from agents
_SEARCH_REQUEST = re.compile(
    r"\b(search|check (?:your|the) (?:notes|memory|history)|look back|look it up|look through|"
    r"go back through|scroll back)\b"
)
_STOPWORDS = frozenset(
    """
    a about above after again all also am an and any anything are aren't as at be because been before being
    below between both but by can can't could couldn't did didn't do does doesn't doing don't down during each
    else ever few for from further get got had hadn't has hasn't have haven't having he he'd he's her here
    here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself
    just know let let's like me mention mentioned more most much my myself no nor not now of off on once only
    or other ought our ours ourselves out over own please remember remind said same say she she'd she's
    should shouldn't so some such tell than that that's the their theirs them themselves then there
    there's these they they'd they'll they're they've this those through to told too under until up us very
    was wasn't we we'd we'll we're we've were weren't what what's when when's where where's which while who
    who's whom why why's will with won't would wouldn't yes yet you you'd you'll you're you've your yours
    yourself yourselves again okay ok oh hey hi hello thanks thank
    """.split()
)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def _stem(word: str) -> str:
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


@lru_cache(maxsize=65536)
def content_words(text: str) -> frozenset[str]:
    """Lowercased word tokens minus stopwords, crudely de-pluralised; numbers are kept."""
    return frozenset(_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOPWORDS)


_REQUEST = re.compile(r"^\s*(?:list|name|tell me|remind me|give me|summari[sz]e|recap)\b", re.IGNORECASE)


def _is_question(text: str) -> bool:
    """A question, or a request for information phrased as an imperative ("List my rides.")."""
    return "?" in text or bool(_REQUEST.match(text))


class Conversation(TokenTally):
    """One conversation as the baseline reads it, brought up to date message by message.

    Its user texts, their statements (sentences that are not questions) and an index from each content word
    to the statements holding it grow with each new message (a ``TokenTally`` that also counts the tokens),
    so an answer costs the statements sharing a word with the question, not a reread of the history.
    """

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []  # user texts, tag and spaces stripped, empty ones left out
        self._text_at: list[int] = []  # the message index of each text
        self._questions: list[int] = []  # indexes of the texts that are questions
        self._first_statement: list[int] = []  # per text: how many statements the texts before it hold
        self._statements: list[str] = []
        self._words: list[frozenset[str]] = []  # the content words of each statement
        self._holding: dict[str, list[int]] = {}  # content word -> the statements holding it, in order

    def _added(self, message: Message) -> None:
        index = len(self.messages)
        super()._added(message)
        if message.get("role") != "user":
            return
        text = _LEADING_TAG.sub("", _text(message.get("content"))).strip()
        if not text:
            return
        if _is_question(text):
            self._questions.append(len(self.texts))
        self._first_statement.append(len(self._statements))
        self._text_at.append(index)
        self.texts.append(text)
        for sentence in _SENTENCE_END.split(text):
            sentence = sentence.strip()
            if sentence and not _is_question(sentence):
                words = content_words(sentence)
                for word in words:
                    self._holding.setdefault(word, []).append(len(self._statements))
                self._statements.append(sentence)
                self._words.append(words)

    def _cut(self, kept: int) -> None:
        super()._cut(kept)
        texts = bisect_left(self._text_at, kept)
        statements = self._first_statement[texts] if texts < len(self.texts) else len(self._statements)
        for words in self._words[statements:]:
            for word in words:
                holding = self._holding[word]
                holding.pop()
                if not holding:
                    del self._holding[word]
        del self._statements[statements:], self._words[statements:]
        del self.texts[texts:], self._text_at[texts:], self._first_statement[texts:]
        del self._questions[bisect_left(self._questions, texts) :]

    def best_statement(self, question: str, before_text: int) -> str | None:
        """The statement of the texts before ``before_text`` sharing the most content words with
        ``question`` (the latest wins ties)."""
        wanted = content_words(question)
        limit = self._first_statement[before_text] if before_text < len(self.texts) else len(self._statements)
        found = [
            (holding, bisect_left(holding, limit)) for word in wanted if (holding := self._holding.get(word))
        ]
        found = [(holding, end) for holding, end in found if end]
        if not found:
            return None
        rarest, end = min(found, key=lambda pair: pair[1])
        for statement in reversed(rarest[:end]):  # one holding every word said so far: nothing scores higher
            if len(wanted & self._words[statement]) == len(found):
                return self._statements[statement]
        shared: Counter[int] = Counter()
        for holding, end in found:
            shared.update(holding[:end])
        _, latest = max((score, statement) for statement, score in shared.items())
        return self._statements[latest]

    def answer(self) -> str:
        """The reply to the last user text: "Noted." to a statement, the best earlier statement to a
        question, and to a request to search, the best statement before the previous question."""
        if not self.texts:
            return ACKNOWLEDGEMENT
        last, before = self.texts[-1], len(self.texts) - 1
        if _SEARCH_REQUEST.search(last.lower()):
            asked = bisect_left(self._questions, before)  # the questions before the last text
            if not asked:
                return DONT_KNOW
            before = self._questions[asked - 1]
            last = self.texts[before]
        elif not _is_question(last):
            return ACKNOWLEDGEMENT
        found = self.best_statement(last, before)
        return TOLD_PREFIX + found if found else DONT_KNOW


class RecallMemory:
    """The few conversations answered last, each extended by its new messages only.

    A history continues the conversation it shares the longest beginning with (cut back to where they part);
    one that parts early from all of them starts its own while there is room, else takes the oldest's place.
    """

    def __init__(self, size: int = 4) -> None:
        self.size = size
        self._conversations: list[Conversation] = []  # least recently used first
        self._lock = threading.Lock()

    def reply(self, messages: list[Message]) -> tuple[str, int]:
        """The answer to the last user message of ``messages`` and ``count_tokens(messages)``."""
        with self._lock:
            conversation = self._conversation(messages)
            conversation.update(messages)
            return conversation.answer(), conversation.count()

    def _conversation(self, messages: list[Message]) -> Conversation:
        conversations = self._conversations
        shared, index = max(
            ((common_prefix(c.messages, messages), i) for i, c in enumerate(conversations)), default=(0, -1)
        )  # ties: the most recent
        if index < 0 or 2 * shared < len(conversations[index].messages):  # parts early from all of them
            index = -1 if len(conversations) < self.size else 0
        conversation = conversations.pop(index) if index >= 0 else Conversation()
        conversations.append(conversation)
        return conversation


_shared_memory = RecallMemory()


def answer(messages: list[Message]) -> str:
    """The reply to the last user message of ``messages`` (a history continued since the last call is read
    from where that call ended)."""
    return _shared_memory.reply(messages)[0]


class ScriptedRecallModel:
    """A ChatModel answering from the chat history by word overlap. Deterministic; ignores tools."""

    def __init__(self) -> None:
        self.name = NAME
        self.memory = RecallMemory()

    async def complete(self, messages: list[Message], tools: list[ToolSchema] | None = None) -> Completion:
        """Answer the last user message; usage holds the token counts of the input and the answer."""
        reply, prompt_tokens = self.memory.reply(messages)
        usage = Usage(prompt_tokens=prompt_tokens, completion_tokens=count_text(reply))
        return Completion(content=reply, usage=usage)
