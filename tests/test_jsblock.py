"""Phase JS blocks (SPEC §3.2): sandboxed QuickJS, awaited host calls, vars read back, errors with lines."""

from __future__ import annotations

import asyncio
import time

import pytest

from engine.benchmark.jsblock import JsBlockError, check_block, dry_run_block, run_block


class RecordingHost:
    """A BenchHost that records when new_session ran, relative to the block's own steps."""

    def __init__(self) -> None:
        self.sessions = 0

    async def new_session(self) -> None:
        await asyncio.sleep(0.01)  # a real await: the block must wait for it
        self.sessions += 1


async def test_new_session_is_awaited_and_vars_read_back() -> None:
    host = RecordingHost()
    code = 'vars.require_all_facts = "family";\nawait bench.newSession();\nawait bench.newSession();\nvars.require_all_checks = true;'
    assert await run_block(code, host) == {"require_all_facts": "family", "require_all_checks": True}
    assert host.sessions == 2


async def test_block_sees_the_session_switch_completed() -> None:
    host = RecordingHost()
    code = "const before = Date.now();\nawait bench.newSession();\nvars.require_all_checks = Date.now() - before >= 5;"
    assert await run_block(code, host) == {"require_all_checks": True}


async def test_list_of_sheets_and_empty_block() -> None:
    host = RecordingHost()
    assert await run_block('vars.require_all_facts = ["family", "car"];', host) == {
        "require_all_facts": ["family", "car"]
    }
    assert await run_block("", host) == {}
    assert host.sessions == 0


async def test_host_errors_propagate_unchanged() -> None:
    class FailingHost:
        async def new_session(self) -> None:
            raise ConnectionError("agent down")

    with pytest.raises(ConnectionError, match="agent down"):
        await run_block("await bench.newSession();", FailingHost())


async def test_infinite_loop_is_interrupted() -> None:
    started = time.monotonic()
    with pytest.raises(JsBlockError, match="time limit") as caught:
        await run_block("while (true) {}", RecordingHost(), time_limit=0.2)
    assert time.monotonic() - started < 2
    assert caught.value.line == 0


async def test_time_limit_is_shared_across_steps() -> None:
    code = "await bench.newSession();\nwhile (true) {}"
    with pytest.raises(JsBlockError, match="time limit"):
        await run_block(code, RecordingHost(), time_limit=0.2)


async def test_memory_limit() -> None:
    with pytest.raises(JsBlockError, match="memory limit"):
        await run_block(
            'let a = [];\nwhile (true) a.push("x".repeat(100000));', RecordingHost(), time_limit=5
        )


@pytest.mark.parametrize(
    ("code", "line", "fragment"),
    [
        ("let a = 1;\nlet b = ;", 2, "SyntaxError"),
        ("let a = 1;\n\nmissing();", 3, "ReferenceError: missing is not defined"),
        ('vars.require_all_facts = "x";\nthrow new Error("boom");', 2, "Error: boom"),
        ("vars.foo = 1;", 1, "unknown vars key 'foo'"),
        ("// comment\nawait bench.reset();", 2, "unknown bench member 'reset'"),
        ("vars = {};", 1, "read-only"),
        ("vars.require_all_facts = 3;", 1, "must be a sheet name"),
        ("vars.require_all_checks = 'yes';", 1, "must be true or false"),
        ("await new Promise(() => {});", 0, "never settles"),
    ],
)
async def test_errors_carry_block_lines(code: str, line: int, fragment: str) -> None:
    with pytest.raises(JsBlockError) as caught:
        await run_block(code, RecordingHost())
    assert caught.value.line == line
    assert fragment in caught.value.message


async def test_no_module_loading_network_or_files() -> None:
    code = (
        "vars.require_all_facts = [typeof require, typeof fetch, typeof XMLHttpRequest, typeof std,"
        " typeof os, typeof process, typeof Deno].join(',');"
    )
    assert await run_block(code, RecordingHost()) == {"require_all_facts": ",".join(["undefined"] * 7)}
    with pytest.raises(JsBlockError):
        await run_block('await import("std");', RecordingHost())
    with pytest.raises(JsBlockError, match="ReferenceError"):
        await run_block('require("fs").readFileSync("/etc/passwd");', RecordingHost())


def test_check_block_collects_every_problem() -> None:
    code = (
        'vars.require_all_facts = ["family", "car"];\n'
        "vars.require_facts = 1;\n"
        "const x = vars.colour;\n"
        "await bench.newSession();\n"
        "await bench.reset();\n"
        "vars.require_all_checks = 1;"
    )
    assert check_block(code) == [
        (2, "unknown vars key 'require_facts' (known: require_all_facts, require_all_checks)"),
        (3, "unknown vars key 'colour' (known: require_all_facts, require_all_checks)"),
        (5, "unknown bench member 'reset' (known: newSession)"),
        (6, "vars.require_all_checks must be true or false, not 1"),
    ]


def test_dry_run_returns_vars_and_sheet_names_with_lines() -> None:
    result = dry_run_block(
        'await bench.newSession();\nvars.require_all_facts = ["family", "car"];\nvars.require_all_checks = true;'
    )
    assert result.problems == []
    assert result.vars == {"require_all_facts": ["family", "car"], "require_all_checks": True}
    assert result.sheet_refs == [(2, "family"), (2, "car")]


@pytest.mark.parametrize(
    ("code", "line", "fragment"),
    [
        ("if (true {\n}", 1, "SyntaxError"),
        ("let a = 1;\nlet b = {\n", 2, "SyntaxError"),
        ("while (true) {}", 0, "time limit"),
        ("nope();", 1, "ReferenceError"),
    ],
)
def test_check_block_reports_parse_and_runtime_errors(code: str, line: int, fragment: str) -> None:
    problems = check_block(code)
    assert len(problems) == 1
    assert problems[0][0] == line
    assert fragment in problems[0][1]
