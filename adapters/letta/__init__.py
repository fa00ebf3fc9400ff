"""Letta Code as the agent under test: the adapter (``adapter.py``, ``LettaAdapter``, one sandboxed headless
call per message), one call's plumbing (``call.py``), its model served under a plain alias (``model.py``), its
local store (``store.py``) and its own tool calls (``actions.py``).

May import: ``engine``, the top modules of ``adapters`` (``base``, ``options``) and ``adapters.local``; never
another agent package.
"""
