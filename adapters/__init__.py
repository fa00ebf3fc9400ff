"""The agents under test, each behind the one async interface of ``engine/agents.py`` (``AgentAdapter``).

At the top: the shared base (``base.py``), the run-key checks (``options.py``) and the simple adapters that run
no local process (``chatbot.py``, ``openai_endpoint.py``, with ``history_file.py``). ``local/`` is the machinery
every locally run agent shares; each real agent is a package of its own (``hermes/``, ``openclaw/``,
``letta/``). Adding an agent is one module (or package) here plus one line in ``engine/agents.py``.

May import: ``engine`` (never ``mmb_tui``, ``textual`` or ``rich``). An agent package imports ``local/`` and the
top modules, never another agent; ``local/`` imports no agent (``tests/test_adapter_rooms.py``).
"""
