"""What a message asks: the checks of a phase it asks about, however it is punctuated (the one-question rule).

A model asks two checks in many shapes: two questions in one sentence ("What's the oven's price and which
day does it arrive?", "…, which day…", "…; when…", "… — and the delivery day?"), a list ("a) … b) …", "1. …"),
a second sentence without a question mark ("Also, the delivery day."). So a message is cut into sentences (at
``.``, ``?``, ``!``, a line break, a list marker) and each sentence into clauses where a new question begins
after a separator or an "and". A clause *asks* when it opens with a question word, a request ("tell me",
"please") or a continuation ("also", "and"), is a list item, or ends a question; an acknowledgement or a
statement before a question ("Thanks, the oven is noted — when does it arrive?") asks nothing.

What a clause asks is the check whose question words (``content_words``; the words of a price are one) it
covers best: at least half of them, or of those no other check of the phase has ("— and the kitchen?"), matched
on two words or on one only that check has. Checks tied at the best are each asked only on a word the other
tied ones were not matched on ("the bathroom and the kitchen totals"), else none (nothing tells them apart). A sentence asks what its clauses ask
when they name different checks; else what its asking clauses name taken together, so an "and" that joins the
parts of one check ("What did I pay for the tile and its laying together?") stays one question.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction

HALF = Fraction(1, 2)  # the share of a check's question words a clause must cover to ask it

_WORD = re.compile(r"[^\W\d_]{3,}|\d+")
_COMMON = frozenset(
    "the and you how was did who are for now our has had get can not any all one but why may its his her she him "
    "say out day what when where which with that this have does your about much many were will would there their "
    "from into they them then than also just like know tell said told remember remind please could should again "
    "still again right okay".split()
)


# the words of money asked about, one word however it is asked ("the oven's price", "what the oven cost")
_PRICE = frozenset("price cost costs pay paid payin spend spent charg fee fees".split())


def content_words(text: str) -> set[str]:
    """Words that name what a message is about, cut to five letters (vet/vets, kilometre/kilometres); the
    words of a price are one ("price")."""
    words = (w.lower().removesuffix("'s") for w in _WORD.findall(text.replace("’", "'")))
    return {"price" if w[:5] in _PRICE else w[:5] for w in words if w not in _COMMON}


# the first word of a clause that makes it a question, a request, or the continuation of one
_QUESTION_WORDS = (
    "what which who whom whose when where why how is are was were do does did can could will would should"
)
_ASKING = frozenset(f"{_QUESTION_WORDS} tell remind list give name please".split())
_CONTINUING = frozenset("and also plus or".split())
# openings that acknowledge or state, never ask ("Thanks, …", "Got it — …", "I paid …, what …?")
_ACKNOWLEDGING = frozenset(
    "thanks thank thx great ok okay perfect good noted right sure cool alright nice fine understood lovely "
    "excellent awesome brilliant yes no yeah yep hmm wow oh ah got".split()
)
_STATING = frozenset(
    "i i'm i've i'd i'll we we're we've you you're it it's that that's this there there's he she they my our so".split()
)
_REQUEST = re.compile(
    r"\b(?:tell me|remind me|let me know|(?:want|like|need) to know|wondering|curious|please"
    r"|do you (?:remember|know|recall))\b",
    re.IGNORECASE,
)
_OPENER = r"(?:" + "|".join(sorted(_ASKING | _CONTINUING, key=len, reverse=True)) + r")\b"
# where a clause ends: a separator before an asking word, or "and"/"plus"/"also" before a new question
_CLAUSE_END = re.compile(
    rf"\s*(?:[;:,]|\s[-–—]\s|[–—])\s*(?={_OPENER})"
    rf"|\s+(?=(?:and|plus)\s+(?:also\s+)?(?:{'|'.join(_QUESTION_WORDS.split())})\b)"
    rf"|\s+(?=(?:and\s+)?also\b)",
    re.IGNORECASE,
)
# a list marker at a line's start ("- ", "1. ", "b) ") or inside a line ("a) … b) …", "(2) …")
_MARKER = re.compile(
    r"^\s*(?:[-*•]|\d{1,2}[.)]|\(?[a-hA-H][.)])\s+|(?<=[\s:;,])\(?(?:[a-hA-H]|\d{1,2})\)\s+|•\s*"
)
_SENTENCE_END = re.compile(r"[?!]+[\"'”’)]*|\.+[\"'”’)]*(?=\s|$)")
_ABBREVIATIONS = frozenset("dr mr mrs ms st no nr vs approx etc eg ie".split())


@dataclass(frozen=True)
class Sentence:
    """One sentence of a message: its text, whether it ends with a question mark, whether a list marker
    opened it."""

    text: str
    question: bool
    listed: bool


def sentences(message: str) -> Iterator[Sentence]:
    """The sentences of ``message``: cut at line breaks, list markers and sentence ends (a full stop after an
    abbreviation such as ``Dr.`` or an initial ends none)."""
    for line in message.replace("’", "'").splitlines():
        for index, piece in enumerate(_MARKER.split(line)):
            listed = index > 0
            start = 0
            for end in _SENTENCE_END.finditer(piece):
                before = re.findall(r"[\w']+$", piece[: end.start()])
                if end.group().startswith(".") and before and _abbreviation(before[0]):
                    continue
                yield from _sentence(piece[start : end.end()], listed)
                start, listed = end.end(), False
            yield from _sentence(piece[start:], listed)


def _abbreviation(word: str) -> bool:
    return word.lower() in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())


def _sentence(text: str, listed: bool) -> Iterator[Sentence]:
    text = text.strip()
    if text:
        yield Sentence(text, text.rstrip("\"'”’)").endswith("?"), listed)


def clauses(sentence: Sentence) -> list[str]:
    """The clauses of a sentence that ask something (module docstring), in order."""
    parts = [p for p in _CLAUSE_END.split(sentence.text) if p.strip(" ,;:-–—")]
    return [p for i, p in enumerate(parts) if _asks(p, sentence, i == 0, i == len(parts) - 1)]


def _asks(clause: str, sentence: Sentence, first: bool, last: bool) -> bool:
    words = re.findall(r"[\w']+", clause.lower())
    continued = bool(words) and words[0] in _CONTINUING  # "Also, the delivery day." "… and which day …?"
    while words and words[0] in _CONTINUING:
        words.pop(0)
    opening = words[0] if words else ""
    if opening.split("'")[0] in _ACKNOWLEDGING:
        return False
    if opening.split("'")[0] in _ASKING or _REQUEST.search(clause):
        return True
    if opening in _STATING:  # "I paid the deposit — what's …?": only a question of its own asks
        return sentence.question and last
    return continued or (first and sentence.listed) or (sentence.question and (first or last))


def named(words: set[str], questions: Mapping[str, set[str]]) -> list[str]:
    """The checks ``words`` ask about (``questions``: check id -> its question's content words), in the
    order of ``questions``: the best covered (``_cover``), at least ``HALF``, matched on two words or on one no
    other check has (a lone "price" names no check of a phase that prices several things); checks tied at
    the best are each named only on a word the other tied ones were not matched on."""
    matched: dict[str, set[str]] = {}
    cover: dict[str, Fraction] = {}
    for cid, wanted in questions.items():
        own = wanted - set().union(*(w for other, w in questions.items() if other != cid))
        found = words & wanted
        if len(found) >= 2 or found & own:
            matched[cid], cover[cid] = found, _cover(words, wanted, own)
    best = max(cover.values(), default=Fraction(0))
    if best < HALF:
        return []
    top = [cid for cid in matched if cover[cid] == best]
    if len(top) == 1:
        return top
    return [cid for cid in top if matched[cid] - set().union(*(matched[o] for o in top if o != cid))]


def _cover(words: set[str], wanted: set[str], own: set[str]) -> Fraction:
    """How much of a check ``words`` cover: the share of its question words, or of its ``own`` (those no
    other check of the phase has), whichever is more (a short follow-up "— and the bathroom?" names the one
    check it can)."""
    shares = [Fraction(len(words & wanted), len(wanted))]
    if own:
        shares.append(Fraction(len(words & own), len(own)))
    return max(shares)


def asked_checks(message: str, questions: Mapping[str, str]) -> list[str]:
    """The checks (``questions``: check id -> its question as the persona reads it) that ``message`` asks
    about, in the order it asks them; more than one means several questions in one message."""
    wanted = {cid: content_words(question) for cid, question in questions.items()}
    asked: list[str] = []
    for sentence in sentences(message):
        parts = clauses(sentence)
        each = _ordered(c for part in parts for c in named(content_words(part), wanted))
        if len(each) <= 1:  # one question, perhaps joined by "and": its asking words together
            each = named(set().union(*(content_words(p) for p in parts)), wanted) or each
        asked += [c for c in each if c not in asked]
    return asked


def _ordered(ids: Iterator[str]) -> list[str]:
    return list(dict.fromkeys(ids))
