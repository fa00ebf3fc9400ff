"""Dependencies point one way (STYLE: Harlequin's import contracts), read from every module's static imports.

- ``engine`` never imports ``adapters`` or ``mmb_tui`` (adapters are found by name, at run time);
- only ``engine/build.py`` and ``engine/scheduler.py`` import ``engine.run``: the run's collaborators get ports;
- nothing below ``mmb_tui`` imports ``rich`` or ``textual``;
- the benchmark loader only reads: it never imports ``validate``.
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
    assert offenders("engine", ("engine.run",), allowed=("engine/build.py", "engine/scheduler.py")) == []


def test_nothing_below_the_ui_imports_rich_or_textual() -> None:
    assert offenders("engine", ("rich", "textual")) == []


def test_the_loader_only_reads() -> None:
    assert "engine.benchmark.validate" not in imports_of(ROOT / "engine" / "benchmark" / "loader.py")
