"""Every pytest option and ini setting rag-core adds, and their checks: the golden plugin's, the
run record's and the retrieval plugin's (each plugin adds its own group, so either can be
disabled alone). A value that cannot work is one ``pytest.UsageError`` before anything runs.

Imports only the standard library and pytest at module level: the plugins load in every session.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from rag_core.evals.common.modes import RECORD_MODES
from rag_core.evals.runs.store import DEFAULT_FOLDER, DEFAULT_KEEP

GROUP = ("rag-core", "rag-core golden cases and retrieval suites")


def add_golden_options(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    group = parser.getgroup(*GROUP)
    group.addoption("--update-goldens", action="store_true", default=False,
                    help="write what each case observed into its .golden.yaml instead of comparing")
    group.addoption("--accept", action="store_true", default=False,
                    help="accept the change each failing case shows: record its stale cassettes again (against the "
                         "emulator where they were recorded there; live, with the provider's key, where not) and write "
                         "its golden, so that the next replay under CI is green; passing cases are left as they are")
    if not _pytest_recording_active(pluginmanager):  # else its --record-mode and --block-network, same meaning
        group.addoption("--record-mode", default="none", choices=RECORD_MODES,
                        help="cassette record mode: none (replay only, default), once, new_episodes, all, rewrite")
        group.addoption("--block-network", action="store_true", default=False,
                        help="refuse non-loopback connections even while recording live (always on otherwise)")
    group.addoption("--case", action="append", default=[], metavar="ID",
                    help="run only the golden case with this id (and its .sync/.stream variants); repeatable")
    group.addoption("--emulator", action="store_true", default=False,
                    help="record against the built-in provider emulator (in-process, no key) instead of the live API")
    group.addoption("--record-timeout", type=float, default=60.0, metavar="SECONDS",
                    help="while recording, how long one provider request may take (default 60)")
    group.addoption("--case-timeout", default=None, metavar="SECONDS",
                    help="how long one run of a golden case may take before it fails, naming where it was stuck "
                         "(default 300 when CI is set, else none; a case's timeout: overrides it; off: no limit at all)")
    group.addoption("--strict-cassettes", action="store_true", default=None,
                    help="fail cases whose cassette no longer matches what the agent sends (default on under CI)")
    group.addoption("--no-strict-cassettes", action="store_false", dest="strict_cassettes",
                    help="only report stale cassettes")
    group.addoption("--golden-report", default=None, metavar="PATH",
                    help="write a markdown summary of the golden cases (for CI job summaries)")
    group.addoption("--prune-orphans", action="store_true", default=False,
                    help="delete cassettes, goldens and baselines that no case or suite uses")
    _add_live_options(group)
    group.addoption("--runs-dir", default=None, metavar="DIR",
                    help=f"folder of the run records (default: the rag_core_runs_dir ini option, {DEFAULT_FOLDER})")
    group.addoption("--no-run-record", action="store_true", default=False,
                    help="write no run record for this session (rag-core report reads them)")
    _add_golden_ini(parser)


def _add_live_options(group: Any) -> None:
    """How live runs and recordings meet the providers: repeats, concurrency, retries, the emulator's pace."""
    group.addoption("--live", action="store_true", default=False,
                    help="run the cases against the providers (keys from the environment; with --emulator, against "
                         "it), check their hand-written expectations and judges, and write no cassette or golden")
    group.addoption("--repeat", type=int, default=1, metavar="N",
                    help="with --live: run each case N times and report its pass rate, latency and tokens")
    group.addoption("--concurrency", type=int, default=1, metavar="N",
                    help="with --live or while recording: up to N runs at once per provider (cases and repeats; fewer "
                         "while it pushes back)")
    group.addoption("--retries", type=int, default=2, metavar="N",
                    help="with --live or while recording: run again, up to N times, a run the provider pushed back "
                         "(429, 5xx, timeout), after the wait it asks for (default 2)")
    group.addoption("--resume", action="store_true", default=False,
                    help="with --live: take the runs a session that was cut short finished (kept in .rag-core/live) "
                         "and make only the rest")
    group.addoption("--emulator-latency", type=float, default=0.0, metavar="SECONDS",
                    help="with --emulator: each answer takes this long (to try --concurrency without a provider)")
    group.addoption("--emulator-capacity", type=int, default=None, metavar="N",
                    help="with --emulator: answer at most N requests at once, the excess 429 with a Retry-After")


