"""The Textual app over an embedded engine; ``make_app`` is used by the command line and the tests."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any

from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.dom import DOMNode
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from engine.api import EngineApi
from engine.config import Config, ConfigError, load_config
from engine.events import Event
from mmb_tui.file_watch import watch_paths
from mmb_tui.front_ends.tui_logging import attach_file_log, detach_file_log, watch_log_failures
from mmb_tui.screens.help_screen import HelpScreen, HelpSection
from mmb_tui.screens.main_screen import MainScreen
from mmb_tui.screens.quit_screen import QuitChoice, QuitScreen
from mmb_tui.view_format import IN_FLIGHT

log = logging.getLogger(__name__)

DETACH_TEXT = (
    "leave the screen: the runs go on in a background process and the prompt comes back; "
    "`mmb-tui` attaches to them again"
)
"""What ``d`` does, in the one text the help, the command palette and the quit dialog show."""

HELP: list[HelpSection] = [
    (
        "Runs",
        [
            ("↑ ↓  [ ]", "select a run (in the runs pane / anywhere)"),
            ("s", "start the selected run, or resume it from its state"),
            (
                "p",
                "pause (a call in flight, or a back-off before a retry, is cut short: made again) / resume",
            ),
            ("a", "abort a hung model or agent call, or a back-off: retry now"),
            ("S", "start every idle or crashed run (asks first)"),
            (
                "P",
                "pause every running or backing-off run; when none plays, resume every paused or waiting one",
            ),
            ("R", "restart from scratch (asks first; deletes results/<run>)"),
            ("/", "in the runs pane: filter the runs by id, status, agent or benchmark (k of n; Esc clears)"),
        ],
    ),
    (
        "Operator",
        [
            ("n", "step to the next phase (gates shown; overriding asks first)"),
            ("e", "edit a fact of a live sheet (1.2) or add one (category 3)"),
            ("N", "switch the agent to a new session (asks first)"),
            ("m", "send the persona a note"),
        ],
    ),
    (
        "Transcript",
        [
            ("tab", "move focus between the runs pane and the transcripts"),
            ("↑ ↓ / j k", "move the cursor over events"),
            ("enter", "fold / unfold the event under the cursor"),
            ("end / G", "jump to the tail and follow it"),
            ("f", "filter: all → messages → evaluations → errors → agent actions"),
            ("A", "the agent's own actions (📝 memory write, 📖 read, 💻 command …) and messages / all"),
            ("/", "in a transcript: search the loaded events; n / N next / previous match, Esc ends it"),
            ("g / :", "go to event number N (older ones are loaded from the file)"),
        ],
    ),
    (
        "Views",
        [
            ("o", "overview: every run in two lines, its row and its last event"),
            ("z", "zoom on the selected run's transcript / back to all"),
            ("v", "phase pane: phase text, checks, untold facts, virtual clock"),
            (
                "r",
                "report browser: o opens an answer in its transcript; x / X export it / its entry to "
                "results/exports/, y / Y copy them (OSC 52)",
            ),
            ("c", "compare runs, repeats and matrices: mean ± 95% CI, pass^k, cost, a chart"),
            ("t", "switch between the dark and the light theme"),
            ("ctrl+p", "command palette: every action by name, more themes"),
            ("? / f1", "this help, and a legend of what the screens show"),
            ("d", DETACH_TEXT),
            ("q / ctrl+q", "quit (asks when runs are in flight: stop them and quit, or detach instead)"),
        ],
    ),
]


class _AppObserver:
    """Forwards engine events to the main screen, from any thread."""

    def __init__(self, app: MmbApp) -> None:
        self.app = app

    def on_event(self, run_id: str, event: Event) -> None:
        if threading.get_ident() == self.app.loop_thread:
            self.app.engine_event(run_id, event)
        else:
            self.app.call_from_thread(self.app.engine_event, run_id, event)


class MmbApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "MarathonMemBench"

    BINDINGS = [
        Binding("question_mark,f1", "help", "Help", tooltip="Every key, and a legend of the screens"),
        Binding("q", "request_quit", "Quit", tooltip="Stop the runs (asks when some are in flight) and quit"),
        Binding("t", "toggle_theme", "Theme", show=False, tooltip="Switch between dark and light"),
        Binding("d", "detach", "Detach", show=False, tooltip=DETACH_TEXT),
        Binding("ctrl+q", "request_quit", "Quit", show=False, priority=True),
    ]

    def __init__(
        self,
        engine: EngineApi,
        config_path: Path,
        results_dir: Path,
        *,
        clock_frozen: bool = False,
        watch: bool = True,
        start: list[str] | None = None,
    ) -> None:
        super().__init__()
        self.start_runs = list(start or [])
        self.engine = engine
        self.config_path = config_path
        self.results_dir = results_dir
        self.clock_frozen = clock_frozen
        self.watch_files = watch
        self.loop_thread = threading.get_ident()
        self.main = MainScreen(engine, results_dir, clock_frozen=clock_frozen)
        self.main.config_path = config_path
        self._stop_watching = asyncio.Event()
        self._quitting = False
        self.detached = ""  # why the screen was let go while the runs play on: "key", "hang-up"
        self._observer = _AppObserver(self)
        self._unwatch_log: Callable[[], None] | None = None

    def get_default_screen(self) -> MainScreen:
        return self.main

    def on_mount(self) -> None:
        self.loop_thread = threading.get_ident()
        attach_file_log(self.results_dir / "mmb-tui.log")
        loop = asyncio.get_running_loop()
        self._unwatch_log = watch_log_failures(
            lambda text: loop.call_soon_threadsafe(self.log_not_written, text)
        )
        self.engine.add_observer(self._observer)
        if self.watch_files:
            self.run_worker(self._watch(), name="watch files", group="watch", exit_on_error=False)
        for run_id in self.start_runs:  # `mmb-tui run RUN-ID...` without --headless
            self.run_worker(self.engine.start(run_id), name=f"start {run_id}", exit_on_error=False)

    def on_unmount(self) -> None:
        self._stop_watching.set()
        if self._unwatch_log is not None:
            self._unwatch_log()
        detach_file_log()

    def log_not_written(self, text: str) -> None:
        """The log file cannot be written (a full disk): said once; never a traceback on the screen."""
        self.notify(text, title="Log not written", severity="warning", timeout=20)

    def engine_event(self, run_id: str, event: Event) -> None:
        if self.main.is_mounted:
            self.main.engine_event(run_id, event)

    # ---- errors of workers: one place ------------------------------------------------------------

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            log.error("%s failed", event.worker.name, exc_info=error)
            self.notify(f"{event.worker.name}: {error}", title="Error", severity="error", timeout=10)
            self.main.mark_dirty()

    # ---- files change while it runs --------------------------------------------------------------

    async def _watch(self) -> None:
        config = self._try_load()
        benchmarks = (
            config.base_dir / config.benchmarks_dir if config else self.config_path.parent / "benchmarks"
        )
        async for _changes in watch_paths(self.config_path, benchmarks, self._stop_watching):
            await self.reload_config()

    def _try_load(self) -> Config | None:
        try:
            return self._load()
        except ConfigError:
            return None

    def _load(self) -> Config:
        """config.jsonc as read now, with the repeats the command line asked for (``run X --repeats N``)."""
        current = getattr(self.engine, "config", None)
        return load_config(self.config_path, getattr(current, "repeat_overrides", None))

    async def reload_config(self) -> bool:
        """Re-read config.jsonc and hand it to the engine; an invalid edit only shows its error."""
        try:
            config = self._load()
            reload: Any = getattr(self.engine, "reload", None)
            if reload is not None:
                await reload(config)
        except Exception as exc:  # ConfigError, a benchmark error raised by reload, ...
            message = str(exc) if isinstance(exc, ConfigError) else f"{self.config_path.name}: {exc}"
            log.warning("reload refused: %s", message)
            self.main.show_banner(f"⚠ {message} — runs continue with the previous config")
            self.notify(message, title="Config not reloaded", severity="error", timeout=10)
            return False
        self.main.show_banner("")
        self.main.results_dir = config.results_path()
        self.main.refresh_views()
        self.notify(f"{self.config_path.name} reloaded: {len(config.runs)} runs")
        return True

    # ---- help and quitting -----------------------------------------------------------------------

    # ---- the command palette: every action ---------------------------------------------------------

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's commands (its Quit, which never asks, replaced by ours) and every key binding of the app
        and the screen, and of the selected transcript, each titled by its description and tooltip."""
        yield from (command for command in super().get_system_commands(screen) if command.title != "Quit")
        if screen is self.main:
            yield SystemCommand(
                "Filter runs: by id, status, agent or benchmark (k of n runs shown; Esc clears)",
                "key / in the runs pane",
                self.main.open_run_filter,
            )
        seen = {"command_palette"}
        sources: list[tuple[DOMNode, list[BindingType]]] = [
            (self, self.BINDINGS),
            (screen, type(screen).BINDINGS),
        ]
        if screen is self.main:
            column = self.main.column_for(self.main.selected_run or "")
            if column is not None:
                transcript = column.transcript
                sources.append(
                    (transcript, [b for b in transcript.BINDINGS if isinstance(b, Binding) and b.tooltip])
                )
        for node, bindings in sources:
            for binding in Binding.make_bindings(bindings):
                if binding.action in seen or not node.check_action(binding.action.split("(")[0], ()):
                    continue
                seen.add(binding.action)
                keys = " / ".join(
                    self.get_key_display(b)
                    for b in Binding.make_bindings(bindings)
                    if b.action == binding.action
                )
                title = (
                    f"{binding.description}: {binding.tooltip}" if binding.tooltip else binding.description
                )
                yield SystemCommand(title, f"key {keys}", partial(self.run_action, binding.action, node))

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(HELP))

    def in_flight(self) -> list[str]:
        flying = []
        for run_id in self.engine.run_ids():
            try:
                view = self.engine.view(run_id)
                if view.status in IN_FLIGHT and not view.owner:  # a run played elsewhere goes on regardless
                    flying.append(run_id)
            except Exception:
                log.exception("view(%s) failed", run_id)
        return flying

    async def action_request_quit(self) -> None:
        if self._quitting:
            return
        flying = self.in_flight()
        if not flying:
            await self.stop_and_exit()
            return
        self._quitting = True

        def answered(choice: QuitChoice | None) -> None:
            self._quitting = False
            if choice == "stop":
                self.run_worker(self.stop_and_exit(), name="stop runs", exit_on_error=False)
            elif choice == "detach":
                self.action_detach()

        self.push_screen(QuitScreen(flying, DETACH_TEXT), answered)

    def action_detach(self) -> None:
        """Let go of the screen; the runs go on in a background process (``mmb_tui.front_ends.session``)."""
        self.detached = "key"
        self._stop_watching.set()
        self.exit()

    async def stop_and_exit(self) -> None:
        self._quitting = True
        self._stop_watching.set()
        self.notify("Stopping runs…")
        try:
            await self.engine.stop_all()
        finally:
            self.exit()


def _results_dir(config_path: Path) -> Path:
    try:
        return load_config(config_path).results_path()
    except ConfigError:
        return config_path.resolve().parent / "results"


def make_app(
    engine: EngineApi,
    config_path: Path,
    *,
    clock_frozen: bool = False,
    watch: bool = True,
    start: list[str] | None = None,
) -> MmbApp:
    """The app over ``engine``; ``clock_frozen`` stops the clock ticks (snapshots), ``watch`` the file watch."""
    return MmbApp(
        engine,
        Path(config_path),
        _results_dir(Path(config_path)),
        clock_frozen=clock_frozen,
        watch=watch,
        start=start,
    )
