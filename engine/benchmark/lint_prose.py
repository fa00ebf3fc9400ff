"""Sheet changes a phase tells in prose, found by what the prose says rather than by a fact id it names.

Each clause of the phase's prose (``lint_text.py``) is attributed to the live fact that fits it best: the
fact's own words it shares weigh most (a word few facts have more than a common one), then the rest of its
sentence, the sentence before and the phase title, the fact's category and sheet a little; a value of the
kind the fact holds counts, more when of the same order, and most an old value the fact holds ("from $42",
"not the 14th") or a figure of the fact said again beside a new one of its kind ("1:50 is too soft: 1:45").
A fact is a candidate only when it shares enough of its own words with the clause's sentence, holds one of
its values, or holds the only figures of that kind in a sheet the sentence speaks of ("our flight got moved
to 19 May"); and only when it can hold the clause's new figures (a bare number may be anything, "£2,900" is
no age).

It is a change when it says so ("instead", "went up", "moved to", "turns out", an old value beside a new
one) and states a value the fact does not hold, or with a word of cancelling ("we dropped the gym") or of
swapping ("we'll go with oak instead") none; when a word like "now" or "booked" goes with such a value and
the fact's words; when the fact waits for its value ("Hotel — not booked yet"); or when the clause says a
value of the fact's kind with several of the fact's own words. Not a change: a value said as the fact holds
it, a value said as the old one, an old value the fact never held ("8.4 km, not 8" of a run no sheet keeps),
a question, a clause that says nothing changed ("still", "as planned"), a change a directive of the phase
makes (its fact, or the new value a directive writes). When two facts fit about as well the finding names
both rather than guess; when none fits well enough there is no finding: prose also tells things no sheet
keeps. The benchmark is read once, in order: a fact changed or struck in prose is not reported again where a
later phase says its new value again.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

from engine.benchmark.directives import cached, directives_of, expected_facts
from engine.benchmark.lint_text import Clause, Statement, statements, units
from engine.benchmark.lint_values import (
    Value,
    content_stems,
    kind_fit,
    near,
    placeholder,
    same,
    spell_out,
    values_in,
    without_figures,
)
from engine.benchmark.model import DELETED, Benchmark, Phase

Key = tuple[str, str]  # (sheet, fact id)
_OWN, _CATEGORY, _SHEET = 1.0, 0.6, 0.4  # what a word of the fact, of its category, of its sheet says
_SENTENCE, _CONTEXT = 0.5, 0.3  # what the rest of the sentence, the sentence before and the title say
_ELIGIBLE = 0.65  # the fact's own words a clause must share (unless it says a value the fact holds)
_PLAIN = ("", "name", "weekday")  # kinds of value too common to know a fact by
_LEAD = 1.25  # how many times better than the next the best fact must fit to be named alone


@dataclass(frozen=True)
class Finding:
    """A change told in prose: where, of which fact (or the facts it may be, when unclear), what it says."""

    line: int
    sheet: str
    fact_id: str  # "" when unclear
    delete: bool = False
    candidates: tuple[Key, ...] = ()  # when unclear: the facts that fit about as well
    said: str = ""  # the new values as written
    values: tuple[Value, ...] = ()


@dataclass(frozen=True)
class _Profile:
    """A fact as the lint compares it: its words with their weight, its values, whether it waits for one."""

    stems: dict[str, float]
    values: tuple[Value, ...]
    waiting: bool
    names: frozenset[str]  # its capitalised words, the first one too ("Spotify family plan")


@dataclass
class _Facts:
    """The live facts at the start of a phase: profiles, word weights, and which facts hold a word or value."""

    texts: dict[Key, str]
    profiles: dict[Key, _Profile]
    idf: dict[str, float]
    index: dict[str, set[Key]]  # a word or a value's key -> the facts holding it
    kinds: dict[str, set[Key]]  # a kind of value -> the facts holding one


@dataclass
class _Reading:
    """The read of a benchmark so far: values told in prose per fact, facts struck in prose, the names the
    sheets use, the last phase's facts (most phases change none)."""

    told: dict[Key, list[Value]]
    struck: set[Key]
    known_names: frozenset[str]
    skip_names: frozenset[str]  # sheet names and titles: subjects, not values
    facts: _Facts | None = None


def prose_findings(bench: Benchmark, phase: Phase) -> list[Finding]:
    """The changes of sheet facts ``phase`` tells in prose with no directive for them (the benchmark is read
    once: a change already found is not found again in a later phase)."""
    return cached("prose findings", bench, _read_benchmark).get(phase.index, [])


