"""Which runs ``mmb-tui run`` means: run ids, groups (a repeated run's name means its repeats), a matrix
(``--matrix NAME``), with ``--repeats N`` overriding the config's repeats of the named runs or matrix.

A repeat id the config no longer makes (``X.r3`` after ``run X --repeats 3``, or in the background process
that ``--detach`` starts) is understood as well: the config is read again with enough repeats of ``X`` (or of
the matrix whose cell ``X`` is: as many as asked, as the config has, and as are on disk), so every repeat can be
resumed on its own and its group stays whole.
"""

from __future__ import annotations

from pathlib import Path

from engine.comparison.results import repeats_on_disk
from engine.config import Config, ConfigError, load_config
from engine.expand import REPEAT_SUFFIX


def _declared(config: Config, cell_or_run: str) -> str | None:
    """The declared name (a run or a matrix) whose repeats make ``<cell_or_run>.r<k>``."""
    for name, group in config.groups.items():
        if group.is_matrix and cell_or_run in group.cells:
            return name
    if cell_or_run in config.runs or cell_or_run in config.groups:
        return cell_or_run
    return None


def _size(config: Config, declared: str) -> int:
    """The repeats the config gives a declared run or matrix now (1 without a group)."""
    group = config.groups.get(declared)
    if group is None:
        return 1
    if not group.is_matrix:
        return len(group.runs)
    return len(group.runs) // max(1, len(group.cells))


def select_runs(
    config_path: Path, names: list[str], repeats: int | None = None, matrix: str | None = None
) -> tuple[Config, list[str]]:
    """The config (re-read with the repeats asked for) and the run ids to play, in order, each once;
    ``ConfigError`` names what is unknown."""
    config = load_config(config_path)
    wanted = [*names, *([matrix] if matrix else [])]
    overrides: dict[str, int] = {name: repeats for name in wanted} if repeats is not None else {}
    for name in names:
        match = REPEAT_SUFFIX.match(name)
        if name in config.runs or match is None:
            continue
        declared = _declared(config, match["base"])
        if declared is not None:
            on_disk = len(repeats_on_disk(config, match["base"]))
            needed = max(overrides.get(declared, _size(config, declared)), int(match["k"]), on_disk)
            overrides[declared] = needed
    if overrides:
        config = load_config(config_path, overrides)
    if matrix is not None and not (matrix in config.groups and config.groups[matrix].is_matrix):
        have = ", ".join(n for n, g in config.groups.items() if g.is_matrix) or "none"
        raise ConfigError(f"{config_path}: matrices.{matrix}: no such matrix (have: {have})")
    run_ids: list[str] = []
    for name in wanted:
        if name in config.groups:
            run_ids += config.groups[name].runs
        elif name in config.runs:
            run_ids.append(name)
        else:
            have = ", ".join([*config.groups, *(r for r in config.runs if r not in _grouped(config))])
            raise ConfigError(f"{config_path}: runs.{name}: no such run or group (have: {have})")
    return config, list(dict.fromkeys(run_ids))


def _grouped(config: Config) -> set[str]:
    return {run_id for group in config.groups.values() for run_id in group.runs}
