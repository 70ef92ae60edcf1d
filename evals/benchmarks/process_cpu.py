"""A pytest plugin for the benchmarks: where each pytest process of a session spends its CPU.

Loaded with ``-p`` in every process of a session (an xdist controller passes it to its workers);
each process appends one JSON line to the file ``$RAG_CORE_BENCH_CPU`` names when it exits: who it
is (``controller``, a worker's id, or ``serial``) and its CPU seconds (user and system, since the
interpreter started) at each point it reached: ``configured`` (pytest and every plugin loaded),
``collected``, ``first_test`` (its first test done: the program's libraries imported),
``finished`` (the session's last test done) and ``exited``. A benchmark copies this file beside
its throwaway projects under a name of its own, so that the source tree measured (another
version of rag-core) need not have it.
"""

from __future__ import annotations

import atexit
import json
import os
import resource
from typing import Any

import pytest

ENVIRONMENT = "RAG_CORE_BENCH_CPU"
_marks: dict[str, float] = {}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _mark(name: str) -> None:
    _marks.setdefault(name, _cpu())


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    _mark("configured")
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is not None:
        who = str(workerinput["workerid"])
    else:
        who = "controller" if config.getoption("numprocesses", None) else "serial"
    path = os.environ.get(ENVIRONMENT)
    if path:
        atexit.register(_write, path, who)


def pytest_collection_finish(session: pytest.Session) -> None:
    _mark("collected")


def pytest_runtest_logfinish(nodeid: str, location: tuple[str, int | None, str]) -> None:
    _mark("first_test")


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    _mark("finished")


def _write(path: str, who: str) -> None:
    _mark("exited")
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps({"process": who, "cpu": _marks}) + "\n")
