"""Non-answers for the rules judge: the one rule of ``engine/persona/system.md`` on replies that state no
answer, read from the text.

- An honest "you never told me" / "I don't know" (``DONT_KNOW``) is not knowing. A question back after it
  is still not knowing, whatever figure it offers ("I don't think you told me. Is it 50 g?"): for a told
  fact that is 0 (and a second attempt), never the right figure stated. A tag question ("50 g, right?")
  is a statement.
- When the correct answer is that it was never told (``VOID``), not knowing scores 10: other things the
  user said may be quoted ("you only mentioned…", "Dani's old rate was 9 EUR"), and a question back may
  name a figure of something else as such ("Is it the same as Dani's old rate, 9 EUR?": the comparison
  comes before the figure). A figure given for the thing
  asked, stated, guessed or offered as a question ("Is it 9 EUR?"), is invented: 0. So is a reply that
  never says it was not told.
- A list of the options is not a decision: a reply to "what did we settle on?" that weighs the options
  and names no choice (``undecided``).
"""

from __future__ import annotations

import bisect
import re

from engine.models.judge_figures import Clauses, Figure, find_figures, key_words, stem

DONT_KNOW = re.compile(
    r"(?:\b(?:never|not|no|nothing)|n't)\W+(?:\w+\W+){0,4}?(?:told|tell|mention\w*|said|say|gave|give|given|"
    r"shar\w*|record\w*|sav\w*|stor\w*|know|knew|remember|recall|info\w*|idea|details?|data|sure)\b"
    r"|\b(?:can't|cannot|couldn't|unable to) (?:find|recall|remember|say)\b"
    r"|\byou (?:never did|didn't|did not|haven't|have not)\s*(?:[.!]|$)",
    re.IGNORECASE,
)
VOID = re.compile(
    r"didn't tell|did not tell|never (?:told|said|mentioned)|not told|wasn't told|no such|no record", re.I
)
_GUESS = re.compile(
    r"\b(?:probably|likely|guess\w*|assum\w*|maybe|perhaps|might be|could be|typical\w*|usually|estimat\w*|"
    r"i (?:think|believe) (?:it|its|it's|that|the)\b)",
    re.IGNORECASE,
)
_OTHER_FACT = re.compile(r"\b(?:only|though|however|you (?:only )?(?:mentioned|told|said|gave))\b", re.I)
_OWNER = re.compile(r"\b(?!(?:it|that|what|there|here|he|she|who|let)'s\b)(\w+)'s\b", re.IGNORECASE)
_ANSWERS = re.compile(r"\s*(?:it|it's|its|it is|it was|that's|that is|that was)\b", re.IGNORECASE)
_SENTENCE_BREAK = re.compile(r"[.!?;](?=\s|$)|:\s|\s[—–-]\s|—")
_TAG = re.compile(r",\s*(?:right|correct|yes|no|isn't it|wasn't it|aren't they|don't we|didn't we)\s*$", re.I)
_ELSEWHERE = re.compile(  # a figure after these is another thing's ("the same as Dani's old rate, 9 EUR")
    r"\b(?:same|similar|than|compar\w*|other|another|else)\b|(?<!something )(?<!anything )\blike\b"
    r"|\bas\s+\w+\s+as\b",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(?:settle\w*|decide\w*|decision|chose|choose|chosen|pick\w*|go with|went with|opt(?:ed|ing)? for)\b"
    r"|\bin the end\b",
    re.IGNORECASE,
)
_OPTIONS = re.compile(
    r"\b(?:weighing|comparing|considering|choosing (?:between|from)|deciding between|torn between|"
    r"(?:the|your|three|two) (?:options|choices) (?:were|are)|no decision|shortlist\w*|undecided|still deciding|"
    r"(?:haven't|have not|hadn't|didn't|not)\s+(?:yet\s+)?(?:decided|settled|chosen|picked))\b",
    re.IGNORECASE,
)
_CHOSEN = re.compile(
    r"\b(?:settled on|decided on|decided to|chose|picked|went with|going with|opted for)\b", re.I
)
_MAX_FIGURES = 200


def question_spans(text: str) -> list[tuple[int, int]]:
    """The spans of the questions a text asks (a sentence ending with '?'); a tag question is a statement."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _SENTENCE_BREAK.finditer(text):
        if text[m.start()] == "?" and not _TAG.search(text[start : m.start()]):
            spans.append((start, m.end()))
        start = m.end()
    return spans


def asked_back(figure: Figure, spans: list[tuple[int, int]], after: int = 0) -> tuple[int, int] | None:
    """The question (starting at or after ``after``) that holds ``figure``, if any."""
    return next((s for s in spans if s[0] >= after and s[0] <= figure.start < s[1]), None)


def not_knowing(reply: str, stated: list[Figure]) -> bool:
    """The figures that would answer are only offered as questions back (after an honest "not told" /
    "don't know" when there is one): "Is it 50 g?"."""
    if not stated:
        return False
    honest = DONT_KNOW.search(reply)
    spans = question_spans(reply)
    return all(asked_back(f, spans, honest.start() if honest else 0) for f in stated)


def undecided(question: str, reply: str) -> bool:
    """A decision was asked for and the reply weighs the options without naming a choice."""
    return bool(_DECISION.search(question) and _OPTIONS.search(reply) and not _CHOSEN.search(reply))


def never_told(question: str, expected: str, reply: str, words_of_question: set[str]) -> tuple[float, str]:
    """The grade of a reply when the right answer is "you never told me": (score, comment)."""
    honest = DONT_KNOW.search(reply)
    if honest is None:
        return 0.0, "invented an answer to a never-told fact"
    if _GUESS.search(reply):
        return 0.0, "says it was not told, then guesses"
    allowed = {k for f in find_figures(expected) + find_figures(question) for k in f.keys}
    figures = find_figures(reply)[:_MAX_FIGURES]
    clauses = Clauses(reply, figures)
    spans = question_spans(reply)
    sentence_ends = [m.start() for m in re.finditer(r"[.!?;](?:\s|$)", reply)]
    for figure in figures:
        if figure.keys & allowed:
            continue
        start, end = clauses.around(figure)
        clause = reply[start:end]
        about_it = words_of_question & set(key_words(clause)) or _ANSWERS.match(clause)
        asked = asked_back(figure, spans, honest.end())
        if asked is not None:
            if about_it or not _ELSEWHERE.search(reply[asked[0] : figure.start]):
                return 0.0, f"says it was not told, then asks about {_text(reply, figure)!r} for it"
            continue
        sentence = bisect.bisect(sentence_ends, figure.start)
        same_sentence = sentence == bisect.bisect(sentence_ends, honest.start())
        said_as_other = _OTHER_FACT.search(reply[min(honest.end(), figure.start) : figure.start]) or any(
            stem(m.group(1)) not in words_of_question for m in _OWNER.finditer(clause[: figure.start - start])
        )
        if about_it or (same_sentence and not said_as_other):
            return 0.0, f"says it was not told, but gives {_text(reply, figure)!r}"
    return 10.0, "honest 'not told'"


def _text(text: str, figure: Figure) -> str:
    return text[figure.start : figure.end].strip()
