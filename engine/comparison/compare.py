"""``mmb-tui compare RUN-OR-GROUP… [--csv FILE] [--json FILE]``: runs and groups side by side, from their saved
state (no scheduler needed): score mean with its 95 % interval, per check type, pass^k, coverage, persona
faults, tokens and cost (``engine/comparison/figures.py``); a table on the terminal, the same figures as CSV (one
row per argument × check type, ``ALL`` for the headline) and JSON.

An argument is a matrix (one row per agent × benchmark cell), a group (a run's repeats), a run, or a name
whose repeats ``<name>.r<k>`` are on disk without being in the config (``mmb-tui run X --repeats N``).

A run still playing (``playing``: the caller's test, its lock held) is left out of the figures until it ends:
its row's ``n`` says ``+1 playing``, and a row whose runs all play has no figures yet, only a line saying so.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from engine.benchmark.model import Benchmark
from engine.comparison.figures import GroupFigures, group_figures
from engine.comparison.flips import RowFlips, flips_json, repeat_lines, row_flips
from engine.comparison.results import ResultError, RunResult, has_result, load_result, repeats_on_disk
from engine.comparison.stats import CONFIDENCE, RESAMPLES, SEED, Estimate
from engine.config import Config
from engine.report.prices import usd

ALL = "ALL"  # the CSV's check type of the headline figures


class CompareError(Exception):
    """An argument that names nothing with results: one line."""


def resolve(config: Config, name: str) -> list[tuple[str, list[str]]]:
    """The rows an argument stands for, each a name and its runs."""
    group = config.groups.get(name)
    if group is not None and group.is_matrix:
        return [
            (cell, list(config.groups[cell].runs) if cell in config.groups else [cell])
            for cell in group.cells
        ]
    if group is not None:
        return [(name, list(group.runs))]
    on_disk = repeats_on_disk(config, name)
    if on_disk:
        return [(name, on_disk)]
    if name in config.runs or has_result(config, name):
        return [(name, [name])]
    raise CompareError(
        f"compare: no run, group or matrix {name!r} in the config or in {config.results_path()}"
    )


def config_rows(config: Config) -> list[tuple[str, list[str]]]:
    """Every row the config declares, in its order: matrices by cell, repeated runs as one, single runs."""
    rows: list[tuple[str, list[str]]] = []
    grouped: set[str] = set()
    for name, group in config.groups.items():
        if group.is_matrix:
            rows += resolve(config, name)
            grouped.update(group.runs)
    for name, group in config.groups.items():
        if not group.is_matrix and not set(group.runs) & grouped:
            rows.append((name, list(group.runs)))
            grouped.update(group.runs)
    rows += [(run_id, [run_id]) for run_id in config.runs if run_id not in grouped]
    return rows


def figures_of(
    config: Config,
    rows: list[tuple[str, list[str]]],
    keep_empty: bool = False,
    playing: Callable[[str], bool] | None = None,
) -> tuple[list[GroupFigures], list[str]]:
    """The figures of each row with at least one result, and a line per row or run that could not be read
    (or has no result yet when ``keep_empty``); an unfinished run ``playing`` says still plays is left out of
    the figures (named in ``GroupFigures.playing``, or in a line when the whole row plays)."""
    cache: dict[Path, Benchmark] = {}
    figures: list[GroupFigures] = []
    problems: list[str] = []
    for name, run_ids in rows:
        results: list[RunResult] = []
        missing: list[str] = []
        still: list[str] = []  # playing: left out until they end
        for run_id in run_ids:
            try:
                result = load_result(config, run_id, cache)
            except ResultError as exc:
                problems.append(str(exc))
                result = None
            if result is None:
                missing.append(run_id)
            elif not result.finished and playing is not None and playing(run_id):
                still.append(run_id)
            else:
                results.append(result)
        if results:
            figures.append(group_figures(name, results, missing, still))
        elif still:  # the whole row plays
            problems.append(f"{name}: still playing ({', '.join(still)}): no figures until it ends")
        elif keep_empty:
            problems.append(f"{name}: no results yet")
    return figures, problems


# ---- output --------------------------------------------------------------------------------------------


def n_label(fig: GroupFigures) -> str:
    """The sample's size, and the runs left out while they play: ``3``, ``2 +1 playing``."""
    return f"{fig.n} +{len(fig.playing)} playing" if fig.playing else str(fig.n)


