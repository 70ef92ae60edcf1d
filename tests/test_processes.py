"""The forked writers behave as the ``python -c`` processes the crash tests were written for."""

from __future__ import annotations

import importlib.util
import signal
import subprocess

import pytest

from tests.processes import PRELOAD, kill_after, spawn


def test_a_writer_gets_its_arguments_and_stdin_and_reports_its_output_and_exit_code():
    writer = spawn("import sys; print(sys.argv[1:], sys.stdin.readline().strip()); "
                   "print('to stderr', file=sys.stderr); sys.exit(3)", "a", "b c")
    writer.stdin.write("from stdin\n")
    writer.stdin.flush()
    assert writer.communicate(timeout=60) == ("['a', 'b c'] from stdin\n", "to stderr\n")
    assert writer.returncode == 3


def test_a_failing_script_exits_1_with_its_traceback_on_stderr():
    writer = spawn("raise ValueError('refused')")
    out, err = writer.communicate(timeout=60)
    assert writer.returncode == 1 and out == ""
    assert "ValueError: refused" in err


def test_a_killed_writer_reports_sigkill_and_had_its_libraries_imported_before_it_started():
    installed = [name for name in PRELOAD if importlib.util.find_spec(name.split(".")[0])]
    writer = spawn("import sys, time; print(sorted(set(sys.argv[1:]) - set(sys.modules))); print('ready', flush=True); "
                   "time.sleep(60)", *installed)
    assert writer.stdout.readline() == "[]\n"  # nothing left to import: the forkserver did it
    kill_after(writer, 0.0)
    assert writer.returncode == -signal.SIGKILL


def test_a_writer_that_outlives_communicates_timeout_is_killed():
    writer = spawn("import time; time.sleep(60)")
    with pytest.raises(subprocess.TimeoutExpired):
        writer.communicate(timeout=0.2)
    assert writer.returncode == -signal.SIGKILL
