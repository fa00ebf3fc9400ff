"""Lints of a phase's text for ``mmb-tui validate``: where the scripted persona would misread a directive
word, and sheet changes a phase describes only in prose.

Warnings never fail validate nor refuse a run: a directive word at the start of a wrapped prose line, inside
a prose line, or a ``Say`` continued on the next line concerns only the scripted persona (a language-model
persona reads the text as prose); a phase whose prose changes a sheet fact with no ``Edit``/``Add to`` line
for it plays as written, but without a directive the engine has no expected text to hold the persona's sheet
to and the scripted persona never makes the change, so the warning suggests the line. The change is found
here when the prose names the fact by its id (``Update the oven sheet fact 1.2 to 5,100 EUR``) or names its
sheet with a word of change, and by ``lint_prose.py`` from what the prose says ("the fare went up to €320").
One error is found here too: an ``Edit``/``Add to`` inside a line is no directive at all, for the engine's
replay as for any persona.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from engine.benchmark.directives import directive_text, directives_of, expected_facts, phase_lines
from engine.benchmark.lint_prose import Finding, prose_findings
from engine.benchmark.lint_text import SAY_WORDS, SHEET_MENTION, line_kinds
from engine.benchmark.model import Benchmark, Phase, Problem

__all__ = ["SHEET_MENTION", "directive_placement", "line_kinds", "prose_changes"]

_LOWER_SAY_START = re.compile(r"(?:say|tell|mention|reply|answer|write)\b")
_SAY_START = re.compile(SAY_WORDS)
_MID_SAY = (
    re.compile(r"[.!?…][\"”’)]*\s+(?P<word>Say|Tell)\b(?!\s+(?:the\s+)?`)"),  # "… today. Say …", "… so. Say"
    re.compile(r"\s(?P<word>Say|Tell):?\s*[\"“]"),  # '… Say: "…"'
)
_MID_CHANGE = (
    re.compile(r"\s(?P<word>Edit)\s+[\w-]+\s+\d+\.\d+\s*:"),
    re.compile(r"\s(?P<word>Add to)\s+[\w-]+\s+category\s+\d+\s*:"),
)
_WRAPPED = (
    "a directive word starts a wrapped line: the scripted persona would send a fragment of the prose; put the "
    "directive on its own line (blank line before) or re-wrap the paragraph"
)
_CONTINUED = (
    "a Say/Tell line continues on this line, but the scripted persona sends only its own line: keep each Say "
    "on one line"
)


def directive_placement(bench: Benchmark, phase: Phase) -> tuple[list[Problem], list[Problem]]:
    """(errors, warnings) of directive words out of place: an ``Edit``/``Add to`` inside a line (an error:
    nothing reads it as a directive); a directive word starting a line that continues a prose paragraph, a
    ``Say``/``Tell`` inside a prose line, or a ``Say`` continued on the next line (warnings: only the
    scripted persona misreads them)."""
    lines = phase_lines(bench, phase)
    kinds = line_kinds(lines)
    file = str(bench.path / phase.chapter)
    errors: list[Problem] = []
    warnings: list[Problem] = []
    for k, ((number, raw), kind) in enumerate(zip(lines, kinds, strict=True)):
        body = directive_text(raw)
        if kind in ("prose", "anchor", "directive") and (change := _first_match(_MID_CHANGE, body)):
            message = (
                f"'{change}' in the middle of a line is never carried out as a directive: neither the engine's "
                f"replay nor the scripted persona reads it; put it on its own line (blank line before)"
            )
            errors.append(Problem(file=file, line=number, message=message))
        if warning := _misread(lines, kinds, k):
            warnings.append(Problem(file=file, line=number, message=warning))
    return errors, warnings


def _misread(lines: list[tuple[int, str]], kinds: list[str], k: int) -> str | None:
    """Why the scripted persona misreads line ``k`` (a wrapped directive word, a Say continued on it, a
    Say/Tell inside it), or None."""
    kind, previous = kinds[k], kinds[k - 1] if k else "blank"
    text = lines[k][1].strip()
    bullet = text[:1] in "-•*" and text[1:2] == " "
    if kind == "directive" and not bullet:
        lower_wrap = _LOWER_SAY_START.match(text) and previous in ("prose", "anchor", "directive")
        if previous == "prose" or lower_wrap:
            return _WRAPPED
    if kind == "prose" and previous == "directive" and not bullet:
        said = directive_text(lines[k - 1][1])
        unclosed = said.count('"') % 2 == 1 or said.count("“") > said.count("”")
        if (text[:1].islower() or unclosed) and _SAY_START.match(said) and not SHEET_MENTION.search(said):
            return _CONTINUED
    if kind in ("prose", "anchor", "directive") and (say := _first_match(_MID_SAY, directive_text(text))):
        return (
            f"'{say}' in the middle of a line is never carried out as a directive by the scripted persona: "
            f"put the directive on its own line (blank line before)"
        )
    return None


def _first_match(patterns: tuple[re.Pattern[str], ...], body: str) -> str | None:
    for pattern in patterns:
        if match := pattern.search(body, 1):
            return match.group("word")
    return None


# ---- sheet changes told only in prose -------------------------------------------------------------

_IDS = r"#?\d+\.\d+(?:\s*(?:,|and|&|/)\s*#?\d+\.\d+)*"
_AFTER_SHEET = re.compile(
    rf"`?(?:\.md)?`?(?:'s)?\s*(?:sheet\b)?[\s,:]*(?:(?:facts?|lines?|items?|ids?)\s+)?(?P<ids>{_IDS})(?![\d,.]\d)",
    re.IGNORECASE,
)
_FACT_ID = re.compile(r"\d+\.\d+")
_CHANGE_WORD = re.compile(
    r"\b(?:updat|chang|correct|fix|edit|amend|replac|add|strik|struck|delet|remov|rewrit|revis|adjust)"
    r"(?:e|es|ed|ing|s|d)?\b|\bcross(?:es|ed|ing)? out\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W\d_]{4,}")
_COMMON = frozenset(
    "that this with then from them they their there your yours have will would into about when what which "
    "while also just only still sheet fact facts line item tell told assistant know news says said after "
    "before update updated change changed correct edit amend replace strike delete remove cross".split()
)


def _mentions(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w`-])`?{re.escape(name)}(?![\w-])", re.IGNORECASE)


def _named_with_sheet(name: str) -> re.Pattern[str]:
    quoted = rf"`?{re.escape(name)}(?:\.md)?`?"
    return re.compile(
        rf"(?<![\w-]){quoted}(?:'s)?\s+sheet\b|\bsheet\s+{quoted}(?![\w-])|(?<![\w-]){re.escape(name)}\.md\b",
        re.IGNORECASE,
    )


def _named_ids(line: str, name: str, categories: set[str]) -> list[str]:
    """The fact ids of sheet ``name`` a line names: ``oven 1.2``, ``the oven sheet, fact 1.2``,
    ``fact 1.2 of the `oven` sheet``; only ids in a category the sheet has (a new fact's id too)."""
    found: list[str] = []
    for mention in _mentions(name).finditer(line):
        if after := _AFTER_SHEET.match(line, mention.end()):
            found += _FACT_ID.findall(after.group("ids"))
        before = re.search(
            rf"(?:facts?|lines?|items?)\s+(?P<ids>{_IDS})\s+(?:of|on|in|from)\s+(?:the\s+|my\s+|your\s+|her\s+|his\s+)?$",
            line[: mention.start()],
            re.IGNORECASE,
        )
        if before:
            found += _FACT_ID.findall(before.group("ids"))
    return [
        fact_id
        for k, fact_id in enumerate(found)
        if fact_id.split(".")[0] in categories and fact_id not in found[:k]
    ]


def _stems(text: str) -> set[str]:
    return {w.lower()[:5] for w in _WORD.findall(text) if w.lower() not in _COMMON}


def _likely_fact(line: str, name: str, present: dict[tuple[str, str], str]) -> str | None:
    """The fact of sheet ``name`` the line's words point to (most words in common, alone at the top)."""
    words = _stems(line) - _stems(name)
    scores = sorted(
        ((len(words & _stems(text)), fact_id) for (sheet, fact_id), text in present.items() if sheet == name),
        reverse=True,
    )
    if scores and scores[0][0] > 0 and (len(scores) == 1 or scores[1][0] < scores[0][0]):
        return scores[0][1]
    return None


def _changed_in_prose(bench: Benchmark, phase: Phase) -> Iterator[tuple[int, str, str]]:
    """(line, sheet, fact id or "") for each change of a sheet the phase's text names outside a directive."""
    lines = phase_lines(bench, phase)
    categories = {name: {str(c.number) for c in sheet.categories} for name, sheet in bench.sheets.items()}
    for (number, raw), kind in zip(lines, line_kinds(lines), strict=True):
        body = directive_text(raw)
        if kind not in ("prose", "anchor", "directive") or re.match(r"(?:Edit|Add to)\s", body):
            continue
        if _first_match(_MID_CHANGE, body) or (kind == "directive" and SHEET_MENTION.search(body)):
            continue  # an error of its own; a sheet to tell
        for name in bench.sheets:
            ids = _named_ids(body, name, categories[name])
            for fact_id in ids:
                yield number, name, fact_id
            if not ids and _CHANGE_WORD.search(body) and _named_with_sheet(name).search(body):
                present = expected_facts(bench, phase.index, number)
                yield number, name, _likely_fact(body, name, present) or ""


def prose_changes(bench: Benchmark, phase: Phase) -> list[Problem]:
    """Warnings at ``file:line`` for each sheet fact the phase's prose changes without an ``Edit``/``Add
    to`` line for it: a fact named by its id, a sheet named with a word of change (without any directive on
    that sheet), and a change read from what the prose says (``lint_prose.py``)."""
    directed = {(d.sheet, d.fact_id) for d in directives_of(bench, phase.index)}
    directed_sheets = {sheet for sheet, _ in directed}
    named = [Finding(number, sheet, fact_id) for number, sheet, fact_id in _changed_in_prose(bench, phase)]
    named_facts = {(f.sheet, f.fact_id) for f in named if f.fact_id}
    told = [f for f in prose_findings(bench, phase) if not named_facts & set(f.candidates)]
    told_at = {(f.line, f.sheet) for f in told if f.fact_id}
    found: dict[tuple[str, str, tuple[tuple[str, str], ...]], Finding] = {}
    for finding in [*told, *named]:  # what the prose says tells more than an id it names
        key = (finding.sheet, finding.fact_id, finding.candidates)
        sheet_only = not finding.fact_id and not finding.candidates  # a sheet named, no fact found
        if (finding.sheet, finding.fact_id) in directed or (sheet_only and finding.sheet in directed_sheets):
            continue
        if sheet_only and (finding.line, finding.sheet) in told_at:
            continue  # a sheet named with a change, the fact found by its values
        if key not in found or finding.line < found[key].line:
            found[key] = finding
    file = str(bench.path / phase.chapter)
    return [
        Problem(file=file, line=f.line, message=_suggestion(bench, phase, f))
        for f in sorted(found.values(), key=lambda f: f.line)
    ]


def _suggestion(bench: Benchmark, phase: Phase, finding: Finding) -> str:
    sheet, fact_id, number = finding.sheet, finding.fact_id, finding.line
    why = (
        "with no directive line for it: the engine has no expected text to hold the persona's sheet to and the "
        "scripted persona never makes the change"
    )
    if finding.candidates:
        which = ", ".join(f"{s} {i}" for s, i in finding.candidates[:-1])
        said = f", to {finding.said}" if finding.said else ""
        return (
            f"the text changes a sheet fact in prose{said}, but {which} and {' '.join(finding.candidates[-1])} "
            f"fit it about as well, {why}; add 'Edit <sheet> <id>: <the new text>' for the one it changes on "
            f"its own line"
        )
    holds = expected_facts(bench, phase.index, number).get((sheet, fact_id)) if fact_id else None
    if fact_id and holds is None:
        line = f"'Add to {sheet} category {fact_id.split('.')[0]}: <the new fact>'"
    elif finding.delete:
        line = f"'Edit {sheet} {fact_id}: —' (or its new text)"
    else:
        line = f"'Edit {sheet} {fact_id or '<id>'}: <the new text>'"
    what = f"{sheet} {fact_id}" if fact_id else f"the {sheet} sheet"
    now = f" (it holds {holds!r} here)" if holds else ""
    said = f", to {finding.said}" if finding.said else (", struck out" if finding.delete else "")
    return f"the text changes {what}{now} in prose{said}, {why}; add {line} on its own line"