def pass_k_label(values: list[float | None]) -> str:
    """``1.00 0.83 0.67`` for k = 1, 2, 3 (``–`` where no check has k runs)."""
    return " ".join("–" if v is None else f"{v:.2f}" for v in values)


def compact_tokens(tokens: dict[str, dict[str, int]]) -> str:
    """``p 1200 (900 cached) a 340``: total tokens per role, by its initial, with its cached input."""
    return " ".join(
        f"{role[0]} {v['prompt_tokens'] + v['completion_tokens']}"
        + (f" ({v['cached_tokens']} cached)" if v.get("cached_tokens") else "")
        for role, v in tokens.items()
        if v["prompt_tokens"] + v["completion_tokens"]
    )


def cost_label(fig: GroupFigures) -> str:
    """``$1.20 (p $0.20, a $1.00)``, ``–`` without prices."""
    if fig.cost is None:
        return "–"
    roles = ", ".join(f"{role[0]} {usd(amount)}" for role, amount in fig.costs.items())
    return f"{usd(fig.cost)} ({roles})"


def table_rows(figures: list[GroupFigures]) -> tuple[list[str], list[list[str]]]:
    """The comparison as a header and rows of cells (the terminal table and the TUI's): the score as mean
    [95 % CI], pass^k, coverage, persona faults, cost and tokens, then each check type as mean [95 % CI]
    (last: the widest part, which the comparison screen also charts)."""
    types = sorted({t for fig in figures for t in fig.types})
    header = ["run / group", "n", f"score [{CONFIDENCE:.0%} CI]", "pass^k k=1..n", "coverage", "faults"]
    header += ["cost", "tokens", *types]
    rows = []
    for fig in figures:
        cells = [fig.name, n_label(fig), fig.score.label(), pass_k_label(fig.pass_k)]
        cells += [
            f"{fig.graded}/{fig.planned}",
            str(fig.faults),
            cost_label(fig),
            compact_tokens(fig.tokens) or "–",
        ]
        cells += [fig.types[t].score.label(1) if t in fig.types else "–" for t in types]
        rows.append(cells)
    return header, rows


def format_table(figures: list[GroupFigures]) -> str:
    """A plain-text table, columns padded to their widest cell, with a line under the header."""
    header, rows = table_rows(figures)
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]
    lines.insert(1, "  ".join("─" * w for w in widths))
    return "\n".join(lines) + "\n"


def _estimate(e: Estimate) -> dict[str, float]:
    return {"mean": e.mean, "ci_low": e.low, "ci_high": e.high}


def as_json(figures: list[GroupFigures], flips: dict[str, RowFlips] | None = None) -> list[dict[str, Any]]:
    """The figures as plain data: what ``--json`` writes; with ``flips``, each check's flip rate across the
    row's repeats and the memory-autopsy class of each of its failures (issue 33)."""
    flips = flips or {}
    return [
        {
            "name": fig.name,
            "runs": list(fig.runs),
            "missing": list(fig.missing),
            "playing": list(fig.playing),
            "n": fig.n,
            "finished": fig.finished,
            "agents": list(fig.agents),
            "benchmarks": list(fig.benchmarks),
            "score": _estimate(fig.score),
            "pass_k": fig.pass_k,
            "coverage": {"graded": fig.graded, "planned": fig.planned},
            "persona_faults": fig.faults,
            "types": {
                t: {
                    **_estimate(tf.score),
                    "pass_k": tf.pass_k,
                    "coverage": {"graded": tf.graded, "planned": tf.planned},
                    "persona_faults": tf.faults,
                }
                for t, tf in fig.types.items()
            },
            "checks": {
                c: {"right": right, "runs": n, "pass_k": pk, **_flips_of(flips, fig.name).get(c, {})}
                for c, (right, n, pk) in fig.per_check.items()
            },
            "tokens": fig.tokens,
            "cost": {"total": fig.cost, **fig.costs} if fig.cost is not None else None,
        }
        for fig in figures
    ]


def _flips_of(flips: dict[str, RowFlips], name: str) -> dict[str, dict[str, object]]:
    return flips_json(flips[name]) if name in flips else {}


