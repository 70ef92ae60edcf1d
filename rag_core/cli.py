"""The ``rag-core`` command (also ``python -m rag_core``): what is not a test run.

    rag-core emulator serve [--port N] [--script FILE]   the provider emulator on 127.0.0.1
    rag-core cache record SUITE [--root DIR]             a retrieval suite's embedding cache
    rag-core init [DIR] [--install SPEC]                 scaffold golden cases in a project (all files or none)
    rag-core report [RUN] [--compare BASE] [-o FILE]     a run record as one self-contained HTML page
    rag-core view [RUN] [--compare BASE]                 the same page, served on 127.0.0.1 to a browser
    rag-core merge SHARD... [--summary FILE]             the run records of a run's CI shards as one record
    rag-core offline [--allow-port PORT] -- COMMAND      COMMAND with loopback as its only network (Linux)
    rag-core --version

Bad input ends with one line on stderr naming the thing and the cause, and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import Any, Sequence

import rag_core

NO_SCRIPT_REPLY = "This is the rag-core emulator with no script: start it with --script FILE to script its answers."


class UsageError(Exception):
    """Bad input: the message is the one line the user sees."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line that points at --help, not the whole usage text."""

    def error(self, message: str) -> Any:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _load_script(path: Path) -> list[Any]:
    """The turns of a script file: a YAML list of turns, or a case file's ``emulate:`` list."""
    import yaml

    from rag_core.evals.common import validation_messages
    from rag_core.evals.common.yaml_read import load_bounded, tab_problem
    from pydantic import TypeAdapter, ValidationError

    from rag_core.evals.emulator.script import ScriptEntry

    text = None
    try:
        text = path.read_text(encoding="utf-8")
        data = load_bounded(text)
    except OSError as exc:
        raise UsageError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        tab = tab_problem(exc, text) if isinstance(exc, yaml.YAMLError) else None
        raise UsageError(f"{path}: {tab}" if tab else f"{path}: not a YAML file ({' '.join(str(exc).split())})") from None
    if isinstance(data, dict) and "emulate" in data:
        data = data["emulate"]
    if not isinstance(data, list):
        raise UsageError(f"{path}: a script is a list of turns (or a case file with an emulate: list)")
    turns, entry = [], TypeAdapter(ScriptEntry)
    for number, turn in enumerate(data, start=1):  # one at a time: a problem is named by its turn
        try:
            turns.append(entry.validate_python(turn))
        except ValidationError as exc:
            first = validation_messages.problems(exc, turn, ScriptEntry)[0]
            raise UsageError(f"{path}: turn {number}: {first.text}") from None
    return turns


def _serve(args: argparse.Namespace) -> int:
    from rag_core.evals.emulator.script import ScriptedTurn
    from rag_core.evals.emulator.server import EmulatorServer

    turns = _load_script(args.script) if args.script else []
    try:
        server = EmulatorServer(port=args.port)
    except OSError as exc:
        raise UsageError(f"port {args.port}: cannot listen on 127.0.0.1 ({exc.strerror or exc})") from None
    # without a script every model call gets one fixed answer, so any SDK can be pointed at it
    provider = server.load(turns, seed="rag-core-emulator", then=None if args.script else ScriptedTurn(text=NO_SCRIPT_REPLY))
    url = server.url
    endpoints = f", {len(provider.endpoints)} scripted endpoint(s)" if provider.endpoints else ""
    script = (f"{len(provider.turns)} scripted turn(s){endpoints}" if args.script
              else "no script: every model call gets a fixed answer")
    print(f"rag-core emulator on {url} ({script})")
    print(f"  OPENAI_BASE_URL={url}/v1  CO_API_URL={url}  GOOGLE_GEMINI_BASE_URL={url}")
    print("Stop with Ctrl-C.", flush=True)
    return _serve_until_stopped(server)


def _serve_until_stopped(server: Any) -> int:
    """Serve until Ctrl-C or SIGTERM, then close the server."""
    import signal

    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    try:
        stopped.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


def _record_cache(args: argparse.Namespace) -> int:
    from rag_core.errors import RagCoreError
    from rag_core.evals.credentials import CredentialError
    from rag_core.evals.retrieval.evaluate import DatasetUnavailable
    from rag_core.evals.retrieval.record_cache import record
    from rag_core.evals.retrieval.suite import SuiteFileError

    if not args.suite.is_file():
        raise UsageError(f"{args.suite}: no such suite file")
    try:
        print(record(args.suite, args.root))
    # RagCoreError: provider, extra, dataset; CredentialError: the cache's manifest (its embedder's name)
    except (SuiteFileError, DatasetUnavailable, RagCoreError, CredentialError) as exc:
        raise UsageError(" ".join(str(exc).split())) from None
    except OSError as exc:  # checked before embedding: the disk (full) or the network failed meanwhile
        failed = f"{exc.filename}: {exc.strerror}" if exc.filename and exc.strerror else str(exc)
        raise UsageError(f"{args.suite}: recording stopped: {failed}") from None
    return 0


