"""Benchmark files that are not what they seem: each is one clear line from ``validate`` and from ``run`` (the file
named, no traceback), nothing followed outside the folder, nothing read that could block.

A symbolic link loop as the folder; ``benchmark.json`` nested too deeply for a parser; a chapter or a sheet that
is a link leaving the folder, or a FIFO; a NUL byte or an invisible character (zero-width space, joiner, bidi
mark, soft hyphen) in a line, where a directive or a figure would silently not be one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.benchmark.loader import load_with_problems

ROOT = Path(__file__).resolve().parents[1]
PROSE = ROOT / "tests" / "benchmarks" / "prose_seed"
SECRET = "CANARY-7d1f outside the benchmark"


def _copy(tmp_path: Path, name: str = "bench") -> Path:
    folder = tmp_path / name
    shutil.copytree(PROSE, folder)
    return folder


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mmb_tui.front_ends.cli", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _run_config(tmp_path: Path, bench: Path) -> Path:
    config = {
        "persona": {"model": "scripted/persona"},
        "runs": {"r": {"benchmark": str(bench), "agent": "chatbot", "model": "scripted/recall"}},
        "results_dir": str(tmp_path / "results"),
    }
    path = tmp_path / "config.jsonc"
    path.write_text(json.dumps(config))
    return path


def _messages(bench: Path) -> list[str]:
    return [str(p) for p in load_with_problems(bench)[1]]


def _no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stdout + result.stderr, result.stderr


def test_a_folder_that_is_a_symlink_loop_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    result = _cli(tmp_path, "validate", "loop")
    _no_traceback(result)
    assert result.returncode == 1
    assert "loop: the benchmark folder is a symbolic link loop" in result.stdout


@pytest.mark.parametrize("command", ["validate", "run"])
def test_benchmark_json_nested_too_deeply_is_one_line(tmp_path: Path, command: str) -> None:
    bench = _copy(tmp_path)
    config = json.loads((bench / "benchmark.json").read_text())
    text = json.dumps(config)[:-1] + ', "title": ' + "[" * 50_000 + "]" * 50_000 + "}"
    (bench / "benchmark.json").write_text(text)
    args = ["validate", str(bench)] if command == "validate" else ["run", "r", "--headless"]
    if command == "run":
        args += ["--config", str(_run_config(tmp_path, bench))]
    result = _cli(tmp_path, *args)
    _no_traceback(result)
    assert result.returncode != 0
    assert "benchmark.json: malformed benchmark.json: nested too deeply" in result.stdout + result.stderr


@pytest.mark.parametrize("which", ["chapter3.md", "staff.md"], ids=["a chapter", "a sheet"])
def test_a_link_leaving_the_folder_is_not_followed(tmp_path: Path, which: str) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(f"## {SECRET}\n\nSay {SECRET}\n")
    bench = _copy(tmp_path)
    (bench / which).unlink()
    (bench / which).symlink_to(outside)
    found = _messages(bench)
    assert any("is a link leaving the benchmark folder: not followed" in m for m in found), found
    assert not any(SECRET in m for m in found)
    loaded = load_with_problems(bench)[0]
    assert loaded is not None and SECRET not in json.dumps(loaded.model_dump(mode="json"))


def test_a_link_inside_the_folder_is_read(tmp_path: Path) -> None:
    bench = _copy(tmp_path)
    os.replace(bench / "chapter3.md", bench / "exam.txt")
    (bench / "chapter3.md").symlink_to("exam.txt")
    assert _messages(bench) == []


@pytest.mark.parametrize("which", ["chapter3.md", "staff.md"], ids=["a chapter", "a sheet"])
def test_a_fifo_is_named_and_never_read(tmp_path: Path, which: str) -> None:
    bench = _copy(tmp_path)
    (bench / which).unlink()
    os.mkfifo(bench / which)  # reading it would block for ever: nobody writes
    result = _cli(tmp_path, "validate", str(bench))
    _no_traceback(result)
    assert result.returncode == 1
    assert "is not a regular file (a FIFO, device or folder): not read" in result.stdout
    assert "does not exist" not in result.stdout


@pytest.mark.parametrize(
    "char",
    ["\0", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u200e", "\u202e", "\u00ad"],
    ids=[
        "NUL",
        "zero-width space",
        "ZWNJ",
        "ZWJ",
        "word joiner",
        "ZWNBSP mid-line",
        "LRM",
        "RLO",
        "soft hyphen",
    ],
)
def test_an_invisible_character_in_a_line_is_named_by_line_and_column(tmp_path: Path, char: str) -> None:
    bench = _copy(tmp_path)
    lines = (bench / "chapter2.md").read_text().splitlines()
    target = next(i for i, line in enumerate(lines) if line.startswith("## "))
    lines[target] = lines[target][:3] + char + lines[target][3:]
    (bench / "chapter2.md").write_text("\n".join(lines) + "\n")
    found = _messages(bench)
    wanted = f"chapter2.md:{target + 1}: column 4: an invisible character U+{ord(char):04X}"
    assert any(wanted in m for m in found), found


def test_a_byte_order_mark_at_the_start_is_no_problem(tmp_path: Path) -> None:
    bench = _copy(tmp_path)
    for name in ("chapter1.md", "oven.md"):
        (bench / name).write_text("\ufeff" + (bench / name).read_text())
    assert _messages(bench) == []
