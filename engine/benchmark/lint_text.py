"""A phase's prose read for the prose-change lint (``lint_prose.py``): what each line is (``line_kinds``),
its statements cut into clauses with their values (``lint_values.py``), the words that say something changed
(a cue: cancelling, changing, a weak "now"), and whether a statement is a question or says nothing changed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from engine.benchmark.directives import ADD, EDIT, directive_text, ever_existing_facts, phase_lines
from engine.benchmark.lint_values import (
    Value,
    content_stems,
    kind_fit,
    spell_out,
    values_in,
    without_figures,
)
from engine.benchmark.model import Benchmark, Phase

SHEET_MENTION = re.compile(r"`([\w-]+)` sheet")
SAY_WORDS = r"(?i:say|tell|mention|reply|answer|write)\b"  # what the scripted persona sends (any case)
_DIRECTIVE_START = re.compile(rf"(?:{SAY_WORDS}|Ask\b|Edit\s|Add to\s)")
_ANCHOR_LINE = re.compile(r"\d{1,2}:\d{2}(?!\d)")
DATE_LINE = re.compile(r"\d{4}-\d{2}-\d{2}\b")

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"”’)]*\s+(?=[\"“(]?[A-Z0-9£$€])")
_CLAUSE_JOIN = re.compile(  # where a clause may end: "; ", ", and the …", ", so I …", ", the phone …"
    r";\s+|,?\s+(?:(?:and|but|so|while|whereas|which means)\s+|(?<=,)\s*)"
    r"(?=(?:the|my|our|his|her|their|its|I|I'm|we|we're|it|it's|they|she|he)\b)"
)
_QUESTION = re.compile(
    r"\?\s*$|^\W*ask\b(?!\s+(?:it\s+|her\s+|him\s+|them\s+|the assistant\s+)?to\b)|\bask(?:s|ed)?\s+"
    r"(?:it\s+|the assistant\s+)?(?:how|what|whether|if|when|which|who|where|why)\b",
    re.IGNORECASE,
)
_STRONG = re.compile(  # words that say a value changed
    r"\binstead\b|\b(?:went|gone|goes|going|go|is|are|was|were|be|been|'s|’s)\s+(?:back\s+)?(?:up|down)\b"
    r"|\b(?:rose|risen|rises|fell|fallen|falls|climbed|jumped|increased|decreased|reduced|raised|lowered"
    r"|cut|upped|bumped|hiked|dropped)\s+(?:\w+\s+)?(?:up\s+|down\s+)?(?:to|by)\b|\b(?:doubled|halved|tripled)\b"
    r"|\b(?:moved|moving|moves|move|switched|switching|switch|changed|changing|shifted|pushed|postponed"
    r"|rescheduled|brought forward|swapped|upgraded|downgraded|replaced|rebooked|renegotiated|extended"
    r"|shortened|bumped|put)\b(?!\s+on\b)(?:\s+[\w'’-]+){0,6}?\s+(?:to|for|until|till|onto|into|up|down)\b"
    r"|\bturns? out\b|\bturned out\b|\bcorrection\b|\bcorrect(?:ed|ing)? (?:myself|herself|himself|that)\b"
    r"|\bmisremember|\bmy mistake\b|\bwrong\b|\bactually\b|\bafter all\b|\bended up\b|\bno longer\b"
    r"|\bchanged (?:my|her|his|our|their) minds?\b|\bwent (?:with\b|for (?=(?-i:[A-Z])|the\b))|\bgoing with\b"
    r"|\bdecided (?:on|to go with)\b|\bnot\s+(?:\w+\s+){0,2}but\b|\b(?:up|down) to\s+(?=[$€£]?\d)"
    r"|→|->|\bany ?more\b|\bbecame\b|\bbecomes\b|\bhas become\b",
    re.IGNORECASE,
)
_DELETE = re.compile(  # words that say a fact is no more
    r"\bcancel(?:l?ed|s|l?ing)?\b|\bcalled off\b|\bdropp(?:ed|ing)\b(?!\s+(?:\w+\s+)?(?:to|by)\b)"
    r"|\bdrop the\b|\bscrapp?(?:ed)?\b|\bstrike\b|\bstruck\b|\bcross(?:ed)? (?:it |that |them )?out\b"
    r"|\b(?:is|are|'s|’s) off\b|\boff the (?:list|table|plan)\b|\bdecided (?:against|not to)\b|\bgave up\b"
    r"|\bgiving up\b|\bpulled out\b|\bwon'?t (?:go ahead|happen)\b|\bnot going ahead\b|\bremoved?\b"
    r"|\bdelete\b|\bno more\b|\bno longer\b|\bdon'?t need\b|\bforget (?:about )?the\b|\bstopped\b|\bquit\b"
    r"|\bcan'?t \w+ after all\b|\b(?:no|not|nor|stop)\b[^.;]*\b(?:from now on|for good|until further notice"
    r"|any ?more)\b",
    re.IGNORECASE,
)
_SWAP = re.compile(  # words that say a change even when its new value is no figure ("oak instead")
    r"\binstead\b|\b(?:switch|switched|changed|swapped|upgraded|downgraded)\s+(?:\w+\s+)?(?:to|for)\b"
    r"|\breplac|\bwent (?:with\b|for (?=(?-i:[A-Z])|the\b))|\bgoing with\b|\bdecided on\b|\bopted for\b"
    r"|\bno longer\b|\bafter all\b|\bturns? out\b|\bturned out\b|\brather than\b"
    r"|\bnot\s+(?:\w+\s+){0,2}but\b|\bchanged (?:my|her|his|our|their) minds?\b",
    re.IGNORECASE,
)
_WEAK = re.compile(  # words that may go with a change ("rent now £1,500", "booked the hotel: …")
    r"\bnow\b|\bnew\b|\bupdat(?:e|ed|ing)\b|\blatest\b|(?<!n't )(?<!not )\bbooked\b|\bchang(?:e|ed|es)\b|\bsettled on\b"
    r"|\bthese days\b|\bfrom now on\b|\bas of\b|\beffective\b|\bstarting (?:next|this|on|in|from)\b"
    r"|\bfrom (?:next|this) (?:week|month|year)\b|\bfrom (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b",
    re.IGNORECASE,
)
_NO_CHANGE = re.compile(  # words that say nothing changed
    r"\bunchanged\b|\bstill\b|\bas planned\b|\bas before\b|\bthe same\b|\bsame as\b|\bno change\b|\bnothing to"
    r" change\b|\bstays? (?:the same|as|at|put)\b|\bas it was\b|\bas they are\b|\bconfirmed\b",
    re.IGNORECASE,
)


def line_kinds(lines: list[tuple[int, str]]) -> list[str]:
    """Each phase line as blank, heading, fence, check, anchor, directive or prose."""
    kinds: list[str] = []
    in_fence = False
    for raw in (text for _, text in lines):
        stripped = raw.strip()
        previous = kinds[-1] if kinds else "blank"
        if stripped.startswith("```") or in_fence:
            kinds.append("fence")  # a code block, its fences included
            in_fence = in_fence != stripped.startswith("```")
        elif not stripped:
            kinds.append("blank")
        elif stripped.startswith("#"):
            kinds.append("heading")
        elif "❓" in stripped[:3] or (
            previous == "check" and (raw[:1].isspace() or stripped.lower().startswith("correct answer:"))
        ):
            kinds.append("check")
        elif _ANCHOR_LINE.match(stripped) or DATE_LINE.match(stripped):
            kinds.append("anchor")  # a date line counts as one here
        elif _DIRECTIVE_START.match(directive_text(raw)):
            kinds.append("directive")
        else:
            kinds.append("prose")
    return kinds


@dataclass
class Clause:
    """A clause of a statement: its text and where it starts in its unit, its values and words."""

    text: str
    start: int
    values: list[Value]
    stems: set[str]
    swap: bool  # the change is said in words that need no new figure ("instead", "switched to")


@dataclass
class Statement:
    """A sentence of a phase's prose: its clauses, the change it names (``cue``), its words."""

    text: str
    offset: int  # where it starts in its unit
    clauses: list[Clause]
    stems: set[str]
    cue: str  # "delete", "edit", "weak", "" (no word of change)
    no_change: bool
    question: bool
    line_starts: list[tuple[int, int]]  # where each line of its unit starts: (offset, line number)

    def line_at(self, offset: int) -> int:
        """The line of the chapter file the unit's ``offset`` is on."""
        return [line for start, line in self.line_starts if start <= offset][-1]


