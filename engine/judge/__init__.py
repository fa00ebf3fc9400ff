"""The judge: a second, independent grade of every answer in a run (``role.py``), a saved run judged again
(``regrade.py``), and a judge held against labeled answers (``evaluate.py``). The judges themselves (the
rules judge, a model judge) are models: ``engine.models``.

May import: the core modules at the top of ``engine/``, ``engine.benchmark``, ``engine.models``,
``engine.grading`` and ``engine.report``, and the run's builder and recorder port (``engine.run.build``,
``engine.run.recorder``) for a regrade's benchmark and a run's events; never the run loop or placement.
"""
