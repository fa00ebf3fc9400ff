"""Hermes Agent as the agent under test: the adapter (``adapter.py``, ``HermesAdapter``, through its API server)
and its own tool calls read from its session store (``actions.py``).

May import: ``engine``, the top modules of ``adapters`` (``base``, ``options``) and ``adapters.local``; never
another agent package.
"""
