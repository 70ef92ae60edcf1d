"""Retriever threads make their temporary folders (a PostgreSQL data folder each) at once."""

from __future__ import annotations

import threading
import types
from pathlib import Path

import pytest
from _pytest.tmpdir import TempPathFactory

from rag_core.evals import postgres
from rag_core.evals.plugins.retrieval_runner import RetrievalRunner

THREADS = 8
SESSIONS = 20  # the race lost in most sessions before the folders were made under a lock


def test_threads_making_temp_folders_at_once_each_get_their_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postgres, "postgres_url", lambda data_dir: str(data_dir))  # the folder, no server
    config = types.SimpleNamespace(rootpath=tmp_path, getoption=lambda name, default=None: default)
    for session in range(SESSIONS):
        # a new session's factory: its base folder (--basetemp) is made at the first request
        factory = TempPathFactory(tmp_path / f"session-{session}", 3, "all", trace=lambda *args: None, _ispytest=True)
        runner = RetrievalRunner(config, factory)  # type: ignore[arg-type]
        start = threading.Barrier(THREADS)
        made: list[str] = []
        failed: list[BaseException] = []

        def make() -> None:
            start.wait()
            try:
                made.append(runner._pg_url())
            except BaseException as exc:  # noqa: BLE001 (each thread's failure is the finding)
                failed.append(exc)

        threads = [threading.Thread(target=make) for _ in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failed == []
        assert len(set(made)) == THREADS and all(Path(folder).is_dir() for folder in made)
