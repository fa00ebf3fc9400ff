"""The benchmark format (SPEC §3): loading a benchmark folder (chapters, phases, checks, fact sheets), its
js blocks, date templates, the Edit/Add directives replayed, the KEY.md answer key, lints, validation, and
the benchmark a config names.

May import: the modules at the top of ``engine/`` (it is part of the foundation the packages build on).
"""
