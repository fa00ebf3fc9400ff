"""The benchmark a config names (a folder of ``benchmarks_dir`` or a path), loaded; a ``BuildError`` naming
the config key when it cannot be."""

from __future__ import annotations

from engine.benchmark.model import Benchmark, BenchmarkError
from engine.benchmark.validate import load_benchmark
from engine.config import BuildError, Config


def load_run_benchmark(config: Config, run_id: str) -> Benchmark:
    return load_named_benchmark(config, config.runs[run_id].benchmark, f"runs.{run_id}.benchmark")


def load_named_benchmark(config: Config, name: str, key: str) -> Benchmark:
    """The benchmark ``name`` (a folder of ``benchmarks_dir`` or a path); ``BuildError`` naming ``key``."""
    path = config.benchmark_path(name)
    if not path.is_dir():
        raise BuildError(f"{key}: no benchmark folder {path}")
    try:
        return load_benchmark(path)
    except BenchmarkError as exc:
        raise BuildError(f"{key}: {exc.problems[0]} (run `mmb-tui validate`)") from None
