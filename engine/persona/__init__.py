"""The persona as a language model sees it: its system prompt (``system.md``, with the benchmark's
instructions and the live profile), its nine tools and their dispatch, the notebook of live fact sheets, the
hooks that refuse a slip before anything reaches the agent, and the compaction of its context.

May import: the foundation (the modules at the top of ``engine/``, ``engine.benchmark``, ``engine.models``);
whether a fact was told is handed to the notebook as a port (``Notebook(state, told_check)``).
"""
