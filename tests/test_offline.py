"""``rag-core offline``: a command whose only network is loopback, for what the in-process
network guard cannot see (child processes, sockets opened in C)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from rag_core.evals import offline

# a connection made in C (libc's connect through ctypes), never through Python's socket module,
# from a grandchild process: the two ways past the in-process guard
C_LEVEL_CONNECT = textwrap.dedent('''
    import ctypes, ctypes.util, socket, struct
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    fd = libc.socket(socket.AF_INET, socket.SOCK_STREAM, 0)
    address = struct.pack("!HH4s8x", socket.AF_INET, 443, socket.inet_aton("192.0.2.1"))  # TEST-NET-1
    address = struct.pack("=H", socket.AF_INET) + address[2:]
    result = libc.connect(fd, ctypes.c_char_p(address), len(address))
    print("connect:", result, ctypes.get_errno())
''')

LOOPBACK_ROUND_TRIP = textwrap.dedent('''
    import socket
    server = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(server.getsockname(), timeout=5)
    peer, _ = server.accept()
    client.sendall(b"ping")
    print("loopback:", peer.recv(4).decode())
''')


# the rag-core command, run by this interpreter
RAG_CORE = [sys.executable, "-c", "import sys; from rag_core.cli import main; sys.exit(main(sys.argv[1:]))"]


def _offline(*command: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RAG_CORE, "offline", "--", *command], capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def isolation() -> None:
    probe = _offline("true")
    if probe.returncode == 2:
        pytest.skip(f"this kernel gives no network namespace: {probe.stderr.strip()}")


def test_a_child_processs_c_level_connection_finds_no_network(isolation):
    child = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {C_LEVEL_CONNECT!r}])"
    result = _offline(sys.executable, "-c", child)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"connect: -1 {101}"  # ENETUNREACH, at once


def test_loopback_services_still_work_inside(isolation):
    result = _offline(sys.executable, "-c", LOOPBACK_ROUND_TRIP)
    assert (result.returncode, result.stdout.strip()) == (0, "loopback: ping"), result.stderr


def test_the_replay_runs_unchanged_inside(isolation):
    """The README's replay of a golden case, run offline: it needs nothing but its cassette."""
    result = subprocess.run([*RAG_CORE, "offline", "--", sys.executable, "-m", "pytest",
                             "-q", "-p", "no:cacheprovider", "evals/test_goldens.py", "--case", "sdk_chat_loop"],
                            capture_output=True, text=True, timeout=300, env={**os.environ, "CI": "true"})
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "1 passed" in result.stdout


def test_the_exit_status_is_the_commands(isolation):
    assert _offline(sys.executable, "-c", "raise SystemExit(7)").returncode == 7


def test_where_isolation_is_refused_nothing_runs_and_the_error_says_why(monkeypatch, capsys):
    monkeypatch.setattr(offline.sys, "platform", "darwin")
    assert offline.run_offline(["pytest", "evals/"]) == 2
    assert capsys.readouterr().err.strip() == (
        "rag-core offline: error: network isolation needs Linux namespaces; this is darwin; pytest was not run")


def test_a_missing_command_is_a_usage_error():
    result = subprocess.run([*RAG_CORE, "offline"], capture_output=True, text=True)
    assert result.returncode == 2
    assert "name the command to run" in result.stderr
