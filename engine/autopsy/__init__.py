"""The memory autopsy (issue 33): from a wrong answer to the line of the agent's memory that caused it.

Owns the history of the agent's memory files kept in ``results/<run>/memory/`` (``blobs.py``: content-addressed
versions in one pack, each stored whole or as a line delta against the file's version before; ``history.py``:
the snapshot index, any file at any moment read back, diffs), what the attribution reads of a transcript (the
agent's own actions, where messages were sent: ``run_facts.py``), the values it looks for (``values.py``), the
attribution of an answer to one class of memory failure with its evidence (``attribution.py``; a run's:
``run_autopsy.py``; the memory beside an answer for a viewer: ``excerpt.py``), and ``mmb-tui memory``
(``memory_command.py``).

May import: the foundation (the top of ``engine/``, ``engine.benchmark``, ``engine.models``) and
``engine.grading`` (the value matching of the premise checks). Imported by ``engine.report`` (the attribution
lines of an entry), ``engine.run`` (the snapshots), ``engine.comparison`` (the class of each failure across
repeats) and the front ends.
"""
