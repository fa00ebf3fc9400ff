"""Models: one ``ChatModel`` protocol, the only code that talks to providers (``openai_model.py``: retries,
backoff, timeouts, usage per role), the scripted models (persona, recall, agent: offline, deterministic,
servable over HTTP), token counting, and the judges (the rules judge and a model judge).

May import: the modules at the top of ``engine/`` and ``engine.benchmark`` (part of the foundation).
"""