def _read_benchmark(bench: Benchmark) -> dict[int, list[Finding]]:
    titles = {w.lower().strip(".'’") for s in bench.sheets.values() for w in f"{s.name} {s.title}".split()}
    texts = [f.text for s in bench.sheets.values() for f in s.live_facts()]
    names = {w.lower() for t in texts for w in re.findall(r"\b[A-ZÀ-ÖØ-Þ][\w'’-]*", t)}  # "Council tax" too
    reading = _Reading({}, set(), known_names=frozenset(names | titles), skip_names=frozenset(titles))
    found: dict[int, list[Finding]] = {}
    for phase in bench.phases:
        found[phase.index] = _read_phase(bench, phase, reading)
        for directive in directives_of(bench, phase.index):  # a directive sets the fact again
            reading.told.pop((directive.sheet, directive.fact_id), None)
            reading.struck.discard((directive.sheet, directive.fact_id))
    return found


def _read_phase(bench: Benchmark, phase: Phase, reading: _Reading) -> list[Finding]:
    directives = directives_of(bench, phase.index)
    directed = {(d.sheet, d.fact_id) for d in directives}
    written = [v for d in directives for v in _fact_values(d.text)]
    facts = _facts_at(bench, phase, reading)
    title = content_stems(phase.title)
    found: dict[tuple[str, str, tuple[Key, ...]], Finding] = {}
    struck = set(reading.struck)  # and those struck in this phase so far: no rival to another fact
    for text, line_starts in units(bench, phase):
        previous: set[str] = set()
        for statement in statements(text, line_starts, reading.skip_names):
            context = (previous | title) - statement.stems
            previous = statement.stems
            if statement.question or not (statement.cue or any(c.values for c in statement.clauses)):
                continue
            for clause in statement.clauses:
                finding = _attribute(statement, clause, context, facts, reading, struck)
                if finding is None:
                    continue
                key = (finding.sheet, finding.fact_id, finding.candidates)
                if set(finding.candidates or [key[:2]]) & directed or _written(clause, written):
                    continue
                if key not in found or (found[key].delete and not finding.delete):
                    found[key] = _replacing(found.get(key), finding)  # "cancelled; booked X instead"
                    if finding.delete:
                        struck.add(key[:2])
    named = {key[:2] for key in found if not key[2]}
    for finding in (f for f in found.values() if f.fact_id):
        reading.told.setdefault((finding.sheet, finding.fact_id), []).extend(finding.values)
        if finding.delete:
            reading.struck.add((finding.sheet, finding.fact_id))
    # a change unclear in one clause and clear in another is that clear change
    return sorted((f for f in found.values() if not named & set(f.candidates)), key=lambda f: f.line)


def _replacing(earlier: Finding | None, finding: Finding) -> Finding:
    """A change found again in the phase: an edit replaces a deletion, at the deletion's line."""
    if earlier is None:
        return finding
    return Finding(earlier.line, finding.sheet, finding.fact_id, False, (), finding.said, finding.values)


def _written(clause: Clause, written: list[Value]) -> bool:
    """A new value of the clause is one a directive of the phase writes: the change is directed."""
    return any(not v.old and v.kind != "name" and any(same(v, w) for w in written) for v in clause.values)


# ---- the facts a clause may change -----------------------------------------------------------------


def _facts_at(bench: Benchmark, phase: Phase, reading: _Reading) -> _Facts:
    """The live facts at the start of ``phase``, read again only when a directive changed them."""
    texts = {k: t for k, t in expected_facts(bench, phase.index, phase.line).items() if t.strip() != DELETED}
    if reading.facts is not None and reading.facts.texts == texts:
        return reading.facts
    old = reading.facts.profiles if reading.facts else {}
    before = reading.facts.texts if reading.facts else {}
    profiles = {k: old[k] if before.get(k) == t else _profile(bench, k, t) for k, t in texts.items()}
    counts: dict[str, int] = {}
    index: dict[str, set[Key]] = {}
    kinds: dict[str, set[Key]] = {}
    for key, profile in profiles.items():
        for word in profile.stems:
            counts[word] = counts.get(word, 0) + 1
        for item in [*profile.stems, *(k for v in profile.values for k in v.keys)]:
            index.setdefault(item, set()).add(key)
        for value in profile.values:
            kinds.setdefault(value.kind, set()).add(key)
    total = math.log(1 + max(len(profiles), 2))
    idf = {word: math.log(1 + len(profiles) / n) / total for word, n in counts.items()}  # 1: one fact's
    reading.facts = _Facts(texts, profiles, idf, index, kinds)
    return reading.facts


