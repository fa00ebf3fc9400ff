"""Runs compared: a run's result as saved (``results.py``), the figures of a sample of runs (``figures.py``,
with ``stats.py``), a group's summary entry (``summary.py``) and ``mmb-tui compare`` (``compare.py``).

May import: the core modules at the top of ``engine/``, ``engine.benchmark``, ``engine.models``,
``engine.report`` and the run's builder and state readers (``engine.run.build``); never placement or the run
loop.
"""
