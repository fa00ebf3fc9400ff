"""``results/report.md``: an entry per end of a run written (``writer.py``) as a pure function of a run's
summary (its grade lines: ``grades.py``), the counted grades under the judge's lead (``tally.py``), what an entry says about trust
(``trust.py``), prices and provenance; entries read back (``entries.py``, ``parse.py``, ``answers.py``) and
filtered (``filter.py``) for the report browser and compare.

May import: the core modules at the top of ``engine/``, ``engine.benchmark``, ``engine.models`` and
``engine.grading``; never the run, the judge's role, placement or comparison.
"""
