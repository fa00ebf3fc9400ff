"""AGENTS.md stays in step with the code: every module is in its index."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_module_is_in_the_agents_index() -> None:
    text = (ROOT / "AGENTS.md").read_text()
    missing = [
        str(path.relative_to(ROOT))
        for folder in ("engine", "adapters", "mmb_tui", "bench")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path.name != "__init__.py" and f"`{path.relative_to(ROOT)}`" not in text
    ]
    assert not missing, f"add to AGENTS.md's index: {missing}"


def test_readme_names_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "make run" in readme and "make test" in readme
    assert "Writing benchmarks" in (ROOT / "AGENTS.md").read_text()
