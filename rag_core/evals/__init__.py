"""The evaluation harness: golden cases (``golden``), the provider emulator (``emulator``) and
retrieval-quality suites (``retrieval``), with their pytest plugins.

Nothing here is imported by ``import rag_core``; the pytest plugins import what they need lazily,
so a project that installs rag-core without using the harness pays almost nothing for it.
"""
