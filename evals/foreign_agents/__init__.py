"""Agents written without rag_core (a plain SDK loop, google-genai, Agno), pinned by golden
cases through their traffic alone (``target:`` cases in fixtures/goldens/)."""