@lru_cache(maxsize=8192)
def _fact_values(text: str) -> tuple[Value, ...]:
    return tuple(values_in(spell_out(text), fact=True))


def _profile(bench: Benchmark, key: Key, text: str) -> _Profile:
    sheet = bench.sheets[key[0]]
    sheet_words = content_stems(f"{sheet.name} {sheet.title}")
    category = next((c.name for c in sheet.categories if str(c.number) == key[1].split(".")[0]), "")
    stems = dict.fromkeys(sheet_words, _SHEET)
    stems |= dict.fromkeys(content_stems(category) - sheet_words, _CATEGORY)
    values = _fact_values(text)
    stems |= dict.fromkeys(content_stems(without_figures(spell_out(text), list(values))) - sheet_words, _OWN)
    names = frozenset(w.lower() for w in re.findall(r"\b[A-ZÀ-ÖØ-Þ][\w'’-]*", text))
    return _Profile(stems, values, placeholder(text), names)


# ---- which fact a clause changes, and whether it does --------------------------------------------


@dataclass(frozen=True)
class _Fit:
    key: Key
    total: float
    own: float  # the fact's own words the clause and its sentence share (each by how few facts have it)
    old: bool  # an old value of the clause is one the fact holds
    pair: bool  # the clause says a figure the fact holds and another of its kind
    rare: bool  # the clause changes a value of a kind only this fact and one other hold


def _fit(statement: Statement, clause: Clause, context: set[str], key: Key, facts: _Facts) -> _Fit:
    profile = facts.profiles[key]
    words = own = 0.0
    for stems, weight in (
        (clause.stems, 1.0),
        (statement.stems - clause.stems, _SENTENCE),
        (context, _CONTEXT),
    ):
        for word in stems & profile.stems.keys():
            words += weight * profile.stems[word] * facts.idf[word]
            if profile.stems[word] == _OWN and weight > _CONTEXT:  # the title and sentence before only help
                own += facts.idf[word]
    new = [v for v in clause.values if not v.old]
    old = any(same(v, f) and kind_fit(v, f) for v in clause.values if v.old for f in profile.values)
    restated = [f for v in new for f in profile.values if f.kind not in _PLAIN and same(v, f)]
    pair = any(
        kind_fit(v, f) == 1.0 and not same(v, f) and not _elsewhere(v, key, facts)
        for v in new
        for f in restated
    )
    kind = 0.0
    for value in (v for v in new if v.kind != "name"):
        for held in profile.values:
            fit = kind_fit(value, held)
            kind = max(kind, fit + (0.3 if fit and near(value, held) else 0.0))
    rare = statement.cue in (
        "edit",
        "weak",
    ) and any(  # a new value of a kind only this fact and one other hold
        key in facts.kinds.get(v.kind, ()) and len(facts.kinds[v.kind]) <= 2
        for v in new
        if v.kind not in _PLAIN
    )
    named = any(v.keys <= profile.names for v in new if v.kind == "name")  # "cancelled Spotify"
    total = words + kind + (1.5 if old or pair else 0.0) + (0.5 if named else 0.0)
    return _Fit(key, total, own, old, pair, rare)


def _attribute(
    statement: Statement,
    clause: Clause,
    context: set[str],
    facts: _Facts,
    reading: _Reading,
    struck: set[Key],
) -> Finding | None:
    """The change ``clause`` tells, of the fact it fits best (or the facts it may be), or None; ``struck``:
    the facts struck in prose so far (in an earlier phase: warned of already)."""
    fits = _candidates(statement, clause, context, facts, struck - reading.struck)
    if not fits or fits[0].key in reading.struck:
        return None
    best = fits[0]
    told = tuple(reading.told.get(best.key, ()))
    change = _change(statement, clause, best, facts, told, reading.known_names)
    if change is None:
        return None
    delete, values = change
    line = statement.line_at(values[0].start if values else clause.start)
    said = ", ".join(statement.text[v.start - statement.offset : v.end - statement.offset] for v in values)
    rivals = tuple(f.key for f in fits[1:3] if f.total * _LEAD > best.total and f.key not in struck)
    if rivals:
        return Finding(line, best.key[0], "", delete, (best.key, *rivals), said)
    return Finding(line, best.key[0], best.key[1], delete, (), said, tuple(values))


