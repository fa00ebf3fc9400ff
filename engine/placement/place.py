"""Placing a run on the executor its config names: the scheduler plays ``local`` runs itself; any other
executor (Ray) gets the run here, its module imported only then, so a local engine never imports Ray."""

from __future__ import annotations

from collections.abc import Callable

from engine.api import RunView
from engine.config import BuildError, Config
from engine.placement.executor import PlacedRun
from engine.run.build import check_run
from engine.run.parts import RunSettings


def settings_for(
    config: Config, run_id: str, tune: Callable[[RunSettings], None] | None
) -> dict[str, object]:
    """The run's engine settings as ``tune`` leaves them, as values another process can apply."""
    settings = RunSettings.from_config(config, config.runs[run_id])
    if tune is not None:
        tune(settings)
    return dict(vars(settings))


async def place_run(
    config: Config,
    run_id: str,
    tune: Callable[[RunSettings], None] | None,
    front_end: str,
    fallback: RunView,
) -> PlacedRun:
    """``run_id`` placed on the executor ``config`` names (the scheduler plays ``local`` runs itself), holding
    the run's lock here; ``fallback`` is its view until the player reports. ``BuildError`` says why not."""
    problem = check_run(config, run_id)
    if problem:
        raise BuildError(problem)
    from engine.placement.ray_executor import place_on_ray

    return await place_on_ray(config, run_id, settings_for(config, run_id, tune), front_end, fallback)
