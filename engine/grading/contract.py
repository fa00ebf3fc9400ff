"""The grading contract and the persona's fidelity: a grade counts only when its premise held.

``log_evaluation`` is accepted only for a check of the current phase that was asked (a message went to the
agent after the phase began), alone in its message; attempt 2 only after attempt 1 of that check and a
further message, and final (a later attempt 1 is refused); every argument problem is reported at once.
When a check is graded, its premise is read from the transcript (``engine/grading/premises.py``): the values its
correct answer states, told before the question and after their last change. A fact the benchmark directs
(an ``Edit``/``Add to`` line) must also hold the directed text. Otherwise the grade measures the persona,
not the agent, and is kept as a **persona fault** with its evidence, out of the agent's score; the persona
is only told that the grade was set aside (the evidence is for the transcript and the report).
"""

from __future__ import annotations

from collections.abc import Callable

from engine.benchmark.answer_key import dependencies_of
from engine.benchmark.directives import Directive, directives_of, expected_fact
from engine.benchmark.model import DELETED, Benchmark, Check, Phase
from engine.benchmark.templates import render_templates
from engine.events import EvaluationLogged, Event
from engine.grading.asked import asked_checks, content_words
from engine.grading.premises import premise_of, set_aside_note
from engine.persona.notebook import ToolError
from engine.state import RunState

MAX_KEPT_REPLIES = 6  # agent replies kept for the next grade
MAX_REPLY_CHARS = 4000


def fact_key(sheet: str, fact_id: str) -> str:
    return f"{sheet} {fact_id}"