def _add_golden_ini(parser: pytest.Parser) -> None:
    parser.addini("rag_core_cases", "folder of golden case files", default="fixtures/goldens")
    parser.addini("rag_core_cassettes", "folder of cassettes", default="cassettes")
    parser.addini("rag_core_fixtures", "folder of fixtures (corpora)", default="fixtures")
    parser.addini("rag_core_scrub_headers", "more request header names to scrub from recordings", type="linelist", default=[])
    parser.addini("rag_core_secret_patterns", "more regular expressions of credentials that must never be written",
                  type="linelist", default=[])
    parser.addini("rag_core_runs_dir", "folder of run records, one JSON file per session", default=DEFAULT_FOLDER)
    parser.addini("rag_core_runs_keep", "how many run records to keep (the oldest are deleted; 0 keeps all)",
                  default=str(DEFAULT_KEEP))


def add_retrieval_options(parser: pytest.Parser) -> None:
    group = parser.getgroup(*GROUP)
    group.addoption("--update-baselines", action="store_true", default=False,
                    help="write each retriever's numbers as its new baseline")
    group.addoption("--report-dir", default=None, metavar="DIR",
                    help="write retrieval.json, retrieval.md, TREC run files and the figures there")
    group.addoption("--retrieval-threads", type=int, default=None, metavar="N",
                    help="run the retrievers over Chroma, PgVector and LanceDB in N background threads from "
                         "the session's first test on (default: one per core, at most 4; none on one core, in "
                         "pytest-xdist workers or when recording); 0 runs each when its test does, so its "
                         "timings are taken alone")
    parser.addini("rag_core_retrieval", "folder of retrieval suite files", default="fixtures/retrieval")


def _pytest_recording_active(pluginmanager: pytest.PytestPluginManager) -> bool:
    """pytest-recording defines --record-mode and --block-network too, with the same meaning; both
    plugins load in one project only if one defines them. Which loads first is pytest's choice, so
    when it is installed and not disabled (``-p no:recording``), it defines them (its default
    record mode is None: read as none)."""
    return importlib.util.find_spec("pytest_recording") is not None and not pluginmanager.is_blocked("recording")


def record_mode(config: pytest.Config) -> str:
    return config.getoption("record_mode", None) or "none"


def folder(config: pytest.Config, name: str, default: str | None = None) -> Path:
    """The folder an ini setting names, from the project root (``default`` where the plugin that
    adds the setting is disabled)."""
    try:
        value = config.getini(name)
    except (ValueError, AttributeError):
        if default is None:
            raise
        value = default
    return Path(config.rootpath) / value


def runs_folder(config: pytest.Config) -> Path:
    given = config.getoption("runs_dir", None)
    return Path(given) if given else folder(config, "rag_core_runs_dir")


def embedding_mode(config: pytest.Config) -> str:
    """Replay unless recording was asked for (a --record-mode other than none, outside CI and
    without --block-network): a session never calls an embedding provider, nor rewrites a
    committed cache, by accident."""
    asked = config.getoption("record_mode", "none") not in (None, "none")
    if asked and not os.environ.get("CI") and not config.getoption("block_network", False):
        return "record"
    return "replay"


def writable_report_path(option: str, value: str, is_folder: bool = False) -> Path:
    """The path of a report option, checked before the session runs: a report that cannot be
    written is one clear usage error, not a crash at the end of a long run."""
    path = Path(value)
    parent = path if is_folder else path.parent
    existing = next((p for p in [parent, *parent.parents] if p.exists()), None)
    problem = None
    if not is_folder and path.is_dir():
        problem = "it is a folder"
    elif is_folder and path.exists() and not path.is_dir():
        problem = "it is a file, not a folder"
    elif existing is not None and not existing.is_dir():
        problem = f"{existing} is a file"
    elif existing is not None and not os.access(existing, os.W_OK):
        problem = f"{existing} is not writable"
    if problem:
        raise pytest.UsageError(f"{option}={value}: cannot write the report there ({problem})")
    return path


