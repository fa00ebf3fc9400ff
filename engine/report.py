"""``results/report.md``: one entry per ended run (SPEC §9). Reading entries back: ``report_entries.py``."""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from typing import TYPE_CHECKING

from engine.benchmark.templates import render_templates
from engine.state import EvaluationRecord

if TYPE_CHECKING:
    from engine.run import Run

REPORT_NAME = "report.md"


def _num(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def config_hash(run_config: dict[str, object], persona_model: dict[str, object]) -> str:
    """Identifies the settings a result was produced with (no secrets: keys are never in config)."""
    blob = json.dumps({"run": run_config, "persona": persona_model}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def format_entry(run: Run) -> str:
    state, bench = run.state, run.bench
    checks = {c.id: c for c in bench.checks()}
    order = list(checks)
    evaluations = sorted(state.evaluations.values(), key=lambda e: order.index(e.check_id) if e.check_id in order else 1 << 30)
    lines = [f"## {run.clock.now():%Y-%m-%d %H:%M} — {run.run_id}: {bench.name} @ {run.adapter.name}"]
    if evaluations:
        average = sum(e.effective for e in evaluations) / len(evaluations)
        lines.append(f"📊 Evaluations: {len(evaluations)}, average {average:.2f}/10")
        counts = Counter(e.effective for e in evaluations)
        lines.append("📊 Scores: " + ", ".join(f"{_num(s)}: {n}" for s, n in sorted(counts.items(), reverse=True)))
    else:
        lines.append("📊 Evaluations: 0")
    graded = sum(1 for cid in checks if cid in state.evaluations)
    lines.append(f"📊 Check coverage: {graded}/{len(checks)}")
    missing = [cid for cid in checks if cid not in state.evaluations]
    if missing:
        lines.append("📊 Not graded: " + ", ".join(missing))
    imperfect = [e for e in evaluations if e.effective < 10]
    if imperfect:
        lines.append(f"📊 Imperfect answers ({len(imperfect)}):")
        for e in imperfect:
            check = checks.get(e.check_id)
            question = render_templates(check.question, state.start_date) if check else ""
            expected = render_templates(check.answer, state.start_date) if check else ""
            lines.append("📊 " + _imperfect_line(e, question, expected))
    by_type = _per_type(evaluations, {cid: c.types for cid, c in checks.items()})
    if by_type:
        lines.append("📊 Average per type: " + ", ".join(f"{t} {avg:.2f} ({n})" for t, (avg, n) in by_type.items()))
    if state.agent_observations:
        parts = []
        for obs in state.agent_observations:
            size = f" ({obs.tokens_before or '?'} → {obs.tokens_after or '?'} tokens)" if obs.tokens_before or obs.tokens_after else ""
            parts.append(f"phase {obs.phase_index + 1}{size}")
        lines.append(f"📊 Agent compactions: {len(parts)} — " + "; ".join(parts))
    else:
        lines.append("📊 Agent compactions: none observed")
    persona_name = getattr(run.p.persona_model, "name", "?")
    lines.append(f"📊 Persona: {persona_name} · prompt {run.p.prompt_hash} · config {run.p.config_hash}")
    tokens = run.p.meter.as_dict()
    if tokens:
        lines.append("📊 Tokens: " + ", ".join(f"{role} {v.get('prompt_tokens', 0)}+{v.get('completion_tokens', 0)}" for role, v in tokens.items()))
    if run.termination is not None and run.termination.value != "finished":
        lines.append(f"📊 Ended: {run.termination.value} — {state.reason}")
    lines.append(f"📊 Run time: {state.run_seconds / 60:.1f} min")
    return "\n".join(lines) + "\n"


def _imperfect_line(e: EvaluationRecord, question: str, expected: str) -> str:
    attempt = ", 2nd attempt" if e.attempt == 2 else ""
    comment = f" — {e.comment}" if e.comment else ""
    return f"[{_num(e.effective)}/10{attempt}] ({e.check_id}) {question} | expected: {expected} | got: {e.answer}{comment} [transcript #{e.transcript_n}]"


def _per_type(evaluations: list[EvaluationRecord], types: dict[str, list[str]]) -> dict[str, tuple[float, int]]:
    buckets: dict[str, list[float]] = defaultdict(list)
    for e in evaluations:
        for t in types.get(e.check_id, []):
            buckets[t].append(e.effective)
    return {t: (sum(v) / len(v), len(v)) for t, v in sorted(buckets.items())}


def append_report(run: Run) -> None:
    path = run.p.run_dir.parent / REPORT_NAME
    text = format_entry(run)
    with open(path, "a", encoding="utf-8") as handle:
        if handle.tell() > 0:
            handle.write("\n")
        handle.write(text)
