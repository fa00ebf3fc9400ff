"""The OS sandbox of the local agents: what it shows and forbids (``policy.py``: bubblewrap's command line,
``describe``), one agent's box across its starts (``box.py``), the first program run inside it (``launch.py``:
standalone, stdlib only, copied into the box as a file), the network relay (``netrelay.py``), its run keys
(``options.py``) and its memory watch (``watch.py``).

May import: ``engine``, ``adapters.base``, ``adapters.options``, its own modules and, for the process it boxes,
``adapters.local.process``; never ``files/``, an agent package or the rest of ``adapters.local``.
"""
