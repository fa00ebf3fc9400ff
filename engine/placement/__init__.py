"""Where runs play and who steers them: the scheduler (many runs on one loop, commands, read models), the
executors (``executor.py`` local, ``ray_executor.py`` + ``ray_actor.py`` on a Ray cluster, chosen by
``place.py``), a run folder mirrored from a Ray actor (``watcher.py`` on the player's side, ``sync.py`` on the head's), remote control of a run another process
plays (``remote.py``), and which runs an argument of ``mmb-tui run`` means (``selection.py``).

May import: everything in ``engine/`` but ``engine.comparison``'s table (it may write a group's summary
entry through ``engine.comparison.summary``); nothing imports placement but the front ends.
"""
