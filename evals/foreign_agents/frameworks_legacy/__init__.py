"""Agents on frameworks that need older SDKs than rag_core's agent core (LlamaIndex: openai<2;
pydantic-ai's Google models: google-genai<3), each written as its framework's docs write a
minimal agent and pinned through its traffic (``target:`` cases tagged ``legacy_sdk``).

They run in an environment of their own: ``pip install -e ".[frameworks-legacy]"`` (the harness
and these frameworks, no rag_core agent extras), then ``pytest evals/test_goldens.py -m legacy_sdk``.
"""
