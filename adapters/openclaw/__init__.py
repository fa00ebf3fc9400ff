"""OpenClaw as the agent under test: the adapter (``adapter.py``, ``OpenClawAdapter``, through its local
gateway), its config for a run (``config.py``), its session as ``chat.history`` gives it (``session.py``), its
SQLite transcript read for compactions (``transcript.py``) and its own tool calls (``actions.py``).

May import: ``engine``, the top modules of ``adapters`` (``base``, ``options``) and ``adapters.local``; never
another agent package.
"""
