"""Fact files (SPEC §3.1): parse, render as the persona sees them, and allocate fact ids.

```
# Family                         <- title
## 1. Lena                       <- category number and name
1.1 Lena is 31, a UX designer, works remotely
1.2 —                            <- deleted (em dash); its id may be reused
```
"""

from __future__ import annotations

import re
from collections.abc import Callable

from engine.benchmark.model import DELETED, Category, Fact, Problem, Sheet

_TITLE = re.compile(r"#\s+(\S.*)")
_CATEGORY = re.compile(r"##\s+([1-9]\d*)\.\s+(\S.*)")
_FACT = re.compile(r"([1-9]\d*)\.([1-9]\d*)\s+(\S.*)")
_FACT_ID = re.compile(r"([1-9]\d*)\.([1-9]\d*)")

_Reporter = Callable[[int, str], None]  # (line, message)


def is_deleted(fact: Fact) -> bool:
    """Whether the fact's text is the deletion mark ``—``."""
    return fact.text.strip() == DELETED


def parse_sheet(text: str, name: str, file: str) -> tuple[Sheet, list[Problem]]:
    """Parse a fact file; problems carry ``file`` and 1-based line numbers. The sheet holds what parsed."""
    sheet = Sheet(name=name, title="")
    problems: list[Problem] = []
    seen_ids: dict[str, int] = {}

    def problem(line: int, message: str) -> None:
        problems.append(Problem(file=file, line=line, message=message))

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("## ") or line == "##":
            _parse_category(line, number, sheet, problem)
        elif line.startswith("# ") or line == "#":
            title = _TITLE.fullmatch(line)
            if title is None:
                problem(number, "empty title: write '# <Title>'")
            elif sheet.title:
                problem(number, f"second title {line!r}: a fact file has one '# ' title")
            else:
                sheet.title = title.group(1).strip()
        elif line[0].isdigit():
            _parse_fact(line, number, sheet, seen_ids, problem)
        else:
            problem(number, f"not a title, category or fact: {line[:60]!r}")
    if not sheet.title:
        problem(1, "missing title: a fact file starts with '# <Title>'")
    return sheet, problems


def _parse_category(line: str, number: int, sheet: Sheet, problem: _Reporter) -> None:
    match = _CATEGORY.fullmatch(line)
    if match is None:
        problem(number, f"malformed category heading {line!r}: write '## <number>. <name>'")
        return
    category_number = int(match.group(1))
    if any(c.number == category_number for c in sheet.categories):
        problem(number, f"duplicate category number {category_number}")
        return
    sheet.categories.append(Category(number=category_number, name=match.group(2).strip()))


def _parse_fact(line: str, number: int, sheet: Sheet, seen_ids: dict[str, int], problem: _Reporter) -> None:
    match = _FACT.fullmatch(line)
    if match is None:
        first_word = line.split()[0]
        problem(number, f"malformed fact id {first_word!r}: write '<category>.<n> <text>', e.g. '1.2 ...'")
        return
    fact_id = f"{match.group(1)}.{match.group(2)}"
    if not sheet.categories:
        problem(number, f"fact {fact_id} before any category: add a '## <number>. <name>' heading first")
        return
    category = sheet.categories[-1]
    if int(match.group(1)) != category.number:
        problem(
            number,
            f"fact {fact_id} is under category {category.number}: its id must start with {category.number}.",
        )
        return
    if fact_id in seen_ids:
        problem(number, f"duplicate fact id {fact_id} (first on line {seen_ids[fact_id]})")
        return
    seen_ids[fact_id] = number
    category.facts.append(Fact(id=fact_id, text=match.group(3).strip(), line=number))


def render_sheet(sheet: Sheet, only_live: bool = True) -> str:
    """Markdown as the persona sees it; deleted facts are omitted unless ``only_live`` is false."""
    parts = [f"# {sheet.title}"]
    for category in sheet.categories:
        lines = [f"## {category.number}. {category.name}"]
        lines += [f"{f.id} {f.text}" for f in category.facts if not (only_live and is_deleted(f))]
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def _category(sheet: Sheet, category: int) -> Category:
    found = next((c for c in sheet.categories if c.number == category), None)
    if found is None:
        known = ", ".join(str(c.number) for c in sheet.categories) or "none"
        raise ValueError(f"sheet {sheet.name!r} has no category {category} (categories: {known})")
    return found


def _fact_number(fact: Fact) -> int:
    return int(fact.id.split(".")[1])


def next_fact_id(sheet: Sheet, category: int) -> str:
    """The id a new fact in ``category`` gets: the lowest deleted id there, else the highest + 1.

    Raises ``ValueError`` when the category does not exist.
    """
    found = _category(sheet, category)
    deleted = [_fact_number(f) for f in found.facts if is_deleted(f)]
    if deleted:
        return f"{category}.{min(deleted)}"
    return f"{category}.{max((_fact_number(f) for f in found.facts), default=0) + 1}"


def is_fact_id(text: str) -> bool:
    """Whether ``text`` is a well-formed fact id like ``2.10``."""
    return _FACT_ID.fullmatch(text) is not None