def statements(text: str, line_starts: list[tuple[int, int]], skip_names: frozenset[str]) -> list[Statement]:
    """The sentences of a unit of prose (lines joined with spaces), each cut into clauses."""
    found: list[Statement] = []
    start = 0
    for match in [*_SENTENCE_END.finditer(text), None]:
        end = match.start() if match else len(text)
        sentence = text[start:end]
        if sentence.strip():
            found.append(_statement(sentence, start, line_starts, skip_names))
        start = match.end() if match else end
    return found


def _statement(
    sentence: str, offset: int, line_starts: list[tuple[int, int]], skip: frozenset[str]
) -> Statement:
    values = [replace(v, start=v.start + offset, end=v.end + offset) for v in values_in(sentence, skip)]
    kinds = (("delete", _DELETE), ("edit", _STRONG), ("weak", _WEAK))
    cue = next((kind for kind, pattern in kinds if pattern.search(sentence)), "")
    old = [v for v in values if v.old]
    if cue in ("", "weak") and any(kind_fit(o, v) for o in old for v in values if not v.old):
        cue = "edit"  # "4000 IU, not 2000", "21 June instead of the 14th"
    return Statement(
        text=sentence,
        offset=offset,
        clauses=_clauses(sentence, offset, values),
        stems=content_stems(without_figures(sentence, values, offset)),
        cue=cue,
        no_change=bool(_NO_CHANGE.search(sentence)),
        question=bool(_QUESTION.search(sentence)),
        line_starts=line_starts,
    )


