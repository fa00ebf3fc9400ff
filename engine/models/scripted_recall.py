"""``scripted/recall``: a deterministic agent-side baseline that "remembers" by lexical overlap.

It measures nothing about real agents. It answers the last user message from the earlier user messages:
a statement gets "Noted."; a question gets the earlier user sentence sharing the most content words, quoted
verbatim; a request to search memory re-asks the previous question. System messages (the time, ...) and
assistant turns are ignored.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from engine.models.base import Completion, Message, ToolSchema, Usage
from engine.models.tokens import count_text, count_tokens

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


def _user_texts(messages: list[Message]) -> list[str]:
    texts = []
    for message in messages:
        if message.get("role") == "user":
            text = _LEADING_TAG.sub("", _text(message.get("content"))).strip()
            if text:
                texts.append(text)
    return texts


def _statements(texts: list[str]) -> list[str]:
    """Every sentence of the given user messages that is not a question, oldest first."""
    sentences = []
    for text in texts:
        for sentence in _SENTENCE_END.split(text):
            sentence = sentence.strip()
            if sentence and not _is_question(sentence):
                sentences.append(sentence)
    return sentences


def best_statement(question: str, earlier: list[str]) -> str | None:
    """The earlier statement sharing the most content words with ``question`` (latest wins ties)."""
    wanted = content_words(question)
    if not wanted:
        return None
    best: tuple[int, str] | None = None
    for sentence in _statements(earlier):
        score = len(wanted & content_words(sentence))
        if score and (best is None or score >= best[0]):
            best = (score, sentence)
    return best[1] if best else None


def answer(messages: list[Message]) -> str:
    """The reply to the last user message of ``messages``."""
    texts = _user_texts(messages)
    if not texts:
        return ACKNOWLEDGEMENT
    last, earlier = texts[-1], texts[:-1]
    if _SEARCH_REQUEST.search(last.lower()):
        questions = [i for i, text in enumerate(earlier) if _is_question(text)]
        if not questions:
            return DONT_KNOW
        last, earlier = earlier[questions[-1]], earlier[: questions[-1]]
    elif not _is_question(last):
        return ACKNOWLEDGEMENT
    found = best_statement(last, earlier)
    return TOLD_PREFIX + found if found else DONT_KNOW


class ScriptedRecallModel:
    """A ChatModel answering from the chat history by word overlap. Deterministic; ignores tools."""

    def __init__(self) -> None:
        self.name = NAME

    async def complete(self, messages: list[Message], tools: list[ToolSchema] | None = None) -> Completion:
        """Answer the last user message; usage holds the token counts of the input and the answer."""
        reply = answer(messages)
        usage = Usage(prompt_tokens=count_tokens(messages), completion_tokens=count_text(reply))
        return Completion(content=reply, usage=usage)
