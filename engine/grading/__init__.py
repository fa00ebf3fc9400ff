"""Whether a grade can be trusted: the grading contract (``contract.py``: a check asked alone, attempts in
order, the Edit/Add gates, persona faults), premises read from the transcript (``premises.py``, ``told.py``:
values compared over the keys of ``told_values.py``, never wording) and the persona's reliability counted while a run plays (``persona_record.py``).

May import: the core modules at the top of ``engine/``, ``engine.benchmark``, ``engine.models`` and
``engine.persona``; never the run, the report or placement.
"""
