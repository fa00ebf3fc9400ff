"""The agent's folder as the engine touches it: one file at a time without following a link (``safe_files.py``
``AgentFolder``), the folder as a whole (``safe_tree.py``: size, removal), memory snapshots and the disk bound
(``agent_files.py``) and the memory files read for the run's memory history (``memory_read.py``).

May import: ``engine``, ``adapters.base``, ``adapters.options`` and its own modules; nothing else of
``adapters.local`` and no agent package.
"""
