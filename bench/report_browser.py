"""Open the report browser over 10, 100 and 1,000 realistic entries and print how long it takes.

The entries are written by the real writer (``engine/report/writer.py`` ``format_entry``, plus the ``Entry:`` id line
``engine/run/loop.py`` adds) from run summaries of the ``max`` benchmark (36 checks): agents of different quality,
verbatim replies up to the report's crop, 2nd attempts, persona faults, unfinished runs, finish times a few
minutes apart with some entries appended late (after a kill). The time measured is the real thing: from
pushing ``ReportScreen`` on a headless app until it is mounted and its tree renders the newest entry as its
first row (reading and parsing report.md included). Then ``mmb-tui report`` over 5,000 entries, in process
(stdout to /dev/null) and as a fresh process.

    .venv/bin/python bench/report_browser.py
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from textual.widgets import Tree  # noqa: E402
from tui_fakes import FakeEngine, _view, write_config  # noqa: E402

from engine.benchmark.loader import load_with_problems  # noqa: E402
from engine.benchmark.model import Benchmark  # noqa: E402
from engine.events import EvaluationLogged, TerminationReason  # noqa: E402
from engine.report.provenance import Provenance  # noqa: E402
from engine.report.writer import RunSummary, format_entry  # noqa: E402
from engine.state import RunState  # noqa: E402
from mmb_tui.app import make_app  # noqa: E402
from mmb_tui.front_ends.cli import main as cli_main  # noqa: E402
from mmb_tui.screens.report_screen import ReportScreen  # noqa: E402

GOAL_OPEN = 0.5  # seconds to open the browser over 1,000 entries (issue 12)
GOAL_CLI = 0.5  # seconds for `mmb-tui report` over 5,000 entries
RUNS = {"hermes-1": 0.8, "openclaw-1": 0.7, "chatbot-1": 0.55, "openclaw-2": 0.75}  # run -> P(10/10)
WORDS = "the bathroom tile is fifty five a square metre and the total comes to about four thousand".split()


def _prose(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high))).capitalize() + "."


def _summary(rng: random.Random, bench: Benchmark, run_id: str, index: int) -> RunSummary:
    checks = bench.checks()
    ended = TerminationReason.FINISHED
    graded = len(checks)
    if rng.random() < 0.1:  # an unfinished run: waiting on a model, or crashed, part of the checks graded
        ended = rng.choice([TerminationReason.WAITING, TerminationReason.CRASHED])
        graded = rng.randint(0, len(checks) - 1)
    state = RunState(
        run_id=run_id,
        benchmark=bench.name,
        agent=run_id.split("-")[0],
        start_date=date(2026, 7, 1),
        finished=ended is TerminationReason.FINISHED,
        reason="" if ended is TerminationReason.FINISHED else "persona model: 429 Too Many Requests",
        persona_compactions=rng.randint(0, 4),
        run_seconds=rng.uniform(1800, 6000),
    )
    n = 40
    for check in checks[:graded]:
        n += rng.randint(8, 40)
        score = 10.0 if rng.random() < RUNS[run_id] else rng.choice([7.5, 5.0, 2.5, 0.0])
        attempt = 2 if score < 10 and rng.random() < 0.2 else 1
        fault = "pets 1.2 holds 300 g a day, expected 250 g a day" if rng.random() < 0.02 else ""
        state.evaluations[check.id] = EvaluationLogged(
            check_id=check.id,
            score=score,
            attempt=attempt,
            effective=score * (0.5 if attempt == 2 else 1.0),
            question=check.question,
            expected=check.answer,
            answer=_prose(rng, 4, 20),
            comment=_prose(rng, 3, 25),
            types=check.types,
            replies=[_prose(rng, 8, 120) for _ in range(rng.randint(1, 2))],
            persona_fault=fault,
            n=n,
        )
    return RunSummary(
        run_id=run_id,
        agent=state.agent,
        bench=bench,
        state=state,
        ended=ended,
        virtual_now=datetime(2026, 7, 1, 18, 0),
        tokens={"persona": {"prompt_tokens": 812_000, "completion_tokens": 40_100}},
        provenance=Provenance(
            benchmark_hash="3f9a1c2b7d4e",
            version="0.9.0",
            persona="deepseek-flash (deepseek-chat)",
            prompt_hash="0a1b2c3d4e5f",
            agent_model="gpt-4.1-mini",
            config_hash=f"{index % 7:012x}",
        ),
    )


def write_report(path: Path, count: int, bench: Benchmark, seed: int = 12) -> None:
    rng = random.Random(seed)
    start = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)
    texts = []
    for index in range(count):
        finished = start + timedelta(minutes=7 * index)
        if rng.random() < 0.03:  # kept with the checkpoint over a kill, appended at the next start
            finished -= timedelta(minutes=rng.randint(10, 60))
        run = _summary(rng, bench, rng.choice(list(RUNS)), index)
        texts.append(
            format_entry(run, now=finished) + f"📊 Entry: {uuid.UUID(int=rng.getrandbits(128)).hex[:12]}\n"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(texts), encoding="utf-8")


async def open_seconds(folder: Path, repeats: int = 5) -> tuple[float, float, int]:
    """Median times to push the browser until its first row is drawn, and until every entry is in its tree
    (they are added a batch after each repaint), and the entries it read."""
    results = folder / "results"
    engine = FakeEngine(results, [_view(run, run.split("-")[0], "idle", 0, 0, None, "") for run in RUNS])
    engine.write_files = False
    app = make_app(engine, write_config(folder, list(RUNS)), clock_frozen=True, watch=False)
    first_row: list[float] = []
    every_entry: list[float] = []
    entries = 0
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        for _ in range(repeats):
            start = time.perf_counter()
            screen = ReportScreen(results / "report.md")
            await app.push_screen(screen)
            tree = screen.query_one(Tree)
            newest = screen.entries[0].title if screen.entries else "report.md"
            while not (app.screen is screen and newest in "".join(s.text for s in tree.render_line(0))):
                await pilot.pause()
            first_row.append(time.perf_counter() - start)
            while len(tree.root.children) < len(screen.shown):
                await pilot.pause()
            every_entry.append(time.perf_counter() - start)
            entries = len(screen.entries)
            app.pop_screen()
            await pilot.pause()
    return statistics.median(first_row), statistics.median(every_entry), entries


def cli_seconds(folder: Path) -> tuple[float, float]:
    """``mmb-tui report`` over the folder's report: in process (median of 3), and as a fresh process."""
    config = str(folder / "config.jsonc")
    times = []
    with open(os.devnull, "w") as sink:
        for _ in range(3):
            start = time.perf_counter()
            with contextlib.redirect_stdout(sink):
                assert cli_main(["--config", config, "report"]) == 0
            times.append(time.perf_counter() - start)
        start = time.perf_counter()
        subprocess.run(
            [str(ROOT / ".venv/bin/mmb-tui"), "--config", config, "report"], stdout=sink, check=True
        )
        process = time.perf_counter() - start
    return statistics.median(times), process


