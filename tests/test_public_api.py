"""The public names of rag_core, written out: a name cannot disappear, or appear, unnoticed.

As httpx pins its exports: each module that declares ``__all__`` is listed here with it, and a
change to either side fails until the other follows. The Agno paths that declare no ``__all__``
(an Agno program changes only ``agno`` to ``rag_core`` in its imports) and the names that moved
are pinned by what must be importable from them.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PUBLIC = {
    "rag_core": ["Agent", "Document", "Knowledge", "RunOutput"],
    "rag_core.agent": ["Agent", "RunMetrics", "RunOutput"],
    "rag_core.agent.output": ["RunMetrics", "RunOutput"],
    "rag_core.agent.references": ["NO_DOCUMENTS", "ReferencesFormat", "format_documents", "search_result_text",
                                  "user_message_with_references"],
    "rag_core.agent.system_message": ["KNOWLEDGE_SEARCH_BLOCK", "build_system_message", "fill_placeholders",
                                      "format_instructions"],
    "rag_core.db": ["ContentRecord", "ContentsDb", "InMemoryDb", "SessionDb", "SqliteDb", "SqliteDbError"],
    "rag_core.db.protocols": ["ContentsDb", "SessionDb"],
    "rag_core.document": ["Document"],
    "rag_core.embedder": ["CohereEmbedder", "Embedder", "EmbeddingCache", "EmbeddingCacheMiss", "GeminiEmbedder",
                          "InputType", "LocalEmbedder", "OpenAIEmbedder"],
    "rag_core.errors": ["AgentRunError", "MissingExtraError", "ModelProviderError", "RagCoreError",
                        "StructuredOutputError"],
    "rag_core.knowledge": ["Knowledge", "KnowledgeSource"],
    "rag_core.knowledge.embedder": ["CohereEmbedder", "Embedder", "GeminiEmbedder", "OpenAIEmbedder"],
    "rag_core.knowledge.embedder.cohere": ["CohereEmbedder"],
    "rag_core.knowledge.embedder.google": ["GeminiEmbedder"],
    "rag_core.knowledge.embedder.openai": ["OpenAIEmbedder"],
    "rag_core.knowledge.reranker": ["CohereReranker", "Reranker"],
    "rag_core.knowledge.reranker.cohere": ["CohereReranker"],
    "rag_core.knowledge.search_tool": ["KNOWLEDGE_SEARCH_BLOCK", "knowledge_search_tool", "search_and_record"],
    "rag_core.knowledge.source": ["KnowledgeSource"],
    "rag_core.messages": ["Message", "ModelResponse", "Role", "ToolCall", "Usage"],
    "rag_core.models": ["Claude", "Gemini", "Model", "OpenAIChat", "OpenAIResponses"],
    "rag_core.models.google": ["Gemini"],
    "rag_core.models.openai": ["OpenAIChat", "OpenAIResponses"],
    "rag_core.providers": ["ADAPTED_APIS", "CHAT_APIS", "FAMILIES", "PROVIDERS", "Provider", "adapter_of", "api_of", "by_name",
                           "provider_of_api"],
    "rag_core.reranker": ["CohereReranker", "Reranker"],
    "rag_core.run_output": ["RunMetrics", "RunOutput", "ToolExecution"],
    "rag_core.tools": ["Function", "ReasoningTools", "RunContext", "Toolkit", "tool"],
    "rag_core.vectordb": ["ChromaDb", "InMemoryVectorDb", "LanceDb", "PgVector", "SearchType", "VectorDb",
                          "VectorDbError"],
    "rag_core.vectordb.chroma": ["ChromaDb", "SearchType"],
    "rag_core.vectordb.lancedb": ["LanceDb", "SearchType"],
    "rag_core.vectordb.pgvector": ["HNSW", "PgVector", "SearchType"],
    "rag_core.vectordb.search": ["SearchType"],
}

# Agno's module paths without an __all__ of their own, and the names that moved to a lower layer,
# importable where they were
IMPORTABLE = {
    "rag_core.knowledge.knowledge": ["Knowledge"],
    "rag_core.db.sqlite": ["SqliteDb"],
    "rag_core.tools.reasoning": ["ReasoningTools"],
    "rag_core.tools.executor": ["ToolExecution"],
    "rag_core.tools.knowledge": ["SEARCH_KNOWLEDGE_FUNCTION"],
}


def declared_all(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
               for node in tree.body)


def core_modules() -> dict[str, Path]:
    modules = {}
    for path in sorted((ROOT / "rag_core").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if not name.startswith("rag_core.evals"):
            modules[name] = path
    return modules


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_the_public_names_are_the_ones_written_here(module):
    imported = importlib.import_module(module)
    assert list(imported.__all__) == PUBLIC[module]
    missing = [name for name in PUBLIC[module] if not hasattr(imported, name)]
    assert not missing, f"{module}.__all__ names what it does not have: {missing}"


@pytest.mark.parametrize("module", sorted(IMPORTABLE))
def test_agno_paths_and_moved_names_still_import(module):
    imported = importlib.import_module(module)
    assert [name for name in IMPORTABLE[module] if not hasattr(imported, name)] == []


def test_every_module_that_declares_its_names_is_pinned_and_every_package_declares_them():
    declaring = {name for name, path in core_modules().items() if declared_all(path)}
    packages = {name for name, path in core_modules().items() if path.name == "__init__.py"}
    assert sorted(declaring - set(PUBLIC)) == [], "add these modules and their __all__ to PUBLIC"
    assert sorted(set(PUBLIC) - declaring) == [], "these modules no longer declare __all__"
    assert sorted(packages - declaring) == [], "these packages declare no __all__"
