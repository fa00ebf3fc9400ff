"""``adapters/`` is built in rooms, as ``engine/`` and ``mmb_tui/`` are: each package says what it owns and may
import, no folder holds more than ``MAX_SIDE_BY_SIDE`` modules, the agent packages never import each other, and
the machinery every local agent shares (``adapters/local/``) imports no agent."""

from __future__ import annotations

import ast
from pathlib import Path

from test_dependencies import imports_of

ROOT = Path(__file__).resolve().parent.parent
ADAPTERS = ROOT / "adapters"
SHARED = "adapters.local"
MAX_SIDE_BY_SIDE = 12


def module_of(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def agent_packages() -> list[str]:
    """Every package at the top of ``adapters/`` but the shared one: one per agent."""
    return sorted(
        module_of(init.parent / "x.py").rsplit(".", 1)[0]
        for init in ADAPTERS.glob("*/__init__.py")
        if module_of(init) != SHARED
    )


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def imports_into(folder: Path, targets: list[str]) -> list[str]:
    return [
        f"{module_of(path)} imports {name}"
        for path in sorted(folder.rglob("*.py"))
        for name in imports_of(path)
        for target in targets
        if within(name, target) and not within(module_of(path), target)
    ]


def reaches(folder: Path, allowed: tuple[str, ...], root: Path = ROOT) -> list[str]:
    """The imports of ``adapters`` modules from a room's modules that go outside ``allowed``."""
    return [
        f"{module_of(path, root)} imports {name}"
        for path in sorted(folder.rglob("*.py"))
        for name in imports_of(path)
        if within(name, "adapters") and not any(within(name, ok) for ok in allowed)
    ]


def test_no_folder_holds_more_than_twelve_modules_side_by_side() -> None:
    folders = [ADAPTERS, *(p for p in ADAPTERS.rglob("*") if p.is_dir() and p.name != "__pycache__")]
    crowded = {
        str(folder.relative_to(ROOT)): n
        for folder in folders
        if (n := len([p for p in folder.glob("*.py") if p.name != "__init__.py"])) > MAX_SIDE_BY_SIDE
    }
    assert not crowded, f"split into rooms (at most {MAX_SIDE_BY_SIDE} modules side by side): {crowded}"


def test_every_room_says_what_it_owns_and_may_import() -> None:
    folders = [p for p in ADAPTERS.rglob("*") if p.is_dir() and p.name != "__pycache__"]
    for folder in [ADAPTERS, *folders]:
        init = folder / "__init__.py"
        assert init.is_file(), f"{folder.relative_to(ROOT)}: a room is a package (add its __init__.py)"
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert "May import" in doc, f"{init.relative_to(ROOT)}: say what the package owns and may import"


def test_the_agents_are_packages_beside_the_shared_one() -> None:
    assert {"adapters.hermes", "adapters.openclaw", "adapters.letta"} <= set(agent_packages())
    assert SHARED not in agent_packages()


def test_agent_packages_never_import_each_other() -> None:
    bad = [
        line
        for package in agent_packages()
        for line in imports_into(
            ADAPTERS / package.split(".")[1], [p for p in agent_packages() if p != package]
        )
    ]
    assert not bad, bad


def test_the_shared_package_imports_no_agent_nor_a_simple_adapter() -> None:
    simple = ["adapters.chatbot", "adapters.openai_endpoint", "adapters.history_file"]
    assert imports_into(ADAPTERS / "local", [*agent_packages(), *simple]) == []


def test_the_files_room_imports_nothing_else_of_the_shared_package() -> None:
    allowed = ("adapters.local.files", "adapters.base", "adapters.options")
    assert reaches(ADAPTERS / "local" / "files", allowed) == []


def test_the_sandbox_room_reaches_up_only_for_the_process_it_boxes() -> None:
    allowed = ("adapters.local.sandbox", "adapters.local.process", "adapters.base", "adapters.options")
    assert reaches(ADAPTERS / "local" / "sandbox", allowed) == []


def test_the_rooms_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    """The checks above are not vacuous: a module of a room reaching outside it is named."""
    room = tmp_path / "adapters" / "local" / "files"
    room.mkdir(parents=True)
    (room / "bad.py").write_text("from adapters.hermes.adapter import HermesAdapter\n", encoding="utf-8")
    assert reaches(room, ("adapters.local.files",), root=tmp_path) == [
        "adapters.local.files.bad imports adapters.hermes.adapter"
    ]


def test_the_launcher_runs_alone_inside_the_box() -> None:
    """``launch.py`` is copied into the sandbox and run as a file: it may import nothing of the project."""
    launcher = ADAPTERS / "local" / "sandbox" / "launch.py"
    assert not [n for n in imports_of(launcher) if n.split(".")[0] in ("adapters", "engine", "mmb_tui")]