def check_golden_options(config: pytest.Config) -> Any:
    """Every golden option checked together (raises ``pytest.UsageError``); returns the session's
    case time limits (``time_limit.CaseTimeouts``)."""
    live, repeat = config.getoption("live", False), config.getoption("repeat", 1)
    if repeat != 1 and not live:
        raise pytest.UsageError("--repeat needs --live: replayed runs give the same result every time")
    if repeat < 1:
        raise pytest.UsageError(f"--repeat={repeat}: give at least 1 run")
    _check_live_options(config, live)
    timeout = config.getoption("record_timeout", 60.0)
    if not (math.isfinite(timeout) and timeout > 0):
        raise pytest.UsageError(f"--record-timeout={timeout:g}: give a number of seconds above 0")
    if live and (config.getoption("update_goldens") or record_mode(config) != "none"):
        raise pytest.UsageError("--live writes no cassette or golden: drop --update-goldens and --record-mode")
    if config.getoption("accept", False):
        _check_accept_options(config, live)
    report = config.getoption("golden_report", None)
    if report:
        writable_report_path("--golden-report", report)
    headers, patterns = config.getini("rag_core_scrub_headers"), config.getini("rag_core_secret_patterns")
    if headers or patterns:
        from rag_core.evals import credentials

        try:
            credentials.configure(headers, patterns)
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
    return _case_timeouts(config)


def _case_timeouts(config: pytest.Config) -> Any:
    """--case-timeout, read once (``time_limit.py``); the backstop's last words are written past
    pytest's output capture (the process ends right after them)."""
    from rag_core.evals.golden.time_limit import session_timeouts

    try:
        timeouts = session_timeouts(config.getoption("case_timeout", None), os.environ)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None

    def say(text: str) -> None:
        capture = config.pluginmanager.getplugin("capturemanager")
        if capture is not None:
            capture.suspend_global_capture(in_=False)
        sys.stderr.write(text)
        sys.stderr.flush()

    return dataclasses.replace(timeouts, say=say)


def _check_accept_options(config: pytest.Config, live: bool) -> None:
    """--accept decides per case whether to record: it takes no record mode of its own."""
    if live:
        raise pytest.UsageError("--accept writes cassettes and goldens, --live writes none: drop one of them")
    if record_mode(config) != "none":
        raise pytest.UsageError("--accept records again the cassettes it must (and only those): drop --record-mode")
    if config.getoption("update_goldens"):
        raise pytest.UsageError("--accept writes the goldens of the cases it accepts: drop --update-goldens")


def _check_live_options(config: pytest.Config, live: bool) -> None:
    concurrency, retries = config.getoption("concurrency", 1), config.getoption("retries", 2)
    latency, capacity = config.getoption("emulator_latency", 0.0), config.getoption("emulator_capacity", None)
    if concurrency != 1 and not live and record_mode(config) == "none":
        raise pytest.UsageError("--concurrency runs live runs or recordings at once (--live, or a --record-mode that "
                                "records); to spread replays over processes use pytest-xdist: -n 2")
    if concurrency < 1:
        raise pytest.UsageError(f"--concurrency={concurrency}: give at least 1")
    if retries < 0:
        raise pytest.UsageError(f"--retries={retries}: give 0 or more")
    if config.getoption("resume", False) and not live:
        raise pytest.UsageError("--resume takes the runs of a --live session that was cut short: add --live")
    if (latency or capacity is not None) and not config.getoption("emulator", False):
        raise pytest.UsageError("--emulator-latency and --emulator-capacity shape the emulator's answers: add --emulator")
    if not (math.isfinite(latency) and latency >= 0):
        raise pytest.UsageError(f"--emulator-latency={latency:g}: give a number of seconds, 0 or more")
    if capacity is not None and capacity < 0:
        raise pytest.UsageError(f"--emulator-capacity={capacity}: give 0 or more")
