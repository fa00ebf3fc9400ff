"""Parts of words for the rules judge: a part of the correct answer said in words ("at the Lisbon office",
"microcement") is stated when the reply holds half of its key words, in any order or phrasing ("Lisbon
office", "the office in Lisbon"), unless
- it is said as one of two ("the RAV4 or the CX-5", "the Lisbon office or the Porto one"), or
- a name of it is missing and another name stands in its place, next to its other words ("the Madrid
  office" for "the Lisbon office"): a competing name, as a competing figure.
"""

from __future__ import annotations

import re

from engine.models.judge_figures import key_words, stem

_OR = re.compile(r"\bor\b(?!\s+(?:so|rather|more|less|two|three)\b)", re.IGNORECASE)
_PHRASE_BREAK = re.compile(r"[.;:!?()\[\]—,\n]|\s[–-]\s")
_TOKEN = re.compile(r"[^\W\d_][\w'’-]*")
_NEXT_TO = 2  # words between a name and the part's other words


def words_stated(reply: str, words: list[str], expected: str, question: str) -> tuple[bool, str]:
    """Whether the reply states a part of words, and a note when it does not for a reason."""
    said = set(key_words(reply))
    if 2 * len([w for w in words if w in said]) < len(words):
        return False, ""
    if _one_of_two(reply, words):
        return False, "said as one of two"
    other = _other_name(reply, words, expected, question)
    if other:
        return False, f"names {other} instead"
    return True, ""


def _one_of_two(reply: str, words: list[str]) -> bool:
    """The part's words stand on one side of an "or" whose other side names something else."""
    wanted = set(words)
    for m in _OR.finditer(reply):
        left = _PHRASE_BREAK.split(reply[max(0, m.start() - 40) : m.start()])[-1].split()[-3:]
        right = _PHRASE_BREAK.split(reply[m.end() : m.end() + 40])[0].split()[:3]
        left_words, right_words = set(key_words(" ".join(left))), set(key_words(" ".join(right)))
        if (left_words & wanted and right_words - wanted) or (right_words & wanted and left_words - wanted):
            return True
    return False


def _names(text: str) -> set[str]:
    """The capitalised words of a correct answer, stemmed: its names ("Sungold", "the Lisbon office")."""
    return {stem(t.group(0)) for t in _TOKEN.finditer(text) if t.group(0)[0].isupper()}


def _other_name(reply: str, words: list[str], expected: str, question: str) -> str | None:
    """A capitalised word of the reply, unknown to the question and the correct answer, next to the part's
    words, when a name of the part is missing from the reply."""
    said = set(key_words(reply))
    missing = _names(expected) & (set(words) - said)
    if not missing:
        return None
    known = set(key_words(expected)) | set(key_words(question)) | set(words)
    tokens = [(t.group(0), stem(t.group(0))) for t in _TOKEN.finditer(reply)]
    for i, (raw, folded) in enumerate(tokens):
        if not raw[0].isupper() or folded in known or folded not in set(key_words(raw)):
            continue
        near = {w for _, w in tokens[max(0, i - _NEXT_TO - 1) : i + _NEXT_TO + 2]}
        if near & set(words) & said:
            return raw
    return None
