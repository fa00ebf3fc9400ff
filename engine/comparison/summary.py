"""The summary entry of a group of repeats in ``results/report.md``, written once every run of the group has
finished: the score's mean with its 95 % interval over the runs, per check type, pass^k for k = 1..n over the
checks and per check (``engine/comparison/figures.py``).

It is written once per sample: its ``Summary of n runs: … · sample <hash>`` line names the runs and a hash of
their grades, and an entry with that line already in the report is not written again (a restart, a second
process); a run continued later (chapters appended) makes a new sample and a new entry. The header reads like
a run's (``## <date> UTC — <group>: <benchmark> @ <agent>``), so ``mmb-tui report <group>`` and the report
browser show it; its ``Score:`` line leads with the mean.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import UTC, datetime
from pathlib import Path

from engine.benchmark.model import Benchmark
from engine.comparison.compare import pass_k_label
from engine.comparison.figures import GroupFigures, group_figures
from engine.comparison.results import ResultError, RunResult, load_result
from engine.comparison.stats import CONFIDENCE, RESAMPLES, SEED
from engine.config import Config
from engine.report.prices import tokens_label
from engine.report.writer import REPORT_NAME, append_entry
from engine.sanitize import printable

log = logging.getLogger(__name__)


def sample_line(results: list[RunResult]) -> str:
    """The entry's identity: its runs and a hash of what their figures are made of."""
    digest = hashlib.sha256("|".join(r.fingerprint() for r in results).encode()).hexdigest()[:12]
    return f"Summary of {len(results)} runs: {', '.join(r.run_id for r in results)} · sample {digest}"


def summary_entry(fig: GroupFigures, results: list[RunResult], now: datetime | None = None) -> str:
    """The summary entry of ``results`` (figures ``fig``), dated ``now`` (UTC by default)."""
    stamp = (now or datetime.now(UTC)).astimezone(UTC)
    n = fig.n
    lines = [
        f"## {stamp:%Y-%m-%d %H:%M} UTC — {fig.name}: {', '.join(fig.benchmarks)} @ {', '.join(fig.agents)}"
    ]
    lines.append(sample_line(results))
    lines.append(
        f"Score: {fig.score.mean:.2f}/10 mean over {n} runs, {CONFIDENCE:.0%} CI [{fig.score.low:.2f}, "
        f"{fig.score.high:.2f}] (bootstrap over the runs' headline scores, {RESAMPLES} resamples, seed {SEED};"
        f" n {n})"
    )
    lines.append("Per run: " + ", ".join(f"{r.run_id} {r.score:.2f}" for r in results))
    lines.append(f"pass^k (k = 1..{n}, mean over {len(fig.per_check)} checks): {pass_k_label(fig.pass_k)}")
    for check_type, tf in fig.types.items():
        lines.append(
            f"Type {check_type}: {tf.score.label()} (n {tf.score.n}) · pass^k {pass_k_label(tf.pass_k)}"
            f" · graded {tf.graded}/{tf.planned}" + (f" · persona faults {tf.faults}" if tf.faults else "")
        )
    lines.append(f"pass^k per check (right in c of n runs: pass^1..pass^{n}):")
    types = {c: t for r in results for c, t in r.planned.items()}
    lines += [
        f"Check {check}{''.join(f' [{t}]' for t in types.get(check, []))}: {right}/{counted} · {pass_k_label(pass_k)}"
        for check, (right, counted, pass_k) in fig.per_check.items()
    ]
    lines.append(f"Check coverage: {fig.graded}/{fig.planned}")
    lines.append(f"Persona faults: {fig.faults} (left out of the scores)")
    if fig.tokens:
        lines.append("Tokens (all runs): " + tokens_label(fig.tokens, fig.costs))
    return (
        "\n".join(printable(("📊 " if i else "") + line, newlines=False) for i, line in enumerate(lines))
        + "\n"
    )


def _finished_results(config: Config, run_ids: tuple[str, ...]) -> list[RunResult] | None:
    """Every run's result when every one has finished; None while one has not (or cannot be read)."""
    cache: dict[Path, Benchmark] = {}
    results = []
    for run_id in run_ids:
        try:
            result = load_result(config, run_id, cache)
        except ResultError as exc:
            log.warning("group summary: %s", exc)
            return None
        if result is None or not result.finished:
            return None
        results.append(result)
    return results


def write_group_summaries(config: Config, run_id: str) -> list[str]:
    """After ``run_id`` ended: the summary entry of each group of repeats it belongs to whose runs have all
    finished, unless the report has it already; returns the groups written."""
    written = []
    report = config.results_path() / REPORT_NAME
    for name, group in config.groups.items():
        if group.is_matrix or run_id not in group.runs:
            continue
        results = _finished_results(config, group.runs)
        if results is None:
            continue
        try:
            text = report.read_text(encoding="utf-8")
        except OSError:
            text = ""
        if sample_line(results) in text:
            continue
        append_entry(report, summary_entry(group_figures(name, results), results))
        written.append(name)
    return written
