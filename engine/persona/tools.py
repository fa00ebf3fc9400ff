"""The persona's nine tools (SPEC §4): schemas and dispatch. Names are fixed; argument names are stable."""

from __future__ import annotations

import json
from typing import Any, Protocol

from engine.benchmark.model import Benchmark
from engine.models.base import ToolSchema
from engine.persona.notebook import Notebook, ToolError


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> ToolSchema:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


_SHEET = {"type": "string", "description": "sheet name without .md, e.g. family"}

TOOL_SCHEMAS: list[ToolSchema] = [
    _tool(
        "send_message",
        "Send a chat message to the assistant; returns its reply.",
        {"text": {"type": "string"}},
        ["text"],
    ),
    _tool(
        "next_phase",
        "Finish the current phase and get the next one (or an error saying what is missing).",
        {},
        [],
    ),
    _tool("facts_read", "Read a fact sheet (it joins your loaded sheets).", {"sheet": _SHEET}, ["sheet"]),
    _tool(
        "facts_mark_told",
        "Mark facts as told to the assistant.",
        {"sheet": _SHEET, "ids": {"type": "array", "items": {"type": "string"}}},
        ["sheet", "ids"],
    ),
    _tool("facts_get_untold", "List the facts of a sheet not yet told.", {"sheet": _SHEET}, ["sheet"]),
    _tool(
        "facts_edit",
        "Change a fact's text; the text '—' deletes it.",
        {"sheet": _SHEET, "id": {"type": "string"}, "text": {"type": "string"}},
        ["sheet", "id", "text"],
    ),
    _tool(
        "facts_add",
        "Add a fact to a category of a sheet; returns its id.",
        {"sheet": _SHEET, "category": {"type": "integer"}, "text": {"type": "string"}},
        ["sheet", "category", "text"],
    ),
    _tool(
        "log_evaluation",
        "Grade the assistant's answer to a check, 0-10.",
        {
            "check_id": {"type": "string"},
            "score": {"type": "number", "minimum": 0, "maximum": 10},
            "attempt": {"type": "integer", "enum": [1, 2]},
            "answer": {"type": "string"},
            "comment": {"type": "string"},
        },
        ["check_id", "score", "attempt", "answer", "comment"],
    ),
    _tool(
        "wait",
        "Sleep until a moment of virtual time; returns the time on waking. Accepted forms of `until`: "
        "`HH:MM` — that time on the current phase's day (today, or the phase's date when it is ahead; "
        "without a date line, the next time the clock shows it); `YYYY-MM-DD HH:MM` — a date and time; "
        "ISO `YYYY-MM-DDTHH:MM` or `YYYY-MM-DDTHH:MM:SS`. If that time has already come (the current "
        "minute included), it returns at once and says so: carry on.",
        {"until": {"type": "string", "description": "HH:MM, YYYY-MM-DD HH:MM or YYYY-MM-DDTHH:MM[:SS]"}},
        ["until"],
    ),
]

TOOL_NAMES = [t["function"]["name"] for t in TOOL_SCHEMAS]  # every tool; a run offers tool_schemas(...)
_REQUIRED: dict[str, list[str]] = {
    t["function"]["name"]: list(t["function"]["parameters"]["required"]) for t in TOOL_SCHEMAS
}


def tool_schemas(virtual_time: bool) -> list[ToolSchema]:
    """The tools offered to the persona: ``wait`` only in virtual-time scenarios (``bench.time_master``)."""
    return [t for t in TOOL_SCHEMAS if virtual_time or t["function"]["name"] != "wait"]


def offered_names(virtual_time: bool) -> list[str]:
    """The names of the tools ``tool_schemas(virtual_time)`` offers, in their order."""
    return [t["function"]["name"] for t in tool_schemas(virtual_time)]


def missing_arguments(name: str, args: dict[str, Any]) -> list[str]:
    """The required arguments of tool ``name`` (its schema's ``required``) absent from ``args`` or null."""
    return [arg for arg in _REQUIRED.get(name, []) if args.get(arg) is None]


class ToolHost(Protocol):
    """What the run provides to the tools besides the notebook (the benchmark says which tools it offers)."""

    notebook: Notebook

    @property
    def bench(self) -> Benchmark: ...

    async def tool_send_message(self, text: str) -> str: ...
    async def tool_next_phase(self) -> str: ...
    async def tool_log_evaluation(
        self, check_id: str, score: float, attempt: int, answer: str, comment: str
    ) -> str: ...
    async def tool_wait(self, until: str) -> str: ...


def parse_arguments(raw: str) -> dict[str, Any]:
    try:
        args = json.loads(raw or "{}")
    except json.JSONDecodeError as exc:
        raise ToolError(
            f"arguments are not valid JSON ({exc.msg} at char {exc.pos}); call the tool again"
        ) from None
    if not isinstance(args, dict):
        raise ToolError("arguments must be a JSON object; call the tool again")
    return args


def _ids(value: Any) -> list[str]:
    if isinstance(value, str):
        return [v.strip() for v in value.replace(",", " ").split() if v.strip()]
    if isinstance(value, list):
        return [str(v).strip() for v in value]
    raise ToolError('ids must be a list of fact ids like ["1.1", "1.2"]')


def _check_call(host: ToolHost, name: str, args: dict[str, Any]) -> None:
    """A call of a tool this run does not offer, or without some of its required arguments, is refused
    with the tools offered or every missing argument named at once."""
    offered = offered_names(host.bench.time_master)
    if name not in offered:
        why = "this scenario runs in real time" if name == "wait" else "there is no such tool"
        raise ToolError(f"unknown tool {name!r} ({why}); tools: {', '.join(offered)}")
    missing = missing_arguments(name, args)
    if missing:
        names = ", ".join(repr(arg) for arg in missing)
        plural = "s" if len(missing) > 1 else ""
        raise ToolError(f"missing argument{plural} {names} for {name}; call it again with every argument")


async def dispatch(host: ToolHost, name: str, args: dict[str, Any]) -> str:
    """Run one tool call. Raises ToolError for mistakes the persona should see and fix."""
    notebook = host.notebook
    _check_call(host, name, args)
    try:
        match name:
            case "send_message":
                text = str(args["text"]).strip()
                if not text:
                    raise ToolError("text is empty")
                return await host.tool_send_message(text)
            case "next_phase":
                return await host.tool_next_phase()
            case "facts_read":
                return notebook.read(str(args["sheet"]))
            case "facts_mark_told":
                return notebook.mark_told(str(args["sheet"]), _ids(args["ids"]))
            case "facts_get_untold":
                return notebook.get_untold(str(args["sheet"]))
            case "facts_edit":
                return notebook.edit(str(args["sheet"]), str(args["id"]), str(args["text"]))
            case "facts_add":
                return notebook.add(str(args["sheet"]), int(args["category"]), str(args["text"]))
            case "log_evaluation":
                return await host.tool_log_evaluation(
                    str(args["check_id"]),
                    float(args["score"]),
                    int(args["attempt"]),
                    str(args["answer"]),
                    str(args["comment"]),
                )
            case "wait":
                return await host.tool_wait(str(args["until"]))
            case _:  # a tool of the schemas without a case here: a bug of this module
                raise AssertionError(f"tool {name!r} has no dispatch case")
    except KeyError as exc:
        raise ToolError(f"missing argument {exc.args[0]!r} for {name}") from None
    except (TypeError, ValueError) as exc:
        raise ToolError(f"bad arguments for {name}: {exc}") from None
