"""A run's memory autopsy as its report entry needs it (``RunAutopsy``): whether the agent's memory could be
read, an attribution of every graded answer that was not perfect, and the agent's own actions counted."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from engine.autopsy.attribution import Attribution, Autopsy
from engine.autopsy.run_facts import read_facts
from engine.events import EvaluationLogged


@dataclass(frozen=True)
class RunAutopsy:
    access: bool  # the run has a memory history (its agent exposes memory files)
    attributions: dict[str, Attribution] = field(default_factory=dict)  # by check id
    actions: Counter[str] = field(default_factory=Counter)  # the agent's actions by kind
    actions_exposed: bool = True  # False: the agent exposes none (said once in the entry)


def run_autopsy(
    run_dir: Path, evaluations: dict[str, EvaluationLogged], actions_exposed: bool = True
) -> RunAutopsy:
    """The autopsy of every graded answer (which of them are imperfect is the tally's choice: the persona's
    grades, the judge's or the lower of both)."""
    facts = read_facts(run_dir / "transcript.jsonl")
    autopsy = Autopsy(run_dir, facts)
    attributions = {cid: autopsy.attribute(e) for cid, e in evaluations.items()}
    return RunAutopsy(autopsy.access, attributions, facts.counts(), actions_exposed or bool(facts.actions))
