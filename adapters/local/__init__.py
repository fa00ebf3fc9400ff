"""What every locally run agent shares: the adapter base for an agent run as a local process (``agent.py``
``LocalAgentAdapter``), its start in the sandbox (``sandboxed_agent.py``), process plumbing and the pid record
(``process.py``, ``agent_pid.py``), loopback ports, the pinned installs (``install.py``, ``python -m
adapters.local.install``) and the virtual clock (``virtual_clock.py`` preloading ``virtual_clock.c``). Two rooms
below: ``sandbox/`` (bubblewrap, its launcher, network relay, run keys and memory watch) and ``files/`` (the
agent's folder as the engine touches it).

May import: ``engine``, ``adapters.base``, ``adapters.options`` and its own rooms; never an agent package
(``hermes``, ``openclaw``, ``letta``) nor the simple adapters at the top.
"""
