"""Whole screens and modal dialogs: the main screen and its views, the report browser, the comparison screen,
help, the fact editor, notes, confirmations, and the actions on every run at once.

May import: ``engine``, ``textual``, ``rich``, ``widgets/``, ``transcript/`` and the helpers at the top of
``mmb_tui``; never the app or a front end.
"""