def main() -> None:
    bench, problems = load_with_problems(ROOT / "benchmarks" / "max")
    assert bench is not None, problems
    start = time.perf_counter()
    sum(range(10**7))
    print(
        f"this machine: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; 10**7 additions in pure"
        f" Python take {time.perf_counter() - start:.2f} s (about 0.1 s on an idle recent CPU)"
    )
    print("report browser: push the screen until its first row is drawn (median of 5)")
    for count in (10, 100, 1000):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            write_report(folder / "results" / "report.md", count, bench)
            size = (folder / "results" / "report.md").stat().st_size
            seconds, filled, read = asyncio.run(open_seconds(folder))
            assert read == count, (read, count)
            verdict = "ok" if seconds < GOAL_OPEN else "TOO SLOW"
            print(
                f"  {count:>5,} entries ({size / 2**20:4.1f} MiB): first rows {seconds:6.3f} s"
                f"   goal < {GOAL_OPEN} s at 1,000 entries — {verdict}"
                f"   (every entry in the tree: {filled:.3f} s)"
            )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_config(folder, list(RUNS))
        write_report(folder / "results" / "report.md", 5000, bench)
        size = (folder / "results" / "report.md").stat().st_size
        in_process, process = cli_seconds(folder)
        verdict = "ok" if in_process < GOAL_CLI else "TOO SLOW"
        print(f"mmb-tui report, 5,000 entries ({size / 2**20:.1f} MiB), stdout to /dev/null:")
        print(f"  in process:         {in_process:6.3f} s   goal < {GOAL_CLI} s — {verdict}")
        print(f"  as a fresh process: {process:6.3f} s   (interpreter start and imports included)")


if __name__ == "__main__":
    main()
