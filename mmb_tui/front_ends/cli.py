"""The ``mmb-tui`` command line: the app (no arguments), run (runs, groups, matrices), compare, validate, report, memory, regrade, serve-scripted."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from pathlib import Path

from engine.config import Config, ConfigError, load_config
from mmb_tui.front_ends.tui_logging import file_log


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mmb-tui", description="MarathonMemBench: long-term-memory benchmarks for chat agents"
    )
    parser.add_argument(
        "--config", default="config.jsonc", help="path to config.jsonc (default: ./config.jsonc)"
    )
    parser.add_argument(
        "--detach",
        action="store_true",
        help="with run: play the runs in a background process (`mmb-tui --detach run RUN-ID…`)",
    )
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("run", help="run or resume runs of config.jsonc")
    run.add_argument("runs", nargs="*", metavar="RUN-ID", help="runs, or groups: a repeated run's name")
    run.add_argument("--repeats", type=int, metavar="N", help="play N repeats of each (overrides the config)")
    run.add_argument("--matrix", metavar="NAME", help="play every run of a matrix of config.jsonc")
    run.add_argument("--headless", action="store_true", help="no UI: print events and a progress line")
    run.add_argument(
        "--detach",
        action="store_true",
        default=argparse.SUPPRESS,
        help="play them in a background process; `mmb-tui` watches them",
    )
    run.add_argument("--config", default=argparse.SUPPRESS)
    validate = sub.add_parser("validate", help="check benchmarks without running them")
    validate.add_argument(
        "benchmarks",
        nargs="*",
        metavar="BENCH",
        help="benchmark folders or names under benchmarks_dir (default: all)",
    )
    validate.add_argument("--config", default=argparse.SUPPRESS)
    compare = sub.add_parser(
        "compare", help="runs, repeats and matrices side by side: mean ± 95%% CI, pass^k, coverage, cost"
    )
    compare.add_argument("names", nargs="+", metavar="RUN-OR-GROUP")
    compare.add_argument("--csv", type=Path, metavar="FILE", help="also write the figures as CSV")
    compare.add_argument("--json", type=Path, metavar="FILE", help="also write the figures as JSON")
    compare.add_argument(
        "--checks-csv",
        type=Path,
        metavar="FILE",
        help="also write one CSV row per check: right, pass^k, flip rate, failures by memory class",
    )
    compare.add_argument("--config", default=argparse.SUPPRESS)
    report = sub.add_parser("report", help="reprint results/report.md entries: the latest of each run")
    report.add_argument("run", nargs="?", metavar="RUN-ID")
    report.add_argument("--all", action="store_true", help="every entry, also those a newer one supersedes")
    report.add_argument("--config", default=argparse.SUPPRESS)
    memory = sub.add_parser("memory", help="the agent's memory files at any moment of a run, and diffs")
    memory.add_argument(
        "what", nargs="+", metavar="RUN-ID [FILE]", help="a run, and a memory file (default: list)"
    )
    memory.add_argument("--at", metavar="MOMENT", help="a phase (its end), start, end (default) or #EVENT")
    memory.add_argument("--diff", nargs=2, metavar=("A", "B"), help="what changed from moment A to B")
    memory.add_argument("--snapshots", action="store_true", help="list every snapshot of the history")
    memory.add_argument("--config", default=argparse.SUPPRESS)
    judge_eval = sub.add_parser(
        "judge-eval", help="measure a judge against labeled answers (agreement, false accepts/rejects)"
    )
    judge_eval.add_argument(
        "--cases",
        metavar="FILE.jsonl",
        help="labeled answers, one per line (default: the shipped cases, engine/models/judge_cases.jsonl)",
    )
    judge_eval.add_argument(
        "--judge", metavar="MODEL", help="a model of config.jsonc (default: scripted/judge)"
    )
    judge_eval.add_argument("--config", default=argparse.SUPPRESS)
    regrade = sub.add_parser(
        "regrade", help="grade a saved run again with a judge, without replaying it; appends a report entry"
    )
    regrade.add_argument("run", metavar="RUN-ID", help="a run with a transcript in the results folder")
    regrade.add_argument(
        "--judge", metavar="MODEL", help="a model of config.jsonc (default: the run's, else scripted/judge)"
    )
    regrade.add_argument("--config", default=argparse.SUPPRESS)
    serve = sub.add_parser(
        "serve-scripted", help="serve the scripted models as an OpenAI-compatible endpoint"
    )
    serve.add_argument("--port", type=int, default=8765)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--config", default=argparse.SUPPRESS)
    return parser


def _parse(argv: list[str] | None) -> argparse.Namespace:
    """The arguments; ``memory RUN --at 2 FILE``: a FILE after an option is its too (argparse would refuse it)."""
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra and (args.command != "memory" or any(e.startswith("-") for e in extra)):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if extra:
        args.what += extra
    return args


def _bench_path(name: str, root: Path) -> Path:
    """``name`` as a folder when it is one (or looks like a path), else the benchmark of that name in ``root``."""
    path = Path(name)
    if path.exists() or "/" in name or not (root / name).exists():
        return path
    return root / name


def _config(path: str) -> Config:
    return load_config(Path(path))


def _log_path(config: Config) -> Path:
    """``results/mmb-tui.log``, its folder made (a failure to make it is one the log counts, not a crash)."""
    results = config.results_path()
    with contextlib.suppress(OSError):
        results.mkdir(parents=True, exist_ok=True)
    return results / "mmb-tui.log"


def main(argv: list[str] | None = None) -> int:
    from engine.run.lock import private_umask

    private_umask()  # all it and its agents write (results/, mmb-tui.log) is 0600/0700
    args = _parse(argv)
    if args.detach and args.command != "run":
        print(
            "mmb-tui: --detach plays named runs in the background: mmb-tui --detach run RUN-ID…",
            file=sys.stderr,
        )
        return 2
    try:
        if args.command == "validate":
            from engine.benchmark.validate import main_validate

            config = _config(args.config) if Path(args.config).exists() else None
            root = config.base_dir / config.benchmarks_dir if config else Path("benchmarks")
            # a folder as given, else a benchmark's name as runs name it (under ``benchmarks_dir``)
            paths = [_bench_path(name, root) for name in args.benchmarks]
            if not paths:
                paths = sorted(p for p in root.iterdir() if (p / "benchmark.json").exists())
            return main_validate(paths)
        if args.command == "judge-eval":
            from engine.judge.evaluate import main_judge_eval

            config = _config(args.config) if Path(args.config).exists() else None
            return main_judge_eval(Path(args.cases) if args.cases else None, args.judge, config)
        if args.command == "serve-scripted":
            from engine.models.server import main_serve

            return main_serve(args.port, args.host, args.config if Path(args.config).exists() else None)
        config = _config(args.config)
        if args.command == "regrade":
            from engine.judge.regrade import main_regrade

            return main_regrade(config, args.run, args.judge)
        if args.command == "memory":
            from engine.autopsy.memory_command import main_memory

            if len(args.what) > 2:
                print("mmb-tui memory: RUN-ID [FILE]: one run and at most one file", file=sys.stderr)
                return 2
            run, file = args.what[0], (args.what[1:] or [None])[0]
            return main_memory(config, run, args.at, file, args.diff, args.snapshots)
        if args.command == "report":
            from engine.report.entries import reprint

            text = reprint(config.results_path() / "report.md", args.run, latest=not args.all)
            if not text:
                print(
                    f"no report entries{' for ' + args.run if args.run else ''} in {config.results_path() / 'report.md'}"
                )
                return 1
            # safe to print: what was not printable as read is escaped (engine/report/entries.py)
            sys.stdout.flush()
            out = getattr(sys.stdout, "buffer", None)  # the bytes as they are (a StringIO has no buffer)
            if out is None:
                sys.stdout.write(text.decode())
            else:
                out.write(text)
                out.flush()
            return 0
        if args.command == "compare":
            from engine.comparison.compare import main_compare
            from engine.run.lock import held

            results = config.results_path()  # a run whose lock is held still plays: left out of the figures
            return main_compare(
                config,
                args.names,
                args.csv,
                args.json,
                playing=lambda run_id: held(results / run_id),
                checks_csv_path=args.checks_csv,
            )
        if args.command == "run":
            from engine.placement.selection import select_runs

            if not args.runs and not args.matrix:
                print("mmb-tui run: name a run (or group), or --matrix NAME", file=sys.stderr)
                return 2
            if args.repeats is not None and args.repeats < 1:
                print("mmb-tui run: --repeats must be at least 1", file=sys.stderr)
                return 2
            config, run_ids = select_runs(Path(args.config), args.runs, args.repeats, args.matrix)
            if args.detach:
                from mmb_tui.front_ends.session import detach_runs

                return detach_runs(config, Path(args.config), run_ids)
            with file_log(_log_path(config)):
                if args.headless:
                    from mmb_tui.front_ends.headless import run_headless

                    return asyncio.run(run_headless(config, run_ids))
                return _run_app(config, Path(args.config), start=run_ids)
        with file_log(_log_path(config)):
            return _run_app(config, Path(args.config), start=[])
    except ConfigError as exc:
        print(str(exc), file=sys.stderr)
        return 2


def _run_app(config: Config, config_path: Path, start: list[str]) -> int:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):  # the app would wait for a terminal forever
        print(
            "mmb-tui: the app needs a terminal (stdin and stdout are not one); "
            "use `mmb-tui run RUN-ID... --headless` to run without one",
            file=sys.stderr,
        )
        return 2
    from engine.placement.scheduler import Scheduler
    from mmb_tui.front_ends.session import play_app

    return asyncio.run(play_app(Scheduler(config, front_end="tui"), config_path, start))


if __name__ == "__main__":
    sys.exit(main())
