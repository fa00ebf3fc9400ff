"""The persona's fact tools over the run's live sheets (the benchmark's files are never modified)."""

from __future__ import annotations

from collections.abc import Callable

from engine.benchmark.facts import next_fact_id
from engine.benchmark.facts import render_sheet as _render_sheet
from engine.benchmark.model import DELETED, Category, Fact, Sheet
from engine.benchmark.templates import render_templates
from engine.persona.context import build_system_prompt
from engine.state import RunState


class ToolError(Exception):
    """A tool call the persona got wrong: the message goes back to it as the tool result."""


TellCheck = Callable[[str, Fact], str]
"""What of a fact (sheet name, fact) the messages have not carried yet, as what to send ("oven 1.2's new
amount 5,100 EUR"): empty when it was told."""


class Notebook:
    def __init__(self, state: RunState, told_check: TellCheck | None = None) -> None:
        self.state = state
        self.told_check: TellCheck = told_check or (lambda sheet, fact: "")

    def show(self, text: str) -> str:
        """Text as the persona sees it: date templates rendered from the run's start date."""
        return render_templates(text, self.state.start_date)

    def freeze_templates(self) -> None:
        """Render the date templates of the live sheets once, from the run's start date: what the persona
        tells is then fixed in the state, whenever the run is resumed (idempotent)."""
        for sheet in self.state.sheets.values():
            for category in sheet.categories:
                for fact in category.facts:
                    if "{{" in fact.text:
                        fact.text = self.show(fact.text)

    def render(self, sheet: Sheet) -> str:
        return self.show(_render_sheet(sheet))

    def sheet(self, name: str) -> Sheet:
        name = name.strip().removesuffix(".md")
        sheet = self.state.sheets.get(name)
        if sheet is None:
            raise ToolError(f"no sheet {name!r}; sheets: {', '.join(sorted(self.state.sheets))}")
        return sheet

    def told(self, name: str) -> set[str]:
        return set(self.state.told.get(name, []))

    def untold(self, name: str) -> list[Fact]:
        told = self.told(name)
        return [f for f in self.sheet(name).live_facts() if f.id not in told]

    def read(self, name: str) -> str:
        sheet = self.sheet(name)
        if sheet.name not in self.state.loaded_sheets:
            self.state.loaded_sheets.append(sheet.name)
        untold = [f.id for f in self.untold(sheet.name)]
        footer = f"\n\nUntold: {', '.join(untold)}" if untold else "\n\nAll facts of this sheet are told."
        return f"Sheet `{sheet.name}`:\n\n{self.render(sheet)}{footer}"

    def mark_told(self, name: str, ids: list[str]) -> str:
        sheet = self.sheet(name)
        live = {f.id: f for f in sheet.live_facts()}
        unknown = [i for i in ids if i not in live]
        if unknown:
            raise ToolError(f"sheet {sheet.name!r} has no live facts {', '.join(unknown)}")
        unsent = [(i, what) for i in ids if (what := self.told_check(sheet.name, live[i]))]
        if unsent:
            changed = any(f"{sheet.name} {i}" in self.state.changed_at for i, _ in unsent)
            whats = "; ".join(what for _, what in unsent)
            raise ToolError(
                f"no message to the assistant{' since the last change' if changed else ''} carried {whats}: "
                f"send {'it' if len(unsent) == 1 else 'them'} to the assistant with send_message (in any words), "
                f"then facts_mark_told({sheet.name}, [{', '.join(i for i, _ in unsent)}]) (nothing was marked)"
            )
        told = self.state.told.setdefault(sheet.name, [])
        told.extend(i for i in ids if i not in told)
        left = len(self.untold(sheet.name))
        return f"Marked told in {sheet.name}: {', '.join(ids)}. Untold left: {left}."

    def get_untold(self, name: str) -> str:
        sheet = self.sheet(name)
        untold = self.untold(sheet.name)
        if not untold:
            return f"All facts of {sheet.name} are told."
        return self.show("\n".join(f"{f.id} {f.text}" for f in untold))

    def edit(self, name: str, fact_id: str, text: str) -> str:
        sheet = self.sheet(name)
        fact = sheet.find(fact_id)
        if fact is None:
            raise ToolError(f"sheet {sheet.name!r} has no fact {fact_id}; use facts_add for a new one")
        self._keep_text_before(f"{sheet.name} {fact_id}", fact.text)
        fact.text = text.strip()
        told = self.state.told.setdefault(sheet.name, [])
        if fact_id in told:  # a changed fact must be told again
            told.remove(fact_id)
        self.state.changed_at[f"{sheet.name} {fact_id}"] = self.state.messages_sent
        if fact.text == DELETED:
            return f"Deleted {sheet.name} {fact_id}. Now tell the assistant about the cancellation."
        return (
            f"{sheet.name} {fact_id} is now: {fact.text}\nIt is now UNTOLD: tell the assistant the change with "
            f"send_message, then facts_mark_told({sheet.name}, [{fact_id}])."
        )

    def _keep_text_before(self, key: str, text: str) -> None:
        """Keep a fact's text before a change, as the agent could know it: a second change with no message
        in between keeps the text before the first (premises ask what the changes together brought in)."""
        if key not in self.state.changed_from or self.state.changed_at.get(key) != self.state.messages_sent:
            self.state.changed_from[key] = text

    def add(self, name: str, category: int, text: str) -> str:
        sheet = self.sheet(name)
        try:
            fact_id = next_fact_id(sheet, category)
        except ValueError as exc:
            raise ToolError(str(exc)) from None
        target = next((c for c in sheet.categories if c.number == category), None)
        if target is None:  # next_fact_id accepted a new category
            target = Category(number=category, name=f"Category {category}")
            sheet.categories.append(target)
        existing = sheet.find(fact_id)
        self._keep_text_before(f"{sheet.name} {fact_id}", existing.text if existing else DELETED)
        if existing is not None:  # reuse of a deleted id
            existing.text = text.strip()
        else:
            target.facts.append(Fact(id=fact_id, text=text.strip()))
        self.state.changed_at[f"{sheet.name} {fact_id}"] = self.state.messages_sent
        return (
            f"Added {sheet.name} {fact_id}: {text.strip()}\nIt is UNTOLD: tell the assistant with send_message, then "
            f"facts_mark_told({sheet.name}, [{fact_id}])."
        )

    def render_loaded(self) -> str:
        """The live profile and every loaded sheet, re-injected after a compaction."""
        parts = [f"Your profile (current):\n\n{self.render(self.sheet('profile'))}"]
        for name in self.state.loaded_sheets:
            if name == "profile" or name not in self.state.sheets:
                continue
            untold = [f.id for f in self.untold(name)]
            note = f"(untold: {', '.join(untold)})" if untold else "(all told)"
            parts.append(f"Sheet `{name}` {note}:\n\n{self.render(self.state.sheets[name])}")
        return "\n\n".join(parts)

    def system_prompt(self, instructions: str, virtual_time: bool, profile: Sheet | None = None) -> str:
        """The persona's system prompt with the benchmark's instructions and ``profile`` (the profile as the
        story begins: a change of it is told in a later message, so the prompt — and a provider's prefix
        cache of it — stays the same for the whole run; the live one when not given)."""
        sheets = self.state.sheets
        return build_system_prompt(
            self.show(instructions), self.render(profile or sheets["profile"]), sorted(sheets), virtual_time
        )
