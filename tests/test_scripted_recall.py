"""The ``scripted/recall`` baseline: answers questions from earlier user statements by word overlap."""

from __future__ import annotations

import random
import time

from engine.models.base import Message
from engine.models.scripted_recall import (
    _LEADING_TAG,
    _SEARCH_REQUEST,
    _SENTENCE_END,
    ACKNOWLEDGEMENT,
    DONT_KNOW,
    TOLD_PREFIX,
    RecallMemory,
    ScriptedRecallModel,
    _is_question,
    _text,
    answer,
    content_words,
)
from engine.models.tokens import count_text, count_tokens


def user(text: str) -> Message:
    return {"role": "user", "content": text}


def assistant(text: str) -> Message:
    return {"role": "assistant", "content": text}


def test_a_statement_is_acknowledged() -> None:
    assert answer([user("My sister Lena is 31 and works as a UX designer.")]) == "Noted."
    assert answer([]) == "Noted."


def test_a_question_is_answered_with_the_best_statement_verbatim() -> None:
    history = [
        user("My sister Lena is 31 and works as a UX designer."),
        assistant("Noted."),
        user("Our dog Biscuit is a beagle."),
        assistant("Noted."),
        user("What breed is Biscuit?"),
    ]
    assert answer(history) == "You told me: Our dog Biscuit is a beagle."


def test_statements_are_sentences_and_questions_are_never_answers() -> None:
    history = [
        user("Do you know where Lena works? She works at Figma in Berlin."),
        user("Where does Lena work?"),
    ]
    assert answer(history) == "You told me: She works at Figma in Berlin."


def test_numbers_count_as_content_words() -> None:
    history = [
        user("The flat on floor 3 costs 1200 euros."),
        user("The flat on floor 5 costs 1450 euros."),
        user("How much is the flat on floor 5?"),
    ]
    assert answer(history) == "You told me: The flat on floor 5 costs 1450 euros."


def test_ties_go_to_the_latest_statement() -> None:
    history = [
        user("My car is red."),
        user("Lena likes tea."),
        user("Actually my car is blue now, I had it repainted."),
        user("Which colour is my car?"),
    ]
    assert answer(history) == "You told me: Actually my car is blue now, I had it repainted."


def test_says_it_does_not_know_what_was_never_told() -> None:
    history = [user("Lena is 31."), user("What is my grandmother's maiden name?")]
    assert answer(history) == DONT_KNOW == "I don't know — you didn't tell me that."


def test_a_search_request_re_asks_the_previous_question() -> None:
    history = [
        user("Lena's birthday is March 14."),
        user("Our dog is called Biscuit."),
        user("When is Lena's birthday?"),
        assistant("I don't know — you didn't tell me that."),
        user("Please search your memory and history, I did tell you!"),
    ]
    assert answer(history) == "You told me: Lena's birthday is March 14."
    assert answer([user("Check your notes please.")]) == DONT_KNOW


def test_system_messages_time_stamps_and_assistant_turns_are_ignored() -> None:
    history = [
        {"role": "system", "content": "Current time: 2026-03-10 09:00. The dentist is on Friday."},
        user("[Tue 2026-03-10 09:00] My dentist appointment is on Thursday."),
        assistant("Your dentist appointment is on Monday."),
        {"role": "system", "content": "Current time: 2026-03-11 10:00"},
        user("[Wed 2026-03-11 10:00] When is my dentist appointment?"),
    ]
    assert answer(history) == "You told me: My dentist appointment is on Thursday."


def test_works_on_a_long_history() -> None:
    history: list[Message] = []
    for i in range(3000):
        history += [user(f"Note {i}: the shelf {i} holds box {i * 7}."), assistant("Noted.")]
    history.append(user("Which box is on shelf 1234?"))
    started = time.perf_counter()
    reply = answer(history)
    assert reply == "You told me: Note 1234: the shelf 1234 holds box 8638."
    assert time.perf_counter() - started < 2.0


async def test_the_model_fills_usage_with_token_counts() -> None:
    model = ScriptedRecallModel()
    history = [user("Lena is 31."), user("How old is Lena?")]
    completion = await model.complete(history)
    assert model.name == "scripted/recall"
    assert completion.content == "You told me: Lena is 31."
    assert completion.tool_calls == []
    assert completion.usage.prompt_tokens == count_tokens(history)
    assert completion.usage.completion_tokens == count_text("You told me: Lena is 31.")


# ---- the incremental reading answers exactly as a reread of the whole history did -------------------------


def _reference_answer(messages: list[Message]) -> str:
    """``answer`` as it was before ``Conversation``: every user text reread on every call."""
    texts = [
        text
        for m in messages
        if m.get("role") == "user" and (text := _LEADING_TAG.sub("", _text(m.get("content"))).strip())
    ]
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
    wanted = content_words(last)
    best: tuple[int, str] | None = None
    for text in earlier:
        for sentence in _SENTENCE_END.split(text):
            sentence = sentence.strip()
            if not sentence or _is_question(sentence):
                continue
            score = len(wanted & content_words(sentence))
            if wanted and score and (best is None or score >= best[0]):
                best = (score, sentence)
    return TOLD_PREFIX + best[1] if best else DONT_KNOW


_NAMES = ("Lena", "Tom", "Biscuit", "Otley", "the allotment", "my bike", "the flat")
_FACTS = ("costs $80", "is 31", "is a beagle", "is 35 km away", "holds box 12", "was repainted blue")


def _user_text(rng: random.Random, n: int) -> str:
    name, fact = rng.choice(_NAMES), rng.choice(_FACTS)
    kind = rng.random()
    if kind < 0.35:
        return f"[Tue 2026-03-{10 + n % 18} 10:00] {name} {fact}. Also {rng.choice(_NAMES)} {rng.choice(_FACTS)}!"
    if kind < 0.6:
        return f"What about {name}? How much {rng.choice(('costs', 'is', 'holds'))} {name} now?"
    if kind < 0.7:
        return "Please search your memory and our earlier conversation: " + rng.choice(_NAMES) + "?"
    if kind < 0.75:
        return rng.choice(("List my rides.", "   ", "[Wed 10:00]", "Check your notes please."))
    return f"{name} {fact} … and {n} more\n\n{rng.choice(_NAMES)} {rng.choice(_FACTS)}."


def test_answers_on_a_fixed_history_equal_a_full_reread() -> None:
    rng = random.Random(5)
    model = ScriptedRecallModel()
    history: list[Message] = []
    for n in range(400):
        asked = user(_user_text(rng, n))
        messages = [{"role": "system", "content": "Be concise."}, *history, asked]  # as the chatbot sends it
        reply, tokens = model.memory.reply(messages)
        assert reply == _reference_answer(messages), n
        assert tokens == count_tokens(messages)
        history += [user(str(asked["content"])), assistant(reply)]  # copies of what was asked


def test_retries_and_interleaved_conversations_answer_as_a_full_reread() -> None:
    rng = random.Random(8)
    memory = RecallMemory(size=2)
    histories: list[list[Message]] = [[], [], []]  # three conversations through a memory of two
    for n in range(300):
        history = histories[rng.randrange(3)]
        history.append(user(_user_text(rng, n)))
        if rng.random() < 0.1 and len(history) > 4:  # a failed send retried with other words
            history[-1] = user(_user_text(rng, n + 1))
        if rng.random() < 0.05:
            del history[rng.randrange(len(history)) :]  # a conversation cut back
        reply, tokens = memory.reply(history)
        assert reply == _reference_answer(history), n
        assert tokens == count_tokens(history)
        history.append(assistant(reply))
    assert answer(histories[0]) == _reference_answer(histories[0])
