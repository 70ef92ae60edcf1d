"""How retrieved documents are shown to the model: the tool output and the ``<references>`` block."""

from __future__ import annotations

import json
from typing import Any, Literal

ReferencesFormat = Literal["json", "yaml"]

NO_DOCUMENTS = "No documents found"


def format_documents(docs: list[dict[str, Any]], fmt: ReferencesFormat) -> str:
    """Serialise documents (``Document.to_dict()`` shapes) in the agent's references format.

    yaml.dump sorts mapping keys, which keeps the output independent of insertion order
    and of PYTHONHASHSEED; for the document shape it gives content, meta_data, name.
    """
    if fmt == "yaml":
        import yaml  # here, not with the module: importing rag_core.knowledge stays light

        return yaml.dump(docs, default_flow_style=False, allow_unicode=True)
    return json.dumps(docs, indent=2, ensure_ascii=False)


def search_result_text(docs: list[dict[str, Any]], fmt: ReferencesFormat) -> str:
    """What ``search_knowledge_base`` returns to the model."""
    return format_documents(docs, fmt) if docs else NO_DOCUMENTS


def user_message_with_references(text: str, docs: list[dict[str, Any]], fmt: ReferencesFormat) -> str:
    """Traditional RAG: the user's input followed by the retrieved references."""
    if not docs:
        return text
    return (
        text
        + "\n\nUse the following references from the knowledge base if it helps:\n<references>\n"
        + format_documents(docs, fmt)
        + "\n</references>"
    )