def _candidates(
    statement: Statement, clause: Clause, context: set[str], facts: _Facts, struck_here: set[Key]
) -> list[_Fit]:
    """The facts the clause may change, best fit first: those sharing its words, holding its values, or
    holding a rare kind of them; each must share enough of its own words with the clause or be known by a
    value (an old one it holds, a figure said again), and be able to hold the clause's new figures."""
    known_by = [v for v in clause.values if v.old or v.kind not in _PLAIN]
    keys = {k for s in statement.stems | context for k in facts.index.get(s, ())}
    keys |= {k for v in known_by for item in v.keys for k in facts.index.get(item, ())}
    keys |= {
        k for v in known_by if len(facts.kinds.get(v.kind, ())) <= 2 for k in facts.kinds.get(v.kind, ())
    }
    fits = sorted((_fit(statement, clause, context, k, facts) for k in keys), key=lambda f: (-f.total, f.key))
    sheets = {f.key[0] for f in fits if f.own >= _ELIGIBLE}  # "our flight …" is of the trip sheet
    replaced = struck_here if clause.swap else set()  # "QuickVan cancelled. Booked Zipvans instead."
    figures = [v for v in clause.values if not v.old and v.kind != "name"]
    return [
        f
        for f in fits
        if (f.own >= _ELIGIBLE or f.old or f.pair or (f.rare and f.key[0] in sheets) or f.key in replaced)
        and (statement.cue == "delete" or _may_hold(facts.profiles[f.key], figures))
    ]


def _change(
    statement: Statement,
    clause: Clause,
    best: _Fit,
    facts: _Facts,
    told: tuple[Value, ...],
    known: frozenset[str],
) -> tuple[bool, list[Value]] | None:
    """(a deletion?, the new values) when the clause changes the fact of ``best`` (``told``: the values the
    prose gave it before), else None."""
    profile = facts.profiles[best.key]
    held = profile.values + told
    new = [v for v in clause.values if not v.old]
    old = [v for v in clause.values if v.old]
    if not best.old and any(kind_fit(o, h) for o in old for h in held):
        return None  # "8.4 km, not 8" where the fact never held 8: something else changed
    differing = [
        v for v in new if _differs(v, held, known, profile.waiting) and not _elsewhere(v, best.key, facts)
    ]
    if not differing:
        if statement.cue == "delete" and not statement.no_change:
            return True, []
        restated = any(same(v, h) for v in new for h in held)
        if clause.swap and best.own >= 0.8 and not restated and not old:
            return False, []  # "we'll go with oak instead"
        return None
    if statement.cue in ("edit", "delete") or best.pair:
        return False, differing
    if statement.no_change:
        return None
    if (profile.waiting or statement.cue == "weak") and best.total >= 1.0:
        return False, differing  # "booked the hotel: …", "rent now £1,500"
    if best.own >= 1.5 and any(
        kind_fit(v, h) == 1.0 and v.kind not in _PLAIN for v in differing for h in held
    ):
        return False, differing  # the fact's own words and a value of its kind, said differently
    return None


def _elsewhere(value: Value, key: Key, facts: _Facts) -> bool:
    """A figure another fact holds as it is said: "the phone £18" beside the rent tells the phone's value."""
    if value.kind in _PLAIN:
        return False
    others = {k for item in value.keys for k in facts.index.get(item, ())} - {key}
    return any(kind_fit(value, h) == 1.0 and same(value, h) for k in others for h in facts.profiles[k].values)


def _may_hold(profile: _Profile, figures: list[Value]) -> bool:
    """Whether a fact may be the one a clause's new figures change: it holds one of their kind (a bare
    number may be any; "£2,900" is no age), or holds no figure at all (a name, a plan)."""
    held = [h for h in profile.values if h.kind != "name"]
    return not figures or not held or any(_may_be(v, h) for v in figures for h in held)


def _may_be(value: Value, held: Value) -> bool:
    fit = kind_fit(value, held)
    return fit >= 0.5 or (fit > 0 and (not value.kind or value.kind.startswith("w:")))


def _differs(value: Value, held: tuple[Value, ...], known: frozenset[str], waiting: bool) -> bool:
    """A value the fact does not hold, of a kind it has; a name only when new to the benchmark and the fact
    has names (or waits for its value)."""
    if any(same(value, h) for h in held):
        return False
    if value.kind == "name":
        return not value.keys <= known and (waiting or any(h.kind == "name" for h in held))
    if not held:
        return waiting
    return any(kind_fit(value, h) > 0 for h in held)
