"""A pytest plugin that times where a session's CPU goes, phase by phase (for the benchmarks).

    python -m pytest -p evals.benchmarks.phase_times ...   (or copied beside a project: -p phase_times)

At the session's end it prints, per phase, the CPU milliseconds (``time.process_time``, no
profiler: a profiler's own cost would land on the Python-heavy phases) spent in it, its calls, and
the milliseconds per call: pytest's own phases of a test (setup, call, teardown, and the whole
protocol with its reports), collection and the session's end; and, when rag-core's plugin runs the
session, the phases of a golden case inside its call: reading the cassette (vcrpy's load included),
running the program, reading the golden, the observation and the checks. Each phase is timed by
wrapping the function that does it, as the session imports it.
"""

from __future__ import annotations

import collections
import functools
import importlib
import sys
import time
from typing import Any, Callable, Iterator

import pytest

_SPENT: dict[str, float] = collections.defaultdict(float)
_CALLS: collections.Counter[str] = collections.Counter()

# (module, attribute, phase): a golden case's phases, by the function that does each
GOLDEN_PHASES = [
    ("rag_core.evals.recording.recorder", "CaseRecorder.check", "cassette: read and checked"),
    ("vcr.cassette", "Cassette.load", "cassette: loaded by vcrpy"),
    ("rag_core.evals.golden.subjects", "AgentSubject.run", "program: an agent's run"),
    ("rag_core.evals.golden.subjects", "TargetSubject.run", "program: a target's run"),
    ("rag_core.evals.golden.case", "load_expect", "golden: read"),
    ("rag_core.evals.golden.runner", "observe_run", "observed: the run and the wire"),
    ("rag_core.evals.golden.runner", "evaluate", "checked: golden and checks"),
    ("rag_core.evals.golden.runner", "run_case", "the case (all of the above and the rest)"),
]


def _timed(phase: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        with _phase(phase):
            return function(*args, **kwargs)

    return timed


def _wrap(module_name: str, attribute: str, phase: str) -> None:
    """Wrap ``attribute`` of the module (``Class.method`` for a method), and the same function
    wherever rag_core's modules imported it by name."""
    module = importlib.import_module(module_name)
    owner: Any = module
    name = attribute
    if "." in attribute:
        class_name, name = attribute.split(".")
        owner = getattr(module, class_name)
    function = getattr(owner, name)
    timed = _timed(phase, function)
    setattr(owner, name, timed)
    for other in list(sys.modules.values()):
        if getattr(other, "__name__", "").startswith("rag_core") and getattr(other, name, None) is function:
            setattr(other, name, timed)


def pytest_configure(config: pytest.Config) -> None:
    if config.pluginmanager.has_plugin("rag_core"):
        for module_name, attribute, phase in GOLDEN_PHASES:
            _wrap(module_name, attribute, phase)


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[None]:
    with _phase("session: collection"):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    with _phase("test: the whole protocol, reports included"):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    with _phase("test: setup"):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    with _phase("test: call"):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    with _phase("test: teardown"):
        return (yield)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> Iterator[None]:
    with _phase("session: its end (summaries, run record)"):
        return (yield)


class _phase:
    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> None:
        self.started = time.process_time()

    def __exit__(self, *exc: object) -> None:
        _SPENT[self.name] += time.process_time() - self.started
        _CALLS[self.name] += 1


def pytest_unconfigure(config: pytest.Config) -> None:
    lines = ["phase times (CPU ms in all, calls, ms per call):"]
    lines += [f"  {name}: {_SPENT[name] * 1000:.1f} ms, {_CALLS[name]} x {_SPENT[name] * 1000 / _CALLS[name]:.3f} ms"
              for name in sorted(_CALLS)]
    print("\n".join(lines), flush=True)
