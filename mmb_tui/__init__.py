"""What the operator sees and does: the Textual app over an embedded engine, and the command line.

Rooms: ``front_ends/`` (the process: command line, the app's session, the headless printer, the log file),
``screens/`` (whole screens and dialogs), ``widgets/`` (their parts), ``transcript/`` (a transcript's machinery:
reading, holding, rendering and repainting events). At the top: the app itself and the small helpers every room
shares (``view_format``, ``static_text``, ``run_board``, ``file_watch``).

May import: ``engine`` (through ``engine.api``, commands and read models), ``textual`` and ``rich``; never
``adapters`` (an agent is found by name, by the engine).
"""
