"""``mmb_tui/`` is built in rooms, as ``engine/`` is: each package says what it owns and may import, no folder
holds more than ``MAX_SIDE_BY_SIDE`` modules, and the imports between the rooms point one way."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

from test_dependencies import imports_of

ROOT = Path(__file__).resolve().parent.parent
TUI = ROOT / "mmb_tui"
MAX_SIDE_BY_SIDE = 12


def module_of(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def project_imports(path: Path) -> set[str]:
    return {name for name in imports_of(path) if name.startswith("mmb_tui")}


def test_no_folder_holds_more_than_twelve_modules_side_by_side() -> None:
    crowded = {
        str(folder.relative_to(ROOT)): n
        for folder in [TUI, *(p for p in TUI.rglob("*") if p.is_dir() and p.name != "__pycache__")]
        if (n := len([p for p in folder.glob("*.py") if p.name != "__init__.py"])) > MAX_SIDE_BY_SIDE
    }
    assert not crowded, f"split into rooms (at most {MAX_SIDE_BY_SIDE} modules side by side): {crowded}"


def test_every_room_says_what_it_owns_and_may_import() -> None:
    for init in sorted(TUI.rglob("__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert "May import" in doc, f"{init.relative_to(ROOT)}: say what the package owns and may import"


def test_the_transcript_room_imports_nothing_of_the_ui_above_it() -> None:
    bad = [
        f"{module_of(path)} imports {name}"
        for path in sorted((TUI / "transcript").glob("*.py"))
        for name in project_imports(path)
        if not name.startswith("mmb_tui.transcript")
    ]
    assert not bad, bad


def rooms_above(room: str, above: tuple[str, ...]) -> list[str]:
    return [
        f"{module_of(path)} imports {name}"
        for path in sorted((TUI / room).glob("*.py"))
        for name in project_imports(path)
        if name.startswith(above)
    ]


def test_widgets_never_import_screens_the_app_or_a_front_end() -> None:
    assert rooms_above("widgets", ("mmb_tui.screens", "mmb_tui.app", "mmb_tui.front_ends")) == []


def test_screens_never_import_the_app_or_a_front_end() -> None:
    assert rooms_above("screens", ("mmb_tui.app", "mmb_tui.front_ends")) == []


def test_only_the_front_ends_import_the_front_ends_but_the_app_its_log() -> None:
    bad = [
        f"{module_of(path)} imports {name}"
        for path in sorted(TUI.rglob("*.py"))
        if not module_of(path).startswith("mmb_tui.front_ends")
        for name in project_imports(path)
        if name.startswith("mmb_tui.front_ends")
        and not (module_of(path) == "mmb_tui.app" and name == "mmb_tui.front_ends.tui_logging")
    ]
    assert not bad, bad


def test_the_console_script_and_module_path_name_the_command_line() -> None:
    """``mmb-tui`` is ``mmb_tui.front_ends.cli:main``, and ``python -m`` of that module is the same command."""
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'mmb-tui = "mmb_tui.front_ends.cli:main"' in pyproject
    done = subprocess.run(
        [sys.executable, "-m", "mmb_tui.front_ends.cli", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    assert "usage: mmb-tui" in done.stdout