def _clauses(sentence: str, offset: int, values: list[Value]) -> list[Clause]:
    """A sentence cut at "; " always, and at ", and the …", ", so I …", ", the phone …" where both sides
    state a figure of their own."""
    cuts = [0]
    for match in _CLAUSE_JOIN.finditer(sentence):
        left = [v for v in values if cuts[-1] + offset <= v.start < match.start() + offset]
        right = [v for v in values if v.start >= match.end() + offset]
        figures = any(v.kind != "name" for v in left) and any(v.kind != "name" for v in right)
        if match.group(0).startswith(";") or figures:
            cuts.append(match.end())
    cuts.append(len(sentence))
    clauses = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        own = [v for v in values if a + offset <= v.start < b + offset]
        text = sentence[a:b]
        words = content_stems(without_figures(text, own, a + offset))
        clauses.append(Clause(text, a + offset, own, words, bool(_SWAP.search(text))))
    return clauses


def units(bench: Benchmark, phase: Phase) -> Iterator[tuple[str, list[tuple[int, int]]]]:
    """The phase's prose as units (a paragraph, an anchor line, a Say line with the prose wrapped under it):
    text with numbers spelled out and fact ids blanked, and where each of its lines starts."""
    lines = phase_lines(bench, phase)
    ids = _fact_ids(bench)
    parts: list[str] = []
    starts: list[tuple[int, int]] = []
    for (number, raw), kind in zip(lines, line_kinds(lines), strict=True):
        body = directive_text(raw)
        skip = kind not in ("prose", "anchor", "directive") or bool(DATE_LINE.match(body) or EDIT.match(body))
        skip = skip or bool(ADD.match(body) or (kind == "directive" and SHEET_MENTION.search(body)))
        if parts and (skip or kind != "prose"):  # a unit ends at a break, a directive or an anchor
            yield " ".join(parts), starts
            parts, starts = [], []
        if not skip:
            starts.append((sum(len(p) + 1 for p in parts), number))
            parts.append(spell_out(ids(body)))
    if parts:
        yield " ".join(parts), starts


def _fact_ids(bench: Benchmark) -> Callable[[str], str]:
    """A function blanking the ids a line names ("fact 1.2", "#1.2", "oven 1.2", "check 14.1"): no values."""
    known = {sheet.lower(): ids for sheet, ids in ever_existing_facts(bench).items()}
    sheets = "|".join(map(re.escape, bench.sheets))
    pattern = re.compile(
        rf"(?:\b(?:facts?|lines?|items?|ids?|checks?)\s+|#|(?:\b|`)(?P<sheet>{sheets})`?\s+)(?P<id>\d+\.\d+)\b(?![.,]\d)",
        re.IGNORECASE,
    )

    def blank(match: re.Match[str]) -> str:
        sheet = match.group("sheet")
        if sheet and match.group("id") not in known.get(sheet.lower(), set()):
            return match.group(0)  # "the bedroom 3.6 × 4.0 m" names no fact
        return match.group(0)[: match.start("id") - match.start()] + " " * len(match.group("id"))

    return lambda text: pattern.sub(blank, text)
