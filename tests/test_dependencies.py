"""Dependencies point one way (STYLE: Harlequin's import contracts), read from every module's static imports.

- ``engine`` never imports ``adapters`` or ``mmb_tui`` (adapters are found by name, at run time);
- the packages of ``engine/`` import each other in one direction only (``ALLOWED`` below), and no module
  of ``engine/``, ``adapters/`` or ``mmb_tui/`` takes part in an import circle (``TYPE_CHECKING`` and
  function-level imports included);
- only the run's builder and read model (``engine/run/build.py``, ``engine/run/view.py``) and the scheduler
  (``engine/placement/scheduler.py``) import ``engine.run.loop``: the run's collaborators get ports;
- nothing below ``mmb_tui`` imports ``rich`` or ``textual``;
- the benchmark loader only reads: it never imports ``validate``;
- no source file is longer than ``MAX_LINES``: one past the edge is split by concern.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def imports_of(path: Path) -> set[str]:
    """Every module a file imports, at any depth of its code (function-level imports included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def modules(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def offenders(folder: str, forbidden: tuple[str, ...], allowed: tuple[str, ...] = ()) -> list[str]:
    bad = []
    for path in modules(folder):
        relative = str(path.relative_to(ROOT))
        if relative in allowed:
            continue
        for name in imports_of(path):
            if any(name == f or name.startswith(f + ".") for f in forbidden):
                bad.append(f"{relative} imports {name}")
    return bad


def test_engine_never_imports_adapters_or_the_ui() -> None:
    assert offenders("engine", ("adapters", "mmb_tui")) == []


def test_adapters_never_import_the_ui() -> None:
    assert offenders("adapters", ("mmb_tui", "textual", "rich")) == []


def test_only_the_builder_and_the_scheduler_know_the_run() -> None:
    allowed = ("engine/run/build.py", "engine/run/view.py", "engine/placement/scheduler.py")
    assert offenders("engine", ("engine.run.loop",), allowed=allowed) == []


def test_nothing_below_the_ui_imports_rich_or_textual() -> None:
    assert offenders("engine", ("rich", "textual")) == []


def test_the_loader_only_reads() -> None:
    assert "engine.benchmark.validate" not in imports_of(ROOT / "engine" / "benchmark" / "loader.py")


# ---- the packages of engine/ and the direction of their imports -------------------------------------

FOUNDATION = "foundation"  # the modules at the top of engine/, engine.benchmark, engine.models
ALLOWED: dict[str, set[str]] = {
    FOUNDATION: set(),
    "persona": {FOUNDATION},
    "grading": {FOUNDATION, "persona"},
    "autopsy": {FOUNDATION, "grading"},
    "report": {FOUNDATION, "grading", "autopsy"},
    "judge": {FOUNDATION, "persona", "grading", "autopsy", "report"},
    "run": {FOUNDATION, "persona", "grading", "autopsy", "report", "judge"},
    "comparison": {FOUNDATION, "persona", "grading", "autopsy", "report", "judge"},
    "placement": {FOUNDATION, "persona", "grading", "autopsy", "report", "judge", "run", "comparison"},
}
"""Which packages each may import: the foundation (events, commands, clock, config, state, agents, api, …;
the benchmark format; the models) under the persona, the grading contract, the memory autopsy (the agent's
memory history and the attribution of wrong answers to it), the report, the judge, the run, comparison of runs,
and placement (scheduler, executors, Ray) on top. Nothing in ``engine`` imports placement but the front
ends."""


def package_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "engine":
        return None
    if len(parts) > 1 and parts[1] in ALLOWED:
        return parts[1]
    return FOUNDATION


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, known: set[str]) -> set[str]:
    """The project modules ``path`` imports (``from a.b import c`` names ``a.b.c`` when that is a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


def import_graph(folders: tuple[str, ...] = ("engine", "adapters", "mmb_tui")) -> dict[str, set[str]]:
    paths = {module_name(p): p for folder in folders for p in (ROOT / folder).rglob("*.py")}
    known = set(paths)
    return {name: imported_modules(path, known) - {name} for name, path in paths.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle, as the modules of one strongly connected component, each listed from its first
    module round back to it (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def shortest_circle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """A shortest import path from the component's first module back to it, through the component."""
    start, members = component[0], set(component)
    paths = {start: [start]}
    queue = [start]
    for node in queue:
        for child in sorted(graph.get(node, set()) & members):
            if child == start:
                return [*paths[node], start]
            if child not in paths:
                paths[child] = [*paths[node], child]
                queue.append(child)
    return [*component, start]  # pragma: no cover - a component always closes


def test_no_import_circle_anywhere() -> None:
    graph = import_graph()
    found = [" → ".join(shortest_circle(graph, c)) for c in circles(graph)]
    assert not found, "import circles: " + "; ".join(found)


def test_the_circle_test_names_a_circle() -> None:
    graph = {
        "engine.a": {"engine.b"},
        "engine.b": {"engine.c"},
        "engine.c": {"engine.a"},
        "engine.d": {"engine.a"},
    }
    assert circles(graph) == [["engine.a", "engine.b", "engine.c"]]
    assert shortest_circle(graph, circles(graph)[0]) == ["engine.a", "engine.b", "engine.c", "engine.a"]


def test_engine_packages_import_in_one_direction() -> None:
    bad = []
    for module, imported in import_graph(("engine",)).items():
        here = package_of(module)
        for name in imported:
            there = package_of(name)
            if here and there and there != here and there not in ALLOWED[here]:
                bad.append(f"{module} ({here}) imports {name} ({there})")
    assert not bad, "imports against the allowed directions:\n" + "\n".join(sorted(bad))


def test_every_engine_package_says_what_it_owns_and_may_import() -> None:
    for package in (ROOT / "engine").iterdir():
        init = package / "__init__.py"
        if package.is_dir() and init.exists():
            doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
            assert "May import" in doc, f"{init.relative_to(ROOT)}: say what the package owns and may import"


MAX_LINES = 400


def test_no_source_file_is_over_the_line_limit() -> None:
    long = [
        f"{path.relative_to(ROOT)}: {n} lines"
        for folder in ("engine", "adapters", "mmb_tui", "bench")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    ]
    assert not long, f"split by concern (at most {MAX_LINES} lines): {long}"


def test_the_top_of_engine_stays_small() -> None:
    top = sorted(p.name for p in (ROOT / "engine").glob("*.py") if p.name != "__init__.py")
    assert len(top) <= 12, f"engine/ holds {len(top)} modules at its top: {top}"
