"""The ways in: the ``mmb-tui`` command line (``cli.py``, the console script), the app's process around the
Textual app (``session.py``: hang-up, SIGTERM, detach), the headless printer (``headless.py``) and the log
file every one of them writes (``tui_logging.py``).

May import: ``engine``, the app (``mmb_tui.app``) and the rest of ``mmb_tui``. Only the app imports from here,
and only the log file (``tui_logging``): it attaches and watches it.
"""
