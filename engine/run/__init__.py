"""A run and its parts: the loop (``loop.py`` ``Run``) over parts already built (``parts.py``, ``build.py`` from
config.jsonc), the agent channel, the operator desk, the time master, phases as the persona sees them, the
recorder (transcript, checkpoints through the journal, observers) with what the run waits for (liveness),
and the run's lock.

May import: the core modules at the top of ``engine/`` (events, commands, clock, config, state, agents, api),
``engine.benchmark``, ``engine.models``, ``engine.persona``, ``engine.grading``, ``engine.report`` and
``engine.judge``. Only ``build.py`` and ``engine.placement`` import the loop: its collaborators get ports.
"""