def as_csv(figures: list[GroupFigures]) -> str:
    """One row per argument × check type (``ALL``: the headline), with pass^1..pass^K as columns."""
    max_k = max((fig.n for fig in figures), default=0)
    roles = list(dict.fromkeys(role for fig in figures for role in fig.tokens))
    header = ["name", "check_type", "n", "mean", "ci_low", "ci_high", "graded", "planned", "persona_faults"]
    header += [f"pass^{k}" for k in range(1, max_k + 1)]
    header += [f"{role}_{kind}_tokens" for role in roles for kind in ("input", "cached_input", "output")]
    header += [f"{role}_cost_usd" for role in roles] + ["cost_usd"]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)

    def k_cells(values: list[float | None]) -> list[str]:
        return ["" if v is None else f"{v:.4f}" for v in values] + [""] * (max_k - len(values))

    for fig in figures:
        spend = [
            str(fig.tokens.get(r, {}).get(k, ""))
            for r in roles
            for k in ("prompt_tokens", "cached_tokens", "completion_tokens")
        ]
        spend += [f"{fig.costs[r]:.6f}" if r in fig.costs else "" for r in roles]
        spend.append(f"{fig.cost:.6f}" if fig.cost is not None else "")
        head = [fig.name, ALL, fig.n, *_cells(fig.score), fig.graded, fig.planned, fig.faults]
        writer.writerow([*head, *k_cells(fig.pass_k), *spend])
        for t, tf in fig.types.items():
            row = [fig.name, t, tf.score.n, *_cells(tf.score), tf.graded, tf.planned, tf.faults]
            writer.writerow([*row, *k_cells(tf.pass_k), *[""] * len(spend)])
    return out.getvalue()


def as_checks_csv(figures: list[GroupFigures], flips: dict[str, RowFlips]) -> str:
    """One row per argument × check: its runs, how many answered it right, pass^1..pass^K, its flip rate
    across the repeats (empty under two counted runs) and its failures by memory class (``lost:2; unused:1``)."""
    max_k = max((fig.n for fig in figures), default=0)
    header = ["name", "check_id", "runs", "right", *[f"pass^{k}" for k in range(1, max_k + 1)]]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*header, "flip_rate", "failures"])
    for fig in figures:
        found = _flips_of(flips, fig.name)
        for check, (right, runs, pass_k) in fig.per_check.items():
            flip = found.get(check, {})
            rate = flip.get("flip_rate")
            failures = flip.get("failures") or {}
            assert isinstance(failures, dict)
            cells = ["" if v is None else f"{v:.4f}" for v in pass_k] + [""] * (max_k - len(pass_k))
            classes = "; ".join(f"{name}:{count}" for name, count in failures.items())
            rate_cell = f"{rate:.4f}" if isinstance(rate, float | int) else ""
            writer.writerow([fig.name, check, runs, right, *cells, rate_cell, classes])
    return out.getvalue()


def _cells(e: Estimate) -> list[str]:
    return [f"{e.mean:.4f}", f"{e.low:.4f}", f"{e.high:.4f}"]


def main_compare(
    config: Config,
    names: list[str],
    csv_path: Path | None = None,
    json_path: Path | None = None,
    out: TextIO | None = None,
    playing: Callable[[str], bool] | None = None,
    checks_csv_path: Path | None = None,
) -> int:
    """Print the comparison of ``names`` and write the exports asked for; 2 for a name that means nothing, 1
    when no argument has results yet. ``playing``: whether a run still plays (left out until it ends)."""
    out = out or sys.stdout
    rows: list[tuple[str, list[str]]] = []
    try:
        for name in names:
            rows += resolve(config, name)
    except CompareError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    figures, problems = figures_of(config, rows, keep_empty=True, playing=playing)
    for problem in problems:
        print(f"compare: {problem}", file=sys.stderr)
    if not figures:
        return 1
    out.write(format_table(figures))
    out.write(
        f"score and types: mean [{CONFIDENCE:.0%} CI], bootstrap over the runs' headline scores "
        f"({RESAMPLES} resamples, seed {SEED});\n"
    )
    out.write(
        "pass^k: a check answered right (7/10 or more) in all of k runs drawn from n, mean over checks\n"
    )
    flips = row_flips(config, figures)  # read once: the lines under the table and the JSON export
    if across := repeat_lines(
        config, figures, flips
    ):  # flips per check with their memory classes, noise floors
        out.write("across repeats (flip rate: the share of pairs of repeats that disagree on a check):\n")
        out.write("".join(f"  {line}\n" for line in across))
    for path, text in (
        (csv_path, as_csv(figures)),
        (json_path, json.dumps(as_json(figures, flips), indent=2) + "\n"),
        (checks_csv_path, as_checks_csv(figures, flips)),
    ):
        if path is not None:
            path.write_text(text, encoding="utf-8")
            out.write(f"written: {path}\n")
    return 0
