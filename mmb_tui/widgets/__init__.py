"""The parts screens are made of: the runs table and dashboard, transcript columns and views, the phase pane,
the virtual clock, the report browser's tree and texts.

May import: ``engine``, ``textual``, ``rich``, ``transcript/`` and the helpers at the top of ``mmb_tui``; never a
screen, the app or a front end.
"""
