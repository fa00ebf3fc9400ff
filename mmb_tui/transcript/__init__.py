"""A transcript's machinery, below the widgets that show it: reading a run's past from its file (the tail,
event ``n``), what the app holds of an event (long texts cut), how an event looks (folded, expanded, its
marker), its screen lines, the window of events a view holds, how often a followed transcript repaints, and
the compositor that repaints only what shows.

May import: ``engine`` (events, summaries), ``rich`` and ``textual``, and each other; never a widget, a screen,
the app or a front end of ``mmb_tui``.
"""
