"""The references formatting under the path it has always had; it lives in ``rag_core.knowledge.references``."""

from rag_core.knowledge.references import (
    NO_DOCUMENTS,
    ReferencesFormat,
    format_documents,
    search_result_text,
    user_message_with_references,
)

__all__ = ["NO_DOCUMENTS", "ReferencesFormat", "format_documents", "search_result_text", "user_message_with_references"]
