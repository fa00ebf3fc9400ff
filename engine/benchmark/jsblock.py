"""Phase JS blocks (SPEC §3.2), run sandboxed in QuickJS with a CPU time limit and a memory limit.

QuickJS has no file system, network, ``require`` or ``fetch``; nothing from Python is exposed to the block.
QuickJS refuses Python callables while a time limit is set, so ``bench.newSession()`` only queues a request
and returns a Promise: the host drains the job queue, awaits its own coroutine, settles the Promise and
drains again until the block (wrapped in an async function, so top-level ``await`` works) finishes.

Line numbers are relative to the block's first code line (1-based); 0 means "somewhere in the block".
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import quickjs

VARS_KEYS = ("require_all_facts", "require_all_checks")
BENCH_MEMBERS = ("newSession",)
MEMORY_LIMIT = 32 * 1024 * 1024
DRY_RUN_TIME_LIMIT = 1.0

_LOCATION = re.compile(r"<input>:(\d+)")

_PRELUDE = r"""
(function () {
  "use strict";
  const DRY = %DRY%;
  const VARS = %VARS%;
  const BENCH = %BENCH%;
  const QUIET = ["then", "toJSON"];  // probed by await and JSON.stringify themselves
  const store = {};
  const requests = [];
  const problems = [];
  const assignments = [];
  const state = {done: false, error: null};

  function __mmb_line(stack) {
    const frames = String(stack || "").split("\n");
    for (let i = 0; i < frames.length; i++) {
      if (frames[i].indexOf("__mmb") >= 0) continue;
      const match = /<input>:(\d+)/.exec(frames[i]);
      if (match) return Number(match[1]);
    }
    return 0;
  }
  function __mmb_unknown(message) {
    if (!DRY) throw new TypeError(message);
    problems.push([__mmb_line(new Error().stack), message]);
  }
  function __mmb_snapshot(value) {
    try { return JSON.parse(JSON.stringify(value === undefined ? null : value)); }
    catch (e) { return "<not a plain value>"; }
  }
  const vars = new Proxy(store, {
    get: function __mmb_vars_get(target, key) {
      if (typeof key === "string" && VARS.indexOf(key) < 0 && QUIET.indexOf(key) < 0)
        __mmb_unknown("unknown vars key '" + key + "' (known: " + VARS.join(", ") + ")");
      return target[key];
    },
    set: function __mmb_vars_set(target, key, value) {
      const name = String(key);
      if (VARS.indexOf(name) < 0)
        __mmb_unknown("unknown vars key '" + name + "' (known: " + VARS.join(", ") + ")");
      target[name] = value;
      assignments.push([__mmb_line(new Error().stack), name, __mmb_snapshot(value)]);
      return true;
    },
  });
  function newSession() {
    return new Promise(function __mmb_request(resolve, reject) {
      if (DRY) resolve(undefined);
      else requests.push({kind: "newSession", resolve: resolve, reject: reject});
    });
  }
  const bench = new Proxy(Object.freeze({newSession: newSession}), {
    get: function __mmb_bench_get(target, key) {
      if (typeof key === "string" && BENCH.indexOf(key) < 0 && QUIET.indexOf(key) < 0) {
        __mmb_unknown("unknown bench member '" + key + "' (known: " + BENCH.join(", ") + ")");
        return function __mmb_noop() { return Promise.resolve(undefined); };
      }
      return target[key];
    },
    set: function __mmb_bench_set(target, key) {
      __mmb_unknown("bench is read-only: cannot set '" + String(key) + "'");
      return true;
    },
  });
  function __mmb_describe(error) {
    if (error instanceof Error) return {message: error.name + ": " + error.message, line: __mmb_line(error.stack)};
    return {message: "uncaught " + String(error), line: 0};
  }
  const control = Object.freeze({
    start: function __mmb_start(promise) {
      promise.then(function __mmb_done() { state.done = true; },
                   function __mmb_fail(error) { state.error = __mmb_describe(error); });
    },
    report: function __mmb_report() {
      let values;
      try { values = JSON.parse(JSON.stringify(store)); }
      catch (e) { values = {}; if (!state.error) state.error = {message: "vars must hold plain values", line: 0}; }
      return JSON.stringify({done: state.done, error: state.error, pending: requests.map(function (r) { return r.kind; }),
                             problems: problems, assignments: assignments, vars: values});
    },
    settle: function __mmb_settle() { requests.shift().resolve(undefined); },
  });
  for (const [name, value] of [["vars", vars], ["bench", bench], ["__mmb", control]])
    Object.defineProperty(globalThis, name, {value: value, writable: false, configurable: false});
})();
"""


class JsBlockError(Exception):
    """A block that failed to parse, threw, ran out of time or memory, or misused ``vars``/``bench``."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class BenchHost(Protocol):
    """What ``bench.*`` calls reach in a real run."""

    async def new_session(self) -> None:
        """Switch the agent to a new session (a no-op with ``ignore_session_break``)."""
        ...


@dataclass
class BlockCheck:
    """Result of a dry run: problems, the final vars, and each ``require_all_facts`` sheet name with its line."""

    problems: list[tuple[int, str]] = field(default_factory=list)
    vars: dict[str, Any] = field(default_factory=dict)
    sheet_refs: list[tuple[int, str]] = field(default_factory=list)


