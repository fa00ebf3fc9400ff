"""Builds a ``Run`` from config.jsonc: benchmark, models, adapter, clock and state (fresh or resumed)."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from engine.agents import AdapterContext, AgentAdapter, UnknownAdapter, resolve
from engine.benchmark.model import Benchmark
from engine.benchmark.named import load_run_benchmark
from engine.clock import Clock
from engine.config import BuildError, Config
from engine.judge.role import RunJudge, make_run_judge
from engine.models.base import ChatModel, ModelError
from engine.models.registry import make_model
from engine.models.usage import UsageMeter
from engine.persona.context import prompt_hash
from engine.report.prices import role_prices
from engine.report.provenance import (
    Provenance,
    agent_model_name,
    benchmark_hash,
    config_hash,
    describe_model,
    project_version,
)
from engine.run.lock import RunLock, RunLocked
from engine.run.loop import Run
from engine.run.parts import RunParts, RunSettings
from engine.run.resume_check import check_resume
from engine.state import RunState, StateError, load_state, remove_stale_temp_files


def endpoint_of(config: Config, name: str) -> dict[str, str]:
    """base_url, model and api key of a configured model, for adapters that configure an agent with it."""
    spec = config.models.get(name)
    if spec is None or spec.base_url is None:
        return {}
    key = os.environ.get(spec.api_key_env, "") if spec.api_key_env else "unused"
    if spec.api_key_env and not key:
        raise ModelError(f"model {name!r}: environment variable {spec.api_key_env} is not set")
    return {"base_url": spec.base_url, "model": spec.model, "api_key": key}


def build_run(
    config: Config,
    run_id: str,
    clock_factory: Callable[[], Clock] | None = None,
    tune: Callable[[RunSettings], None] | None = None,
    front_end: str = "engine",
) -> Run:
    """The run ``run_id``, fresh or resumed, holding its lock (``engine.run.lock``); ``BuildError`` says why not."""
    if run_id not in config.runs:
        raise BuildError(f"config: no run {run_id!r} under runs (have: {', '.join(config.runs) or 'none'})")
    run_dir = config.results_path() / run_id
    lock = RunLock(run_dir, front_end)
    try:
        lock.acquire()
    except RunLocked as exc:
        raise BuildError(str(exc)) from None
    except OSError as exc:
        raise BuildError(f"{run_dir}: cannot take the run's lock: {exc.strerror or exc}") from None
    try:
        run = _build(config, run_id, run_dir, lock, clock_factory, tune)
    except OSError as exc:  # a read-only or full results folder: one line, no traceback
        lock.release()
        raise BuildError(f"{exc.filename or run_dir}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        lock.release()
        raise
    return run


def check_run(config: Config, run_id: str) -> str:
    """Why run ``run_id`` could not start (its benchmark, agent, models, adapter keys), or "" if it can.
    Starts nothing and writes nothing: front ends ask it when they load a config."""
    try:
        _prepare(config, run_id, config.results_path() / run_id, Clock(), UsageMeter())
    except BuildError as exc:
        return str(exc)
    return ""


def _prepare(
    config: Config, run_id: str, run_dir: Path, clock: Clock, meter: UsageMeter
) -> tuple[Benchmark, ChatModel, AgentAdapter, RunJudge | None]:
    """The run's benchmark, persona model, adapter (not started) and judge; ``BuildError`` names what is wrong."""
    run_cfg = config.runs[run_id]
    bench = load_run_benchmark(config, run_id)
    persona_name = run_cfg.persona or config.persona.model
    try:
        persona_model: ChatModel = make_model(persona_name, config, "persona", meter)
        adapter_cls = resolve(run_cfg.agent)
    except (ModelError, UnknownAdapter) as exc:
        raise BuildError(f"runs.{run_id}: {exc}") from None
    try:
        judge = make_run_judge(config, run_id, meter)
    except ModelError as exc:  # names its key: runs.<id>.judge or judge.model
        raise BuildError(str(exc)) from None
    if bench.time_master and not adapter_cls.supports_virtual_time and not run_cfg.allow_real_time:
        raise BuildError(
            f"runs.{run_id}: benchmark {bench.name!r} runs on virtual time but agent {run_cfg.agent!r} cannot follow it; "
            'set "allow_real_time": true to run it in real time anyway'
        )
    ctx = AdapterContext(
        run_id=run_id,
        run_dir=run_dir,
        options=run_cfg.adapter_options(),
        clock=clock,
        make_model=lambda name: make_model(name, config, "agent", meter),
        model_endpoint=lambda name: endpoint_of(config, name),
        record_usage=lambda usage: meter.add("agent", usage),
        virtual_time=bench.time_master,
    )
    try:
        adapter = adapter_cls(ctx)
    except (ValueError, ModelError) as exc:
        raise BuildError(f"runs.{run_id}: {exc}") from None
    return bench, persona_model, adapter, judge


def _build(
    config: Config,
    run_id: str,
    run_dir: Path,
    lock: RunLock,
    clock_factory: Callable[[], Clock] | None,
    tune: Callable[[RunSettings], None] | None,
) -> Run:
    run_cfg = config.runs[run_id]
    clock = clock_factory() if clock_factory else Clock()
    meter = UsageMeter()
    persona_name = run_cfg.persona or config.persona.model
    bench, persona_model, adapter, judge = _prepare(config, run_id, run_dir, clock, meter)

    try:  # a damaged state, or one its benchmark or transcript contradicts: refused before any change
        state = load_state(run_dir / "state.json")
        if state is not None:
            check_resume(state, bench, run_dir)
    except StateError as exc:
        raise BuildError(str(exc)) from None
    resumed = state is not None
    transcript = run_dir / "transcript.jsonl"
    if state is None and transcript.exists() and transcript.stat().st_size > 0:
        raise BuildError(
            f"{run_dir / 'state.json'} is missing but {transcript} holds a played run: restore state.json, "
            "or delete the folder to start the run from scratch (nothing was changed)"
        )
    remove_stale_temp_files(run_dir)
    if state is None:
        if bench.start_time is not None:
            clock.start_at(bench.start_time)
        state = RunState(
            run_id=run_id,
            benchmark=bench.name,
            agent=run_cfg.agent,
            start_date=clock.now().date(),
            sheets={name: sheet.model_copy(deep=True) for name, sheet in bench.sheets.items()},
        )
    else:
        if (bench.time_master or bench.start_time is not None) and state.clock_now:
            clock.start_at(datetime.fromisoformat(state.clock_now))
        for name, sheet in bench.sheets.items():  # sheets of chapters appended since
            state.sheets.setdefault(name, sheet.model_copy(deep=True))
        meter.restore(state.usage)
    settings = RunSettings.from_config(config, run_cfg)
    if tune:
        tune(settings)
    agent_model = agent_model_name(run_cfg.adapter_options(), adapter)
    parts = RunParts(
        run_id=run_id,
        run_dir=run_dir,
        benchmark=bench,
        persona_model=persona_model,
        adapter=adapter,
        clock=clock,
        settings=settings,
        state=state,
        meter=meter,
        resumed=resumed,
        lock=lock,
        provenance=Provenance(
            benchmark_hash=benchmark_hash(bench.path),
            version=project_version(),
            persona=describe_model(config, persona_name),
            prompt_hash=prompt_hash(bench.instructions),
            agent_model=describe_model(config, agent_model),
            config_hash=config_hash(config, run_id, persona_name, agent_model),
            prices=role_prices(config, run_cfg),
            agent_setup=tuple(adapter.setup_lines()),
        ),
    )
    return Run(parts, judge)
