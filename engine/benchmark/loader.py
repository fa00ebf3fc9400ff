"""Load a benchmark folder (SPEC §3): ``benchmark.json``, ``instructions.md``, fact files and chapters.

Every problem found while reading is collected with its file and 1-based line (0: the whole file);
``validate.py`` adds the checks that need the whole benchmark (JS dry runs, duplicate check ids, KEY.md).

This module owns the folder and ``benchmark.json`` (typed keys, bad ones reported, the listed chapter
files); fact files are parsed by ``facts.py``, chapters (phases, dates and anchors, checks) by
``chapters.py``.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
import unicodedata
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import json5

from engine.benchmark.chapters import ChapterReader
from engine.benchmark.facts import parse_sheet
from engine.benchmark.model import Benchmark, Problem
from engine.benchmark.templates import find_template_problems

CONFIG_KEYS = ("chapters", "time_master", "time_gate", "start_time", "title", "description")
NOT_SHEETS = ("instructions.md", "KEY.md", "README.md")
CHAPTER_FILE = re.compile(r"chapter\d+\.md")
START_TIME_FORMAT = "%Y-%m-%d %H:%M"


def load_with_problems(path: Path) -> tuple[Benchmark | None, list[Problem]]:
    """Read the folder; the benchmark (None when ``benchmark.json`` is unusable) and the problems met."""
    problems: list[Problem] = []
    if not path.is_dir():
        return None, [Problem(file=str(path), message=_folder_problem(path))]
    config = _read_config(path / "benchmark.json", problems)
    if config is None:
        return None, problems
    chapters = list(dict.fromkeys(config.get("chapters", [])))  # a chapter listed twice is read once
    if chapters:
        _check_chapter_files(path, config["chapters"], problems)
    sheets = {}
    for file in sorted(path.glob("*.md")):
        if file.name in chapters or file.name in NOT_SHEETS or CHAPTER_FILE.fullmatch(file.name):
            continue
        text = _read_text(file, problems)
        sheet, sheet_problems = parse_sheet(text, file.stem, str(file))
        problems += sheet_problems
        _check_templates(text, str(file), 1, problems)
        sheets[sheet.name] = sheet
    if "profile" not in sheets:
        problems.append(
            Problem(file=str(path / "profile.md"), message="missing profile.md (the persona's profile)")
        )
    instructions = ""
    if (path / "instructions.md").is_file():
        instructions = _read_text(path / "instructions.md", problems)
        _check_templates(instructions, str(path / "instructions.md"), 1, problems)
    reader = ChapterReader(start_time=config.get("start_time"))
    for chapter in chapters:
        if _inside(chapter) and not _file_problem(path / chapter):
            problems += reader.read(_read_text(path / chapter, problems), chapter, str(path / chapter))
    bench = Benchmark(
        name=path.name,
        path=path,
        chapters=chapters,
        phases=reader.phases,
        sheets=sheets,
        instructions=instructions,
        title=config.get("title", ""),
        description=config.get("description", ""),
        time_master=config.get("time_master", False),
        time_gate=config.get("time_gate", False),
        start_time=config.get("start_time"),
    )
    return bench, problems


def _folder_problem(path: Path) -> str:
    """Why ``path`` is no benchmark folder, in words."""
    try:
        os.stat(path)
    except OSError as error:
        if error.errno == 40:  # ELOOP
            return "the benchmark folder is a symbolic link loop"
        return "no such benchmark folder"
    return "not a folder: a benchmark is a folder of files"


def _inside(chapter: str) -> bool:
    """Whether a chapter entry names a file inside the benchmark folder."""
    return not Path(chapter).is_absolute() and ".." not in Path(chapter).parts


def _file_problem(file: Path) -> str:
    """Why ``file`` cannot be read as a file of its benchmark ('' when it can): a link whose target leaves the
    benchmark folder is not followed, and only a regular file is read (a FIFO would block the reader)."""
    try:
        target = file.resolve(strict=True)
        inside = target.is_relative_to(file.parent.resolve(strict=True))
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return "does not exist"
    except (OSError, RuntimeError):
        return "cannot be read (a symbolic link loop, or no permission)"
    if not inside:
        return "is a link leaving the benchmark folder: not followed"
    if not stat.S_ISREG(mode):
        return "is not a regular file (a FIFO, device or folder): not read"
    return ""


def _read_text(file: Path, problems: list[Problem]) -> str:
    problem = _file_problem(file)
    if problem:
        problems.append(Problem(file=str(file), message=problem))
        return ""
    try:
        text = file.read_text(encoding="utf-8").removeprefix("\ufeff")  # a byte order mark is no content
    except (OSError, UnicodeDecodeError) as error:
        problems.append(Problem(file=str(file), message=f"cannot read: {error}"))
        return ""
    problems += _invisible_characters(text, str(file))
    return text


def _invisible_characters(text: str, file: str) -> list[Problem]:
    """A NUL byte or an invisible format character (a zero-width space, a joiner, a bidi mark) in a line: a
    directive or a figure carrying one silently is not one, so each is named by its line and column."""
    found: list[Problem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        for column, char in enumerate(line, start=1):
            if char == "\0" or unicodedata.category(char) == "Cf":
                name = "NUL" if char == "\0" else unicodedata.name(char, "FORMAT CHARACTER")
                message = (
                    f"column {column}: an invisible character U+{ord(char):04X} ({name}): a directive, id or "
                    "figure holding it is not read as one; delete it"
                )
                found.append(Problem(file=file, line=number, message=message))
                break  # one per line is enough to find them
    return found


def _check_templates(text: str, file: str, first_line: int, problems: list[Problem]) -> None:
    problems += [Problem(file=file, line=first_line + o, message=m) for o, m in find_template_problems(text)]


def _line_of(text: str, needle: str) -> int:
    """1-based line of the first occurrence of ``needle`` in ``text`` (0 when absent)."""
    index = text.find(needle)
    return text.count("\n", 0, index) + 1 if index >= 0 else 0


def _read_config(file: Path, problems: list[Problem]) -> dict[str, Any] | None:
    """``benchmark.json`` as typed values (bad ones dropped, each reported); None when unusable."""
    if _file_problem(file) == "does not exist":
        problems.append(Problem(file=str(file), message="missing benchmark.json"))
        return None
    text = _read_text(file, problems)
    if not text.strip() and _file_problem(file):
        return None
    try:
        raw = json5.loads(text)
    except RecursionError:
        problems.append(Problem(file=str(file), message="malformed benchmark.json: nested too deeply"))
        return None
    except ValueError as error:
        match = re.match(r"<string>:(\d+) ", str(error))
        line = int(match.group(1)) if match else 0
        detail = str(error)[match.end() :] if match else str(error)
        problems.append(Problem(file=str(file), line=line, message=f"malformed benchmark.json: {detail}"))
        return None
    if not isinstance(raw, dict):
        problems.append(Problem(file=str(file), line=1, message="benchmark.json must hold an object"))
        return None

    def problem(key: str, message: str) -> None:
        problems.append(
            Problem(file=str(file), line=_line_of(text, f'"{key}"') or _line_of(text, key), message=message)
        )

    config: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in CONFIG_KEYS:
            close = difflib.get_close_matches(key, CONFIG_KEYS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(CONFIG_KEYS)})"
            problem(key, f"unknown key {key!r}{hint}")
        elif key == "chapters":
            if not isinstance(value, list) or not all(isinstance(c, str) and c for c in value):
                problem(key, "chapters must be a list of chapter file names")
            elif not value:
                problem(key, "chapters is empty: list at least one chapter file")
            else:
                config[key] = value
        elif key in ("time_master", "time_gate"):
            if isinstance(value, bool):
                config[key] = value
            else:
                problem(key, f"{key} must be true or false")
        elif key == "start_time":
            config[key] = _parse_start_time(value, lambda message: problem("start_time", message))
        elif isinstance(value, str):
            config[key] = value
        else:
            problem(key, f"{key} must be a string")
    if "chapters" not in raw:
        problems.append(
            Problem(
                file=str(file), line=1, message="missing required key 'chapters' (the ordered chapter files)"
            )
        )
    if config.get("time_gate") and config.get("start_time") is None and "start_time" not in raw:
        problem("time_gate", 'time_gate is on but start_time is missing ("YYYY-MM-DD HH:MM")')
    return config


def _parse_start_time(value: Any, report: Callable[[str], None]) -> datetime | None:
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", value.strip()):
        try:
            return datetime.strptime(value.strip(), START_TIME_FORMAT)
        except ValueError:
            pass
    report(f'start_time {value!r} is not a valid "YYYY-MM-DD HH:MM"')
    return None


def _check_chapter_files(path: Path, chapters: list[str], problems: list[Problem]) -> None:
    config_file = path / "benchmark.json"
    text = config_file.read_text(encoding="utf-8", errors="replace")
    seen: set[str] = set()
    for chapter in chapters:
        line = _line_of(text, f'"{chapter}"')
        if chapter in seen:
            problems.append(
                Problem(file=str(config_file), line=line, message=f"chapter {chapter!r} is listed twice")
            )
        seen.add(chapter)
        file = path / chapter
        if not _inside(chapter):
            problems.append(
                Problem(
                    file=str(config_file), line=line, message=f"chapter {chapter!r} must be inside the folder"
                )
            )
        elif problem := _file_problem(file):
            problems.append(
                Problem(file=str(config_file), line=line, message=f"chapter file {chapter!r} {problem}")
            )
    for file in sorted(path.glob("*.md")):
        if CHAPTER_FILE.fullmatch(file.name) and file.name not in seen:
            message = "chapter file is not listed in benchmark.json chapters"
            problems.append(Problem(file=str(file), message=message))