def _offline(args: argparse.Namespace) -> int:
    from rag_core.evals.offline.namespace import OfflineOptions, run_offline

    command = args.command_line[1:] if args.command_line[:1] == ["--"] else args.command_line
    options = OfflineOptions(allow_ports=tuple(dict.fromkeys(args.allow_port)), keep_fds=tuple(args.keep_fd),
                             no_unix_sockets=args.no_unix_sockets)
    return run_offline(command, options)


def _allowed_port(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a TCP port (1-65535)")
    return int(text)


def _descriptor(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a file descriptor number")
    return int(text)


def _init(args: argparse.Namespace) -> int:
    from rag_core.evals.scaffold.project import NEXT_STEPS, WORKFLOW_PATH, ScaffoldError, init_project

    try:
        result = init_project(args.dir, install=args.install)
    except ScaffoldError as exc:
        raise UsageError(f"{args.dir}: cannot scaffold here: {exc}") from None
    for path in result.written:
        print(f"wrote {args.dir / path}")
    for change in result.changed:
        print(f"added {change}")
    for path in result.kept:
        print(f"kept  {args.dir / path} (exists already)")
    for note in result.notes:
        print(note, end="" if note.endswith("\n") else "\n")
    if args.install is None and WORKFLOW_PATH in result.written:
        print(f"Set RAG_CORE_INSTALL in {args.dir / WORKFLOW_PATH} to where CI gets rag-core (a git URL or a wheel; "
              "rag-core is on no package index): the workflow stops until it is set. (rag-core init --install SPEC "
              "fills it in when it writes the workflow.)")
    print(NEXT_STEPS.format(folder=args.dir))
    return 0


def _report_html(args: argparse.Namespace, linked: bool) -> Any:
    """The report asked for; each record its history leaves out is said, in one line on stderr."""
    from rag_core.evals.report.html import report_for
    from rag_core.evals.runs.schema import RecordError

    if args.history < 1:
        raise UsageError(f"--history {args.history}: give at least 1 run")
    try:
        report = report_for(args.runs_dir, args.record, args.compare, args.history, linked=linked)
    except RecordError as exc:
        raise UsageError(str(exc)) from None
    for line in report.skipped:
        _warn(line)
    return report


def _warn(line: str) -> None:
    print(f"rag-core: {line}", file=sys.stderr, flush=True)


def _history_pages(args: argparse.Namespace, report: Any) -> Any:
    """The reports its history links to, told once of each record they leave out (the page's
    own were told already)."""
    from rag_core.evals.report.html import HistoryPages

    return HistoryPages(args.runs_dir, compared=args.compare is not None, history=args.history, warn=_warn,
                        said=report.skipped)


def _report(args: argparse.Namespace) -> int:
    from rag_core.evals.report.html import render_page

    report = _report_html(args, linked=args.history_pages)
    # a record is screened when it is written, but not every record was written by this version
    # (or through the harness at all): what the page embeds is screened again
    _write_page(args.output, report.embedded, render_page)
    against = f" against {report.base.name}" if report.base else ""
    print(f"wrote {args.output} ({len(report.html.encode()) / 1024:,.0f} KB): run {report.run.name}{against}")
    if args.history_pages:
        _write_history_pages(args, report)
    return 0


def _write_history_pages(args: argparse.Namespace, page: Any) -> None:
    """The report of each earlier run of the history beside the page, where its point links."""
    from rag_core.evals.report.html import page_name, render_page
    from rag_core.evals.runs.schema import RecordError

    pages = _history_pages(args, page)
    history = page.history
    for record in history:
        target = args.output.parent / page_name(record)
        try:
            report = pages.report(page_name(record))
        except RecordError as exc:
            raise UsageError(str(exc)) from None
        if report is not None:
            _write_page(target, report.embedded, render_page)
    print(f"wrote the reports of {len(history)} earlier run(s) of its history beside it")


def _write_page(target: Path, embedded: Any, render: Any) -> None:
    from rag_core.evals.atomic import write_checked
    from rag_core.evals.credentials import CredentialError

    try:
        write_checked(target, embedded, render)
    except CredentialError as exc:
        raise UsageError(" ".join(str(exc).split())) from None
    except OSError as exc:
        raise UsageError(f"{target}: cannot write the report ({exc.strerror or exc})") from None


def _merge(args: argparse.Namespace) -> int:
    import os

    from rag_core.evals.credentials import CredentialError
    from rag_core.evals.recording.fix_commands import accept_cases
    from rag_core.evals.report import markdown
    from rag_core.evals.runs.merge import load_shards, merge
    from rag_core.evals.runs.schema import RecordError
    from rag_core.evals.runs.store import RunStore
    from rag_core.evals.runs.tally import tally

    try:
        record = merge(load_shards(args.shards))
    except RecordError as exc:
        raise UsageError(str(exc)) from None
    try:
        path = RunStore(args.runs_dir).write(record)
        if args.summary is not None:  # added to the file, as --golden-report adds it
            markdown.write(args.summary, record.cases, markdown.Links.from_environment(os.environ),
                           retrieval=record.retrieval, accept=accept_cases(record.cases))
    except CredentialError as exc:
        raise UsageError(" ".join(str(exc).split())) from None
    except OSError as exc:
        raise UsageError(f"{exc.filename or args.runs_dir}: cannot write it ({exc.strerror or exc})") from None
    counts = tally(record)
    print(f"wrote {path}: {counts.cases} cases ({counts.failed} failed), {len(record.retrieval)} retrievers, "
          f"from {len(args.shards)} shard records")
    if args.summary is not None:
        print(f"wrote {args.summary}")
    return 0


def _view(args: argparse.Namespace) -> int:
    import webbrowser

    from rag_core.evals.report.serve import ReportServer

    report = _report_html(args, linked=True)  # the server builds the runs' pages its history links to
    try:
        server = ReportServer(report.html, args.port, pages=_history_pages(args, report).page)
    except OSError as exc:
        raise UsageError(f"port {args.port}: cannot listen on 127.0.0.1 ({exc.strerror or exc})") from None
    print(f"rag-core report of {report.run.name} on {server.url}", flush=True)
    print("Stop with Ctrl-C.", flush=True)
    if not args.no_browser:
        webbrowser.open(server.url)
    return _serve_until_stopped(server)


def _add_report_arguments(command: argparse.ArgumentParser) -> None:
    from rag_core.evals.report.html import HISTORY
    from rag_core.evals.runs.store import DEFAULT_FOLDER

    command.add_argument("record", nargs="?", default=None, metavar="RUN",
                         help="a run record: its file, or its name in the runs folder (default: the newest)")
    command.add_argument("--compare", metavar="BASE", default=None,
                         help="compare with this record (a file or a name), or 'previous': the one before RUN")
    command.add_argument("--runs-dir", type=Path, default=Path(DEFAULT_FOLDER), metavar="DIR",
                         help=f"the folder of run records (default: {DEFAULT_FOLDER})")
    command.add_argument("--history", type=int, default=HISTORY, metavar="N",
                         help=f"runs the history view shows, RUN included (default: {HISTORY})")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="rag-core", description="rag-core: what is not a test run: project scaffolding, the provider "
                     "emulator, embedding caches, the HTML report of a run record (written by every pytest evals/ "
                     "session), merging CI shards' records, running a command offline. Golden cases and retrieval "
                     "suites run under pytest (pytest evals/).",
                     epilog="Each COMMAND has --help (rag-core emulator serve --help, rag-core cache record --help).")
    parser.add_argument("--version", action="version", version=f"rag-core {rag_core.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    offline = commands.add_parser(
        "offline", help="run a command with loopback as its only network (Linux)",
        description="Run COMMAND in a network namespace of its own whose only interface is a loopback of its own, "
                    "e.g. rag-core offline -- pytest evals/. Child processes and C-level sockets (gRPC) cannot reach "
                    "the network either. Services COMMAND starts on 127.0.0.1 work; the machine's own 127.0.0.1 "
                    "services only through --allow-port. Descriptors COMMAND inherits are closed but 0, 1, 2 and "
                    "--keep-fd; unix sockets bound to a path stay reachable unless --no-unix-sockets. "
                    "Needs Linux user namespaces; the exit status is COMMAND's.")
    offline.add_argument("--allow-port", type=_allowed_port, action="append", default=[], metavar="PORT",
                         help="let COMMAND reach the machine's 127.0.0.1:PORT at the same address (a PostgreSQL, a "
                              "Chroma server started outside); repeatable")
    offline.add_argument("--keep-fd", type=_descriptor, action="append", default=[], metavar="FD",
                         help="pass inherited file descriptor FD on to COMMAND (others but 0, 1, 2 are closed); "
                              "repeatable")
    offline.add_argument("--no-unix-sockets", action="store_true",
                         help="refuse COMMAND unix sockets (socket(AF_UNIX), datagram socketpairs, io_uring; stream "
                              "socketpairs still work), so no socket file (a relay, docker.sock) leads outside")
    offline.add_argument("command_line", nargs=argparse.REMAINDER, metavar="COMMAND",
                         help="the command and its arguments (after --)")
    offline.set_defaults(run=_offline)

    emulator = commands.add_parser("emulator", help="serve: the provider emulator on 127.0.0.1 (OpenAI, Cohere, Gemini "
                                                   "wire formats)")
    emulator_commands = emulator.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser)
    emulator_commands.required = True
    serve = emulator_commands.add_parser(
        "serve", help="serve on 127.0.0.1 until stopped",
        description="Serve the provider emulator on 127.0.0.1, for recording by hand or pointing any SDK at it.")
    serve.add_argument("--port", type=_port, default=0, help="port to listen on (default: a free one, printed)")
    serve.add_argument("--script", type=Path, metavar="FILE",
                       help="YAML list of turns (or a case file): what each model call answers, in order")
    serve.set_defaults(run=_serve)

    cache = commands.add_parser("cache", help="record: embed a retrieval suite's corpus and queries into its cache")
    cache_commands = cache.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser)
    cache_commands.required = True
    record = cache_commands.add_parser(
        "record", help="embed a suite's corpus and queries into its cache",
        description="Embed a retrieval suite's corpus and queries into its EmbeddingCache folder "
                    "(needs the suite's embedder: the local model or a provider key).")
    record.add_argument("suite", type=Path, metavar="SUITE", help="the suite file, e.g. fixtures/retrieval/kitchen.yaml")
    record.add_argument("--root", type=Path, default=Path("."),
                        help="the project root the suite's paths are relative to (default: the current folder)")
    record.set_defaults(run=_record_cache)

    init = commands.add_parser(
        "init", help="scaffold golden cases in a project",
        description="Write an example golden case, its corpus, evals/test_goldens.py, rag-core's pytest settings "
                    "(in the project's own pytest configuration file) and a CI workflow into DIR. Existing files and "
                    "pytest sections are kept; all files are written, or none.")
    init.add_argument("dir", type=Path, nargs="?", default=Path("."), metavar="DIR", help="the project (default: .)")
    init.add_argument("--install", metavar="SPEC", default=None,
                      help="what the CI workflow installs rag-core from: a pip requirement such as "
                           "'rag-core[harness,agent] @ git+https://github.com/you/rag-core.git@v0.1.0' or a wheel "
                           "path (default: a placeholder the workflow refuses until it is filled in)")
    init.set_defaults(run=_init)

    from rag_core.evals.report.html import DEFAULT_OUTPUT

    report = commands.add_parser(
        "report", help="a run record as one self-contained HTML page",
        description="Write the report of a run record (pytest evals/ writes one per session): summary, cases "
                    "with their golden | observed diffs, retrieval suites, history; with --compare, what changed "
                    "since BASE. One HTML file with nothing to fetch: open it from disk or a CI artifact.")
    _add_report_arguments(report)
    report.add_argument("-o", "--output", type=Path, default=Path(DEFAULT_OUTPUT), metavar="FILE",
                        help=f"where to write it (default: {DEFAULT_OUTPUT})")
    report.add_argument("--history-pages", action="store_true",
                        help="also write the report of each earlier run of the history beside FILE, as "
                             "<run>.html: the history's points link to them")
    report.set_defaults(run=_report)

    view = commands.add_parser(
        "view", help="serve a run's report on 127.0.0.1 and open a browser",
        description="Build the report of a run record (as rag-core report does) and serve it on 127.0.0.1 "
                    "until stopped, opening it in the default browser.")
    _add_report_arguments(view)
    view.add_argument("--port", type=_port, default=0, help="port to listen on (default: a free one, printed)")
    view.add_argument("--no-browser", action="store_true", help="print the URL only; open no browser")
    view.set_defaults(run=_view)

    from rag_core.evals.runs.store import DEFAULT_FOLDER

    merge = commands.add_parser(
        "merge", help="merge the run records of a run's CI shards into one",
        description="Merge the run records of the shards of one run (CI jobs that each ran part of pytest "
                    "evals/) into one record in the runs folder, which rag-core report then shows: the cases and "
                    "retrievers of every shard, the run's time and outcome. Shards of different commits or options, "
                    "or two shards holding one case, are refused.")
    merge.add_argument("shards", nargs="+", type=Path, metavar="SHARD", help="a shard's run record (a .json file)")
    merge.add_argument("--runs-dir", type=Path, default=Path(DEFAULT_FOLDER), metavar="DIR",
                       help=f"where the merged record is written (default: {DEFAULT_FOLDER})")
    merge.add_argument("--summary", type=Path, default=None, metavar="FILE",
                       help="also add the markdown summary of the merged run to FILE, after what it holds "
                            "(as --golden-report does)")
    merge.set_defaults(run=_merge)
    return parser


def _port(text: str) -> int:
    """A TCP port (0: a free one), checked by argparse, so a wrong one is a usage error."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (0 to 65535; 0 takes a free one)")
    return port


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except UsageError as exc:
        print(f"rag-core: error: {exc}", file=sys.stderr)
        return 2
