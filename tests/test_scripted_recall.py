"""The ``scripted/recall`` baseline: answers questions from earlier user statements by word overlap."""

from __future__ import annotations

import time

from engine.models.base import Message
from engine.models.scripted_recall import DONT_KNOW, ScriptedRecallModel, answer
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