class _Sandbox:
    """One QuickJS context running one block, with a CPU budget shared by all its calls."""

    def __init__(self, code: str, dry: bool, time_limit: float) -> None:
        self.lines = max(1, len(code.splitlines()))
        self.budget = time_limit
        self.time_limit = time_limit
        self.context = quickjs.Context()
        self.context.set_memory_limit(MEMORY_LIMIT)
        prelude = (
            _PRELUDE.replace("%DRY%", "true" if dry else "false")
            .replace("%VARS%", json.dumps(list(VARS_KEYS)))
            .replace("%BENCH%", json.dumps(list(BENCH_MEMBERS)))
        )
        self.context.eval(prelude)
        # The block's first line shares line 1 with the wrapper's head, so reported lines need no shift.
        self._call(
            lambda: self.context.eval(f'__mmb.start((async function block() {{"use strict"; {code}\n}})());')
        )

    def _call(self, action: Any) -> Any:
        if self.budget <= 0:
            raise JsBlockError(f"time limit of {self.time_limit:g} s exceeded")
        self.context.set_time_limit(self.budget)
        started = time.process_time()
        try:
            return action()
        except quickjs.JSException as error:
            raise self._error(str(error)) from None
        finally:
            self.budget -= time.process_time() - started

    def _error(self, text: str) -> JsBlockError:
        message = text.strip().splitlines()[0] if text.strip() else "error"
        if "InternalError: interrupted" in message:
            return JsBlockError(f"time limit of {self.time_limit:g} s exceeded")
        if "out of memory" in message:
            return JsBlockError(f"memory limit of {MEMORY_LIMIT // (1024 * 1024)} MB exceeded")
        location = _LOCATION.search(text)
        return JsBlockError(message, self.clamp(int(location.group(1)) if location else 0))

    def clamp(self, line: int) -> int:
        return min(line, self.lines)

    def drain(self) -> dict[str, Any]:
        """Run queued jobs until none is left; the block's report afterwards."""
        while self._call(self.context.execute_pending_job):
            pass
        report: dict[str, Any] = json.loads(self._call(lambda: self.context.eval("__mmb.report()")))
        return report

    def settle(self) -> None:
        self._call(lambda: self.context.eval("__mmb.settle()"))

    def raise_error(self, report: dict[str, Any]) -> None:
        error = report.get("error")
        if error:
            message = error["message"]
            if "out of memory" in message:
                message = f"memory limit of {MEMORY_LIMIT // (1024 * 1024)} MB exceeded"
            raise JsBlockError(message, self.clamp(int(error["line"])))


def _value_problem(key: str, value: Any) -> str | None:
    if key == "require_all_facts":
        if isinstance(value, str) and value:
            return None
        if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
            return None
        return (
            f"vars.require_all_facts must be a sheet name or a list of sheet names, not {json.dumps(value)}"
        )
    if key == "require_all_checks" and not isinstance(value, bool):
        return f"vars.require_all_checks must be true or false, not {json.dumps(value)}"
    return None


async def run_block(code: str, host: BenchHost, time_limit: float = 1.0) -> dict[str, Any]:
    """Run a phase block against ``host``; the ``vars`` it set. Raises ``JsBlockError`` on any failure."""
    sandbox = _Sandbox(code, dry=False, time_limit=time_limit)
    while True:
        report = sandbox.drain()
        sandbox.raise_error(report)
        if report["done"]:
            break
        if not report["pending"]:
            raise JsBlockError("the block waits on a promise that never settles")
        await host.new_session()
        sandbox.settle()
    for line, key, value in report["assignments"]:
        message = _value_problem(key, value)
        if message:
            raise JsBlockError(message, sandbox.clamp(line))
    values: dict[str, Any] = report["vars"]
    return values


def dry_run_block(code: str) -> BlockCheck:
    """Run a block without a host (``bench.newSession()`` resolves at once), collecting every problem."""
    result = BlockCheck()
    try:
        sandbox = _Sandbox(code, dry=True, time_limit=DRY_RUN_TIME_LIMIT)
        report = sandbox.drain()
    except JsBlockError as error:
        result.problems.append((error.line, error.message))
        return result
    result.problems += [(sandbox.clamp(line), message) for line, message in report["problems"]]
    if report["error"]:
        result.problems.append((sandbox.clamp(report["error"]["line"]), report["error"]["message"]))
    elif not report["done"]:
        result.problems.append((0, "the block waits on a promise that never settles"))
    for line, key, value in report["assignments"]:
        message = _value_problem(key, value)
        if message:
            result.problems.append((sandbox.clamp(line), message))
        elif key == "require_all_facts":
            names = [value] if isinstance(value, str) else value
            result.sheet_refs += [(sandbox.clamp(line), name) for name in names]
    result.vars = {key: value for key, value in report["vars"].items() if key in VARS_KEYS}
    return result


def check_block(code: str) -> list[tuple[int, str]]:
    """Validation problems of a block as ``(line, message)``; see ``dry_run_block`` for vars and sheet names."""
    return dry_run_block(code).problems
