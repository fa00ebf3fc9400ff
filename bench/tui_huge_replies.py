"""Opening a run whose agent answered megabytes (issue 23, item 4): the time to the first frame that shows the
transcript's tail, and the app's peak memory (goals: within 1 s, under 200 MB).

A real run is played first, in this process: the `demo` benchmark (22 messages to the agent) with the scripted
persona and an agent whose every reply is CHARS characters long (default 1,600,000, part of them non-ASCII:
a transcript of ~45 MB, as in the issue), half of the replies one single line, half of them lines of ~90
characters. Then a fresh process opens it as `mmb-tui` would (a `Scheduler` over its config, the real app
headless at 120x40) and measures, from the moment it builds the scheduler: the wall and CPU time to the
first painted frame whose transcript holds the run's last event (each frame turned into escape codes, as a
terminal driver would), the time to expand the last long reply (Enter) and paint it, the lines it takes, and
the process's peak RSS (``VmHWM``). A fresh process, so the RSS is the app's, not the run's that made the
transcript.

    .venv/bin/python bench/tui_huge_replies.py [CHARS] [FOLDER]
    .venv/bin/python bench/tui_huge_replies.py --open FOLDER    (only the measure, of a folder made before)
"""

from __future__ import annotations

import asyncio
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import ClassVar

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

from fixture_agents import ForgetfulAgent  # noqa: E402
from tui_transcript import Frames  # noqa: E402  (bench/: the frame recorder of the TUI bench)

from adapters.base import AdapterContext  # noqa: E402
from engine.config import load_config  # noqa: E402
from engine.placement.scheduler import Scheduler  # noqa: E402
from engine.run.build import build_run  # noqa: E402
from mmb_tui.app import make_app  # noqa: E402
from mmb_tui.transcript.files import read_tail_events  # noqa: E402
from mmb_tui.widgets.transcript_view import TranscriptView  # noqa: E402

GOAL_SECONDS = 1.0
GOAL_MIB = 200
RUN_ID = "huge"
LINE = "Ride 12 — Köln → Düsseldorf → Zürich, 42 km in 3½ h; €18 at the café — “as you told me” ✓. "


class MegabyteAgent(ForgetfulAgent):
    """``ForgetfulAgent``'s answer, then ``reply_chars`` characters more: every other reply one line."""

    name: ClassVar[str] = "megabyte"

    def __init__(self, ctx: AdapterContext) -> None:
        self.reply_chars = int(ctx.options.pop("reply_chars", 1_600_000))
        super().__init__(ctx)

    async def send_message(self, text: str) -> None:
        await super().send_message(text)
        last = self.replies[-1]
        line = LINE if last.seq % 2 else LINE.rstrip() + "\n"
        filler = (line * (self.reply_chars // len(line) + 1))[: self.reply_chars]
        self.replies[-1] = last.model_copy(update={"text": f"{last.text}\n{filler}"})


def make_run(folder: Path, chars: int) -> None:
    """Play the demo benchmark with ``MegabyteAgent`` into ``folder`` (its config beside the results)."""
    raw = {
        "persona": {"model": "scripted/persona"},
        "runs": {RUN_ID: {"benchmark": "demo", "agent": f"{Path(__file__).stem}:MegabyteAgent"}},
        "benchmarks_dir": str(ROOT / "benchmarks"),
        "results_dir": str(folder / "results"),
    }
    raw["runs"][RUN_ID]["reply_chars"] = chars  # type: ignore[index]
    config_path = folder / "config.jsonc"
    config_path.write_text(json.dumps(raw, indent=2), encoding="utf-8")
    asyncio.run(build_run(load_config(config_path), RUN_ID).run())


def peak_rss_mib() -> float:
    """The process's peak RSS: ``VmHWM`` of its memory since its ``exec`` (``ru_maxrss`` of a child process
    started by a bigger one would count the parent's, which Linux carries over the ``exec``)."""
    try:
        status = Path("/proc/self/status").read_text(encoding="ascii")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kib = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:"))
    return kib / 1024


async def measure(config_path: Path) -> None:
    """Open the run of ``config_path`` as ``mmb-tui`` would and print the figures."""
    transcript = config_path.parent / "results" / RUN_ID / "transcript.jsonl"
    last_n = read_tail_events(transcript, 1)[-1].n
    wall, cpu = time.perf_counter(), time.process_time()
    app = make_app(Scheduler(load_config(config_path), front_end="tui"), config_path, watch=False)
    views: list[TranscriptView] = []

    def tail_held() -> bool:
        views[:] = views or list(app.query("#column-0 TranscriptView").results(TranscriptView))
        return bool(views) and bool(views[0].events) and views[0].events[-1].n == last_n

    frames = Frames(app, tail_held)
    async with app.run_test(size=(120, 40)) as pilot:
        await asyncio.wait_for(frames.shown.wait(), timeout=900)
        open_wall, open_cpu = frames.shown_wall - wall, frames.shown_cpu - cpu
        view = views[0]
        view.focus()
        await pilot.pause()
        replies = [e.n for e in view.events if e.kind == "agent_replied"]
        await pilot.press("up")  # the cursor on the last event shown
        while view.cursor_event is not None and view.cursor_event.n != replies[-1]:
            await pilot.press("up")
        height = view.virtual_size.height
        wall, cpu = time.perf_counter(), time.process_time()
        expanded = frames.wait_for(lambda: view.virtual_size.height != height)
        await pilot.press("enter")
        await asyncio.wait_for(expanded.wait(), timeout=900)
        expand_wall, expand_cpu = frames.shown_wall - wall, frames.shown_cpu - cpu
        lines = view.virtual_size.height - height
    peak = peak_rss_mib()
    print(f"first frame with the tail:  {open_wall:.2f} s wall, {open_cpu:.2f} s CPU", end="")
    print(f"   (goal <= {GOAL_SECONDS:.0f} s: {'ok' if open_wall <= GOAL_SECONDS else 'MISSED'})")
    print(
        f"last long reply expanded:   {expand_wall:.2f} s wall, {expand_cpu:.2f} s CPU, {lines:,} lines more"
    )
    print(f"peak RSS of the app:        {peak:.0f} MiB   (goal <= {GOAL_MIB} MiB: ", end="")
    print("ok)" if peak <= GOAL_MIB else "MISSED)")


def main(argv: list[str]) -> None:
    """Make the run (in a temporary folder unless one is named), then measure it in a fresh process."""
    if argv[:1] == ["--open"]:
        asyncio.run(measure(Path(argv[1]) / "config.jsonc"))
        return
    chars = int(argv[0]) if argv else 1_600_000
    folder = Path(argv[1]) if len(argv) > 1 else Path(tempfile.mkdtemp(prefix="mmb-huge-"))
    folder.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    make_run(folder, chars)
    transcript = folder / "results" / RUN_ID / "transcript.jsonl"
    kinds = [json.loads(line)["kind"] for line in transcript.open("rb")]
    print(f"run played in {time.perf_counter() - start:.1f} s: {folder}")
    print(
        f"transcript:                 {transcript.stat().st_size / 1e6:.1f} MB, {len(kinds)} events, "
        f"{kinds.count('agent_replied')} replies of {chars:,}+ characters"
    )
    sys.stdout.flush()
    subprocess.run([sys.executable, __file__, "--open", str(folder)], check=True)


if __name__ == "__main__":
    main(sys.argv[1:])
