"""Replies of a realistic length for ``scripted/agent?reply_tokens=600``: the answer's own sentence first, then
deterministic prose, as an assistant elaborates, until the reply holds about that many tokens.

Why: a real model's replies are paragraphs, so a real agent's context grows to the seed's scale (~130K tokens
lived through on ``max``), where its compaction fires; the scripted agent's few words never get there.

What the padding may say, so that no judge reads it as an answer: no digit and no number word, no date, month or
weekday, no hedge ("or", "maybe", "might"), no "don't know"/"never told", no question. A statement's topic words
(lowercase content words of the user's message) are restated; a question's never (they could name one of the
options it asks between), so an answer's padding is the same generic prose whatever the question.
"""

from __future__ import annotations

import hashlib
import re

from engine.models.tokens import count_text

_WORD = re.compile(r"\b[a-z][a-z'-]{3,}\b")
# words never restated: stop words, numbers, calendar words, and the judge's hedges, tenses and denials
_SKIP = frozenset(
    """
    about after again also always because been before being between both could does done down each even every
    from have having here into just know like make many more most much must need never next none only other
    over same should some still such than that their them then there these they thing things this those though
    through till told very want well were what when where which while will with would your yours mine ours
    please remember note maybe perhaps might either unsure sure think guess probably usually likely first last
    previous previously original originally earlier later update updated changed change moved dropped rose
    raised increased final finally currently once twice half dozen hundred thousand million zero
    three four five seven eight nine eleven twelve twenty thirty forty fifty sixty seventy eighty ninety
    january february march april june july august september october november december monday tuesday wednesday
    thursday friday saturday sunday today tomorrow yesterday week weeks weekday weekdays weekend month months
    year years morning evening night hour hours minute minutes number numbers
    """.split()
)
_OPENING = (
    "Here is how I see it, in a bit more detail.",
    "Let me add some context around that.",
    "A little more on that, so the picture is complete.",
)
_TOPIC = (
    "On the subject of {topic}: I have it together with the rest of what we have been discussing, and I will "
    "keep it in view as we go.",
    "Everything around {topic} fits with the plan as it stands, and I will keep the details consistent with it.",
    "If anything about {topic} changes, tell me and I will bring my notes in line with it straight away.",
    "I will treat {topic} as part of the bigger picture, so that the overview stays coherent.",
)
_GENERIC = (
    "I keep track of the details you share so that I can bring them together whenever you need an overview, a "
    "summary to pass along, a quick check ahead of a decision.",
    "When a detail changes, the newest version is the one that counts, and I will say so clearly when I give it "
    "back to you.",
    "It helps to keep related items side by side: it makes totals, comparisons and schedules much easier to "
    "check as the conversation goes on.",
    "If something sounds off in what I say, point it out and I will go over it with you carefully.",
    "I aim to keep my answers plain and direct, with the key point at the start and the background behind it.",
    "Where a plan has several parts, I find it useful to look at each part by itself and at the whole as well, "
    "so that every part is accounted for.",
    "Good records save a lot of back and forth: a clear note means a quick, reliable answer when it matters.",
    "I am happy to go through any part of this again, at whatever level of detail suits you.",
    "Small details tend to matter most when plans come together, so I keep them exactly as they reached me.",
    "Whenever you want, I can lay everything out as a short list, with the main items and what they depend on.",
)


def topic_words(message: str, limit: int = 6) -> list[str]:
    """The message's content words worth restating, in order: lowercase letters only (a name, a figure, a date
    or a calendar word is never restated)."""
    found: list[str] = []
    for word in _WORD.findall(message):
        if word not in _SKIP and word not in found and "-" not in word.strip("-'"):
            found.append(word)
    return found[:limit]


def _topic(words: list[str]) -> str:
    if len(words) < 2:
        return words[0] if words else ""
    return ", ".join(words[:-1]) + " and " + words[-1]


def pad(reply: str, message: str, tokens: int) -> str:
    """``reply`` followed by prose elaborating it, about ``tokens`` tokens in all (``reply`` unchanged when it
    holds that many already, or ``tokens`` is 0); deterministic in the reply and the user's ``message``."""
    have = count_text(reply)
    if tokens <= 0 or have >= tokens:
        return reply
    seed = int(hashlib.sha256(f"{message}\n{reply}".encode()).hexdigest()[:8], 16)
    words = [] if "?" in message else topic_words(message)
    sentences = [_OPENING[seed % len(_OPENING)]]
    if words:
        sentences += [template.format(topic=_topic(words)) for template in _TOPIC]
    sentences += [_GENERIC[(seed + step) % len(_GENERIC)] for step in range(len(_GENERIC))]
    chosen: list[str] = []
    while True:  # sentences counted one by one, then the whole (paragraph breaks are tokens too)
        while have < tokens:
            sentence = _next_sentence(chosen, sentences)
            chosen.append(sentence)
            have += count_text(sentence) + 1
        text = _paragraphs(reply, chosen)
        have = count_text(text)
        if have >= tokens:
            return text


def _next_sentence(chosen: list[str], sentences: list[str]) -> str:
    """The next sentence: the list in order, then its generic sentences again (the opening and the topic's are
    said once)."""
    if len(chosen) < len(sentences):
        return sentences[len(chosen)]
    generic = len(_GENERIC)
    return sentences[len(sentences) - generic + (len(chosen) - len(sentences)) % generic]


def _paragraphs(reply: str, sentences: list[str]) -> str:
    """The reply, then the sentences four to a paragraph, as a model writes them."""
    paragraphs = [reply] + [" ".join(sentences[i : i + 4]) for i in range(0, len(sentences), 4)]
    return "\n\n".join(paragraphs)