def same_text(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def _crop(text: str) -> str:
    return text if len(text) <= MAX_REPLY_CHARS else text[:MAX_REPLY_CHARS] + " …"


def keep_exchange(state: RunState, sent: str, replies: list[str]) -> None:
    """Remember the messages since the last grade and the agent's replies to the latest one (bounded):
    the question a grade answers, and the agent's verbatim answer."""
    state.sent_since_grade = (state.sent_since_grade + [_crop(sent)])[-MAX_KEPT_REPLIES:]
    state.last_replies = [_crop(r) for r in replies[-MAX_KEPT_REPLIES:]]


def forget_exchange(state: RunState) -> None:
    state.sent_since_grade = []
    state.last_replies = []


def looks_asked(question: str, sent: list[str]) -> bool:
    """Whether a message since the last grade shares a content word with the check's question (an
    LLM words the question its own way, but names what it asks about)."""
    wanted = content_words(question)
    return not wanted or any(wanted & content_words(text) for text in sent)


def evaluation_problems(
    state: RunState, bench: Benchmark, phase: Phase, check_id: str, score: float, attempt: int
) -> list[str]:
    """Every reason to refuse a ``log_evaluation`` call, each phrased so the persona can act on it."""
    problems: list[str] = []
    check = bench.check(check_id)
    here = [c.id for c in phase.checks]
    if check is None:
        listing = f"this phase's checks: {', '.join(here)}" if here else "this phase has no checks"
        problems.append(f"no check {check_id!r} in this benchmark ({listing})")
    elif check_id not in here:
        listing = f"this phase's checks: {', '.join(here)}" if here else "this phase has no checks"
        problems.append(
            f"check {check_id} is not part of the current phase ({listing}); grade a check only right after asking it in its phase"
        )
    if not 0 <= score <= 10:
        problems.append(f"score must be between 0 and 10, got {score:g}")
    if attempt not in (1, 2):
        problems.append(f"attempt must be 1 or 2, got {attempt}")
    if check is not None and check_id in here:
        last_grade = max(state.graded_at.values(), default=-1)
        if attempt != 2 and (
            state.messages_sent <= max(state.phase_first_message, last_grade)
            or not looks_asked(render_templates(check.question, state.start_date), state.sent_since_grade)
        ):
            problems.append(
                f"check {check_id} was not asked since the last grade: send its question alone with send_message first, then grade the reply"
            )
        previous = state.evaluations.get(check_id)
        asked_since = state.messages_sent > state.graded_at.get(check_id, -1)
        if (
            attempt == 1
            and previous is not None
            and previous.attempt == 2
            and previous.phase_index == state.phase_index
        ):
            problems.append(
                f"check {check_id} already has its final grade (attempt 2, #{previous.n}); grade the next check"
            )
        several = checks_asked(question_message(state, check.question), phase, state)
        if len(several) > 1:
            problems.append(
                f"the message you grade asked several checks at once ({', '.join(several)}): ask one question "
                f"per message, each alone with send_message, then grade each reply"
            )
        if attempt == 2:
            if previous is None or previous.phase_index != state.phase_index:
                problems.append(
                    f"attempt 2 of {check_id} needs an attempt 1 first: grade the first answer with attempt 1"
                )
            elif not asked_since:
                problems.append(
                    f"attempt 2 of {check_id} needs a further message: ask the assistant to search its memory and history, then grade that reply"
                )
    return problems


def log_evaluation(
    state: RunState,
    bench: Benchmark,
    phase: Phase,
    emit: Callable[[Event], None],
    check_id: str,
    score: float,
    attempt: int,
    answer: str,
    comment: str,
) -> str:
    """The ``log_evaluation`` tool: refused with every problem at once, or recorded (a regrade says what it
    replaces; a grade whose premise failed is recorded as a persona fault). Returns the persona's result."""
    problems = evaluation_problems(state, bench, phase, check_id, score, attempt)
    check = bench.check(check_id)
    if problems or check is None:
        raise ToolError("log_evaluation refused: " + "; ".join(problems))
    effective = score * (0.5 if attempt == 2 else 1.0)
    replaces = replaced_text(state, check_id)
    premise = premise_of(state, bench, check, question_number(state, check_id, check.question, attempt))
    fault = "; ".join(directed_faults(state, bench, check) + premise.faults)
    event = EvaluationLogged(
        check_id=check_id,
        score=score,
        attempt=attempt,
        effective=effective,
        question=render_templates(check.question, state.start_date),
        expected=render_templates(check.answer, state.start_date),
        answer=answer,
        comment=comment,
        types=check.types,
        phase_index=state.phase_index,
        replies=list(state.last_replies),
        persona_fault=fault,
        premise=premise.checked,
        replaces=replaces,
    )
    emit(event)  # stamps its transcript number
    state.evaluations[check_id] = event
    state.graded_at[check_id] = state.messages_sent
    forget_exchange(state)
    counted = f" (counted {effective:g} for a 2nd attempt)" if attempt == 2 else ""
    result = f"Logged {check_id}: {score:g}/10, attempt {attempt}{counted}."
    if replaces:
        result += f" This regrade replaces the earlier grade {replaces}; both stay in the record."
    if fault:  # what to tell, naming facts: the persona never learns the expected answer from it
        result += set_aside_note(premise)
    return result


def replaced_text(state: RunState, check_id: str) -> str:
    """What a regrade replaces, e.g. ``10/10, attempt 1 (#57)``; empty for a first grade."""
    previous = state.evaluations.get(check_id)
    if previous is None:
        return ""
    return f"{previous.score:g}/10, attempt {previous.attempt} (#{previous.n})"


def directed_faults(state: RunState, bench: Benchmark, check: Check) -> list[str]:
    """The facts ``check`` declares (KEY.md ``uses:``) that an ``Edit``/``Add to`` line of the benchmark
    directs, up to this phase, and that do not hold what the directives lead to at the check's line. A fact no line directs may hold
    whatever the persona wrote following the phase's prose: whether it was told is the transcript's
    business (``engine/grading/premises.py``)."""
    faults: list[str] = []
    for sheet_name, fact_id in dependencies_of(bench, check.id):
        if not _directed(bench, state.phase_index, sheet_name, fact_id):
            continue
        want = expected_fact(bench, state.phase_index, check.line, sheet_name, fact_id)
        if want is None:
            continue
        sheet = state.sheets.get(sheet_name)
        fact = sheet.find(fact_id) if sheet else None
        have = fact.text if fact else DELETED
        want_text = render_templates(want, state.start_date)
        if not same_text(have, want_text):
            faults.append(
                f"{sheet_name} {fact_id} holds {_quote(have)}, the benchmark directs {_quote(want_text)}"
            )
    return faults


def _directed(bench: Benchmark, phase_index: int, sheet: str, fact_id: str) -> bool:
    """Whether a directive of this phase or an earlier one changes the fact (then the benchmark states what
    it holds at each check: a check asked before or after its phase's edit as written)."""
    return any(
        (d.sheet, d.fact_id) == (sheet, fact_id)
        for index in range(phase_index + 1)
        for d in directives_of(bench, index)
    )


def question_message(state: RunState, question: str) -> str:
    """The latest message since the last grade that asks ``question`` (else the latest message)."""
    rendered = render_templates(question, state.start_date)
    return next(
        (text for text in reversed(state.sent_since_grade) if looks_asked(rendered, [text])),
        state.sent_since_grade[-1] if state.sent_since_grade else "",
    )


def question_number(state: RunState, check_id: str, question: str, attempt: int) -> int:
    """Which message (1-based over the run) asked the check graded now: for attempt 2, the one attempt 1
    answered; else the latest message since the last grade that looks like the question."""
    previous = state.evaluations.get(check_id)
    if attempt == 2 and previous is not None:
        return state.graded_at.get(check_id, state.messages_sent)
    rendered = render_templates(question, state.start_date)
    sent = state.sent_since_grade
    for back, text in enumerate(reversed(sent)):
        if looks_asked(rendered, [text]):
            return state.messages_sent - back
    return state.messages_sent


def checks_asked(message: str, phase: Phase, state: RunState) -> list[str]:
    """The checks of ``phase`` a message asks about, in its order, whatever its punctuation (two in one
    sentence, a list, an "Also, …" without a question mark: ``engine/grading/asked.py``); more than one means
    several questions in one message."""
    questions = {c.id: render_templates(c.question, state.start_date) for c in phase.checks}
    return asked_checks(message, questions)


def directive_problems(state: RunState, bench: Benchmark) -> list[str]:
    """The current phase's ``Edit``/``Add to`` lines not yet carried out: the sheet must hold exactly the
    directed text, and the fact must be told after the change. Gates ``next_phase``."""
    directives = directives_of(bench, state.phase_index)
    problems: list[str] = []
    for index, directive in enumerate(directives):
        later = [
            d for d in directives[index + 1 :] if (d.sheet, d.fact_id) == (directive.sheet, directive.fact_id)
        ]
        sheet = state.sheets.get(directive.sheet)
        want = render_templates(directive.text, state.start_date).strip()
        if directive.kind == "add":
            problem = _add_problem(state, directive, want) if not later else None
        elif want == DELETED:
            fact = sheet.find(directive.fact_id) if sheet else None
            readded = {render_templates(d.text, state.start_date).strip() for d in later if d.kind == "add"}
            done = fact is None or fact.text.strip() == DELETED or fact.text.strip() in readded
            problem = (
                None
                if done or (later and not readded)
                else (
                    f"`{directive.sheet}` {directive.fact_id} must be deleted: "
                    f"facts_edit({directive.sheet}, {directive.fact_id}, —), then tell the assistant"
                )
            )
        else:
            problem = None if later else _edit_problem(state, directive, want)
        if problem:
            problems.append(problem)
    return problems


def _edit_problem(state: RunState, directive: Directive, want: str) -> str | None:
    sheet = state.sheets.get(directive.sheet)
    fact = sheet.find(directive.fact_id) if sheet else None
    name, fact_id = directive.sheet, directive.fact_id
    if fact is None or not same_text(fact.text, want):
        return (
            f"`{name}` {fact_id} does not hold the directed text: facts_edit({name}, {fact_id}, text) "
            f"with exactly this text: «{want}»"
        )
    if fact_id not in state.told.get(name, []):
        return f"`{name}` {fact_id} was changed but not told: tell the assistant, then facts_mark_told({name}, [{fact_id}])"
    return None


def _add_problem(state: RunState, directive: Directive, want: str) -> str | None:
    """An added fact is found by its text in its category (its id may differ from the replay's)."""
    sheet = state.sheets.get(directive.sheet)
    name = directive.sheet
    category = next((c for c in sheet.categories if c.number == directive.category), None) if sheet else None
    fact = next((f for f in category.facts if same_text(f.text, want)), None) if category else None
    if fact is None:
        return (
            f"`{name}` category {directive.category} lacks the fact to add: facts_add({name}, "
            f"{directive.category}, text) with exactly this text: «{want}»"
        )
    if fact.id not in state.told.get(name, []):
        return f"`{name}` {fact.id} was changed but not told: tell the assistant, then facts_mark_told({name}, [{fact.id}])"
    return None


def _quote(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return f"'{text if len(text) <= limit else text[:limit] + '…'}'"
