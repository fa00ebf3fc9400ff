"""Injected persona-model misbehaviour and transport faults: hooks fire, the run recovers or waits."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from engine_helpers import FORGETFUL, events, kinds, make_config, play

from engine.event_summary import summary
from engine.events import ErrorOccurred, TerminationReason
from engine.models.server import start_server
from engine.persona.hooks import PLAIN_TEXT_NOTE


@pytest.fixture
async def server_port() -> AsyncIterator[int]:
    runner, port = await start_server("127.0.0.1", 0, hang_seconds=30)
    yield port
    await runner.cleanup()


async def test_hooks_fire_on_injected_misbehaviour_and_the_run_recovers(tmp_path: Path) -> None:
    persona = "scripted/persona?faults=3:plain_text,6:echo,9:bad_args,12:empty,13:empty,14:empty"
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL, "persona": persona}})
    run = await play(config, "r")
    assert run.termination is TerminationReason.FINISHED
    evts = events(config, "r")
    hooks = [e.hook for e in kinds(evts, "hook_fired")]
    assert "plain_text_guard" in hooks and "echo_guard" in hooks
    assert any(e.error and "not valid JSON" in e.result for e in kinds(evts, "tool_called"))
    assert any("empty completion" in e.message for e in kinds(evts, "error"))
    # the plain text never reached the agent; the echo cycle was discarded
    assert run.adapter.received == len(kinds(evts, "message_sent"))  # type: ignore[attr-defined]
    assert len(run.state.evaluations) == 5


async def test_hooks_off_plain_text_goes_to_the_agent(tmp_path: Path) -> None:
    persona = "scripted/persona?faults=3:plain_text"
    config = make_config(
        tmp_path,
        {"r": {"benchmark": "full", "agent": FORGETFUL, "persona": persona}},
        hooks={"plain_text_guard": False, "echo_guard": False},
    )
    run = await play(config, "r")
    assert not kinds(events(config, "r"), "hook_fired")
    assert run.termination is TerminationReason.FINISHED


async def test_recovery_from_every_transport_fault(tmp_path: Path, server_port: int) -> None:
    models = {
        "p": {
            "base_url": f"http://127.0.0.1:{server_port}/v1",
            "model": "scripted/persona?faults=2:429,4:500,6:hang,8:bad_args,10:empty,12:plain_text,14:echo",
            "timeout": 1.5,
            "max_retries": 3,
        }
    }
    config = make_config(
        tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL, "persona": "p"}}, models=models
    )
    run = await play(config, "r")
    assert run.termination is TerminationReason.FINISHED
    assert len(run.state.evaluations) == 5
    assert run.meter.get("persona").calls > 10


async def test_a_dead_model_puts_the_run_in_waiting_without_losing_anything(tmp_path: Path) -> None:
    models = {"p": {"base_url": "http://127.0.0.1:9/v1", "model": "x", "timeout": 0.5, "max_retries": 0}}
    config = make_config(
        tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL, "persona": "p"}}, models=models
    )
    run = await play(config, "r")
    assert run.termination is TerminationReason.WAITING
    assert run.state.status == "waiting" and "persona model" in run.state.reason
    assert (
        "Incomplete: waiting" in (config.results_path() / "report.md").read_text()
    )  # resumable, reported so far
    assert (config.results_path() / "r" / "state.json").exists()
    assert run.state.phases_started == 1


async def test_api_keys_never_reach_results(
    tmp_path: Path, server_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-SECRET-5f1e2d3c4b5a69788796"
    monkeypatch.setenv("MMB_TEST_KEY", secret)
    endpoint = {"base_url": f"http://127.0.0.1:{server_port}/v1", "api_key_env": "MMB_TEST_KEY"}
    models = {
        "p": {**endpoint, "model": "scripted/persona?faults=2:429"},
        "a": {**endpoint, "model": "scripted/recall"},
    }
    config = make_config(
        tmp_path,
        {"r": {"benchmark": "full", "agent": "chatbot", "model": "a", "persona": "p"}},
        models=models,
    )
    run = await play(config, "r")
    assert run.termination is TerminationReason.FINISHED
    files = [p for p in config.results_path().rglob("*") if p.is_file()]
    assert any(p.name == "transcript.jsonl" for p in files) and any(p.name == "state.json" for p in files)
    for path in files:
        assert secret not in path.read_text(errors="replace"), path


async def test_missing_key_is_a_clear_one_line_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.config import BuildError
    from engine.run.build import build_run

    monkeypatch.delenv("MMB_ABSENT_KEY", raising=False)
    models = {"p": {"base_url": "http://127.0.0.1:9/v1", "model": "x", "api_key_env": "MMB_ABSENT_KEY"}}
    config = make_config(
        tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL, "persona": "p"}}, models=models
    )
    with pytest.raises(BuildError, match="MMB_ABSENT_KEY is not set") as info:
        build_run(config, "r")
    assert "\n" not in str(info.value)


async def test_an_agent_that_fails_is_revived_and_the_run_goes_on(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": "fixture_agents:FlakyAgent"}})
    run = await play(config, "r")
    assert run.termination is TerminationReason.FINISHED
    evts = events(config, "r")
    assert any("crashed" in e.message for e in kinds(evts, "error"))
    assert run.adapter.sessions == 2  # type: ignore[attr-defined]  # started again after the crash
    assert [e.status for e in kinds(evts, "status")].count("waiting") == 1
    assert len(run.state.evaluations) == 5


async def test_provider_reasoning_is_kept_as_persona_thinking(tmp_path: Path, server_port: int) -> None:
    models = {
        "p": {"base_url": f"http://127.0.0.1:{server_port}/v1", "model": "scripted/persona?reasoning=1"}
    }
    config = make_config(
        tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL, "persona": "p"}}, models=models
    )
    await play(config, "r")
    thinking = kinds(events(config, "r"), "persona_thinking")
    assert thinking and all(e.text.strip() for e in thinking)


async def test_a_crashed_run_is_reported_with_its_coverage_audit(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": "fixture_agents:BuggyAgent"}})
    run = await play(config, "r")
    assert run.termination is TerminationReason.CRASHED
    report = (config.results_path() / "report.md").read_text()
    assert "r: full @ buggy" in report
    assert "Check coverage: 0/5" in report and "Not graded: 1.1, 2.1, 2.2, 2.3, 2.4" in report
    assert "Incomplete: crashed" in report
    assert any(e.fatal and "adapter bug" in e.message for e in kinds(events(config, "r"), "error"))


# --- a message in flight at a failure: checked with the agent before it goes again (issue 11, finding 12) ---


def _user_messages(session: list[tuple[str, str]]) -> list[str]:
    return [text for role, text in session if role == "user"]


async def test_a_message_the_agent_answered_before_a_timeout_is_collected_not_sent_again(
    tmp_path: Path,
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    baseline = make_config(tmp_path / "a", {"r": {"benchmark": "full", "agent": FORGETFUL}})
    expected = {k: e.score for k, e in (await play(baseline, "r")).state.evaluations.items()}
    late = {"benchmark": "full", "agent": "fixture_agents:LateAgent", "lost": "reply"}
    config = make_config(tmp_path / "b", {"r": late})
    run = await play(config, "r")
    assert run.termination is TerminationReason.FINISHED
    sent = kinds(events(config, "r"), "message_sent")
    assert [e.redelivery for e in sent if e.redelivery] == ["collected"]
    assert run.adapter.checked == [next(e.text for e in sent if e.redelivery)]  # type: ignore[attr-defined]
    users = _user_messages(run.adapter.session)  # type: ignore[attr-defined]
    # the failed attempt and the collected one are one message in the agent's session: it holds each once
    assert users == [e.text for e in sent if e.redelivery != "collected"]
    assert len(users) == len(sent) - 1
    assert {k: e.score for k, e in run.state.evaluations.items()} == expected


async def test_a_message_that_arrived_unanswered_is_sent_again_and_marked_duplicated(tmp_path: Path) -> None:
    late = {"benchmark": "full", "agent": "fixture_agents:LateAgent", "lost": "store"}
    config = make_config(tmp_path, {"r": late})
    run = await play(config, "r")
    assert run.termination is TerminationReason.FINISHED
    evts = events(config, "r")
    marked = [e for e in kinds(evts, "message_sent") if e.redelivery]
    assert [e.redelivery for e in marked] == ["duplicated"]
    users = _user_messages(run.adapter.session)  # type: ignore[attr-defined]
    assert users == [e.text for e in kinds(evts, "message_sent")]  # the attempt and the one sent again
    assert users.count(marked[0].text) == 2
    assert "sent again: twice in the agent's session" in summary(marked[0])


async def test_an_agent_that_cannot_check_gets_the_message_again_marked_possibly_duplicated(
    tmp_path: Path,
) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": "fixture_agents:FlakyAgent"}})
    await play(config, "r")
    marked = [e.redelivery for e in kinds(events(config, "r"), "message_sent") if e.redelivery]
    assert marked == ["possibly_duplicated"]  # the default check_delivery cannot tell


async def test_the_plain_text_guard_drops_the_hallucinated_turn_from_the_context(tmp_path: Path) -> None:
    persona = "scripted/persona?faults=3:plain_text"
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL, "persona": persona}})
    run = await play(config, "r")
    evts = events(config, "r")
    fired = next(e for e in kinds(evts, "hook_fired") if e.hook == "plain_text_guard")
    thought = [e.text for e in kinds(evts, "persona_thinking") if e.n < fired.n][-1]  # kept in the transcript
    contents = [str(m.get("content") or "") for m in run.state.persona_messages]
    assert thought not in contents  # not in the persona's context
    assert any(c == PLAIN_TEXT_NOTE for c in contents)  # a note stands in its place
    assert run.termination is TerminationReason.FINISHED


def test_an_error_is_said_whole_where_the_whole_line_is_shown() -> None:
    # a results folder deep in the file system must not push the cause of a fatal error out of its line
    folder = "/srv/" + "/".join(f"a-rather-long-folder-name-{n}" for n in range(12))
    message = (
        f"{folder}/results/r/state.json: unreadable run state (transcript.jsonl: shorter than the checkpoint)"
    )
    event = ErrorOccurred(message=message, where="engine", fatal=True)
    assert summary(event, full=True) == f"fatal: [engine] {message}"
    assert summary(event).endswith("…") and len(summary(event)) < len(message)  # the TUI's short line
