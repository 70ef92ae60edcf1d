"""``rag-core offline``: a command whose only network is loopback, for what the in-process
network guard cannot see (child processes, sockets opened in C)."""

from __future__ import annotations

import contextlib
import os
import platform
import socket
import subprocess
import sys
import textwrap
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from rag_core.evals.offline import namespace as offline, unix_filter as offline_unix_filter

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


def _offline(*command: str, options: tuple[str, ...] = (), timeout: float = 60,
             pass_fds: tuple[int, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RAG_CORE, "offline", *options, "--", *command], capture_output=True,
                          text=True, timeout=timeout, pass_fds=pass_fds)


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


@pytest.mark.parametrize("options", [[], ["--no-unix-sockets"]], ids=["offline", "no-unix-sockets"])
def test_the_replay_runs_unchanged_inside(isolation, options):
    """The README's replay of a golden case, run offline: it needs nothing but its cassette."""
    result = subprocess.run([*RAG_CORE, "offline", *options, "--", sys.executable, "-m", "pytest",
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


# ------------------------------------------------------------------ the machine's loopback services


@contextlib.contextmanager
def host_service(reply: bytes | None = None) -> Iterator[int]:
    """A TCP server on the machine's 127.0.0.1, started before ``rag-core offline`` as a local
    PostgreSQL is: it answers ``reply`` + what it read up to the client's end of input (an echo
    when ``reply`` is None). Yields its port."""
    server = socket.create_server(("127.0.0.1", 0))

    def answer(peer: socket.socket) -> None:
        with peer:
            received = b""
            while chunk := peer.recv(1 << 16):
                received += chunk
            peer.sendall(received if reply is None else reply + received)

    def serve() -> None:
        while True:
            try:
                peer, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=answer, args=(peer,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return probe.getsockname()[1]


def round_trip(port: int, payload: str = "b'ping'") -> str:
    """Inside: send ``payload`` to 127.0.0.1:port, end the input, print what comes back (or the error)."""
    return textwrap.dedent(f'''
        import socket
        try:
            with socket.create_connection(("127.0.0.1", {port}), timeout=10) as sock:
                sock.sendall({payload})
                sock.shutdown(socket.SHUT_WR)
                answer = b""
                while chunk := sock.recv(1 << 16):
                    answer += chunk
            print({port}, len(answer), answer[:40])
        except OSError as exc:
            print({port}, type(exc).__name__)
    ''')


def test_a_service_on_the_machines_loopback_is_reached_through_allow_port_and_no_other(isolation):
    with host_service(b"host:") as named, host_service(b"other:") as unnamed:
        plain = _offline(sys.executable, "-c", round_trip(named))
        allowed = _offline(sys.executable, "-c", round_trip(named) + round_trip(unnamed),
                           options=("--allow-port", str(named)))
    assert (plain.returncode, plain.stdout.split()) == (0, [str(named), "ConnectionRefusedError"]), plain.stderr
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout.splitlines() == [f"{named} 9 b'host:ping'", f"{unnamed} ConnectionRefusedError"]


def test_a_forwarded_connection_passes_every_byte_both_ways_and_its_end_of_input(isolation):
    echo = textwrap.dedent('''
        import socket, sys
        payload = bytes(range(256)) * 8192  # 2 MiB, then the end of input: the echo answers after it
        with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30) as sock:
            sock.sendall(payload)
            sock.shutdown(socket.SHUT_WR)
            answer = b""
            while chunk := sock.recv(1 << 16):
                answer += chunk
        print(len(answer), answer == payload)
    ''')
    with host_service() as port:
        result = _offline(sys.executable, "-c", echo, str(port), options=("--allow-port", str(port)), timeout=120)
    assert (result.returncode, result.stdout.strip()) == (0, f"{256 * 8192} True"), result.stderr


def test_a_named_port_nothing_listens_on_is_reset_inside_and_named(isolation):
    port = free_port()
    result = _offline(sys.executable, "-c", round_trip(port) + round_trip(port), options=("--allow-port", str(port)))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [f"{port} ConnectionResetError"] * 2
    assert result.stderr.splitlines() == [  # once, not once per connection
        f"rag-core offline: --allow-port {port}: 127.0.0.1:{port} outside the namespace refused the connection "
        "(Connection refused); is the service running? The connection inside was reset"]


def test_the_relay_ends_with_the_command_and_holds_none_of_its_output(isolation):
    """The command's output pipe reaches its end when the command ends (subprocess.run returns),
    and no relay process is left behind."""
    marker = f"marker-{uuid.uuid4().hex}"
    with host_service() as port:
        result = _offline(sys.executable, "-c", f"print({marker!r}); raise SystemExit(3)",
                          options=("--allow-port", str(port)), timeout=30)
    assert (result.returncode, result.stdout.strip()) == (3, marker), result.stderr
    left = [pid for pid in os.listdir("/proc") if pid.isdigit() and _cmdline_has(pid, marker)]
    assert left == []


def _cmdline_has(pid: str, marker: str) -> bool:
    try:
        return marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


@pytest.mark.parametrize("value", ["0", "65536", "pg"])
def test_a_bad_port_is_a_usage_error(value):
    result = subprocess.run([*RAG_CORE, "offline", "--allow-port", value, "--", "true"], capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.strip() == (f"rag-core offline: argument --allow-port: {value!r} is not a TCP port (1-65535) "
                                     "(see rag-core offline --help)")


# ------------------------------------------------------------------ what the namespace does not cover


INHERITED = textwrap.dedent('''
    import os, socket, sys
    fd = int(sys.argv[1])
    try:
        os.fstat(fd)
    except OSError as exc:
        print("closed:", exc.strerror)
    else:
        with socket.socket(fileno=fd) as sock:
            sock.sendall(b"ping")
            sock.shutdown(socket.SHUT_WR)
            print("reached:", sock.recv(100).decode())
''')


def test_an_inherited_connected_socket_is_closed_inside_unless_kept(isolation):
    """A socket connected outside before the namespace was made still leads outside: it is closed."""
    with host_service(b"host:") as port, socket.create_connection(("127.0.0.1", port)) as held, \
            socket.create_connection(("127.0.0.1", port)) as kept:
        closed = _offline(sys.executable, "-c", INHERITED, str(held.fileno()), pass_fds=(held.fileno(),))
        passed = _offline(sys.executable, "-c", INHERITED, str(kept.fileno()), pass_fds=(kept.fileno(),),
                          options=("--keep-fd", str(kept.fileno())))
    assert (closed.returncode, closed.stdout.strip()) == (0, "closed: Bad file descriptor"), closed.stderr
    assert (passed.returncode, passed.stdout.strip()) == (0, "reached: host:ping"), passed.stderr


def test_keeping_a_descriptor_that_is_not_open_is_refused_before_anything_runs():
    result = _offline("true", options=("--keep-fd", "987"))
    assert result.returncode == 2
    assert result.stderr.strip() == "rag-core offline: error: --keep-fd 987: no file descriptor 987 is open here; true was not run"


@contextlib.contextmanager
def unix_relay(folder: Path) -> Iterator[Path]:
    """A unix socket bound to a path outside, as a relay (``socat UNIX-LISTEN:…``) or docker.sock is."""
    path = folder / "relay.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()

    def serve() -> None:
        while True:
            try:
                peer, _ = server.accept()
            except OSError:
                return
            with peer:
                peer.sendall(b"outside")

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield path
    finally:
        server.close()


UNIX_SOCKETS = textwrap.dedent('''
    import ctypes, socket, sys
    def attempt(name, make):
        try:
            print(name, make())
        except OSError as exc:
            print(name, exc.strerror)
    def relay():
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(sys.argv[1])
            return sock.recv(100).decode()
    def datagram_pair():
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        a.connect(sys.argv[1])  # a datagram pair can be pointed at a path
        return "made"
    def stream_pair():
        a, b = socket.socketpair()
        a.sendall(b"x")
        return b.recv(1).decode()
    def io_uring():
        libc = ctypes.CDLL(None, use_errno=True)
        result = libc.syscall(425, 8, ctypes.create_string_buffer(120))  # io_uring_setup
        return "made" if result >= 0 else __import__("os").strerror(ctypes.get_errno())
    def event_loop():
        import asyncio
        return asyncio.run(asyncio.sleep(0, "ran"))
    def pipe():
        import multiprocessing
        a, b = multiprocessing.Pipe()
        a.send("sent")
        return b.recv()
    attempt("relay:", relay)
    attempt("datagram pair:", datagram_pair)
    attempt("stream pair:", stream_pair)
    attempt("io_uring:", io_uring)
    attempt("asyncio:", event_loop)
    attempt("multiprocessing.Pipe:", pipe)
''')


def test_an_abstract_unix_socket_outside_is_not_there_inside(isolation):
    """Abstract unix sockets (no file, a name starting with NUL) belong to the network namespace."""
    name = f"\0rag-core-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(name)
        server.listen()
        reach = (f"import socket\ntry:\n    socket.socket(socket.AF_UNIX).connect({name!r}); print('reached')\n"
                 "except OSError as exc:\n    print(type(exc).__name__)")
        outside = subprocess.run([sys.executable, "-c", reach], capture_output=True, text=True)
        inside = _offline(sys.executable, "-c", reach)
    assert (outside.stdout.strip(), inside.stdout.strip()) == ("reached", "ConnectionRefusedError"), inside.stderr


def test_a_unix_socket_outside_is_reached_by_default_as_documented(isolation, tmp_path):
    with unix_relay(tmp_path) as path:
        result = _offline(sys.executable, "-c", UNIX_SOCKETS, str(path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "relay: outside"


def test_no_unix_sockets_refuses_every_way_to_a_socket_file_and_keeps_stream_pairs(isolation, tmp_path):
    with unix_relay(tmp_path) as path:
        result = _offline(sys.executable, "-c", UNIX_SOCKETS, str(path), options=("--no-unix-sockets",))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "relay: Permission denied", "datagram pair: Permission denied", "stream pair: x", "io_uring: Permission denied",
        "asyncio: ran", "multiprocessing.Pipe: sent"]


# a unix socket made through the 32-bit system call ABI (int 0x80), whose numbers differ from the
# machine's own: the filter refuses every call of another ABI rather than miss this one
I386_UNIX_SOCKET = textwrap.dedent('''
    import ctypes, mmap
    code = bytes.fromhex("b867010000" "bb01000000" "b901000000" "31d2" "cd80" "c3")  # socket(AF_UNIX, STREAM, 0)
    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(code)
    call = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
    print("made" if call() >= 0 else "refused")
''')


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the 32-bit ABI of x86_64")
def test_no_unix_sockets_refuses_the_32_bit_system_calls_too(isolation):
    assert _offline(sys.executable, "-c", I386_UNIX_SOCKET).stdout.strip() == "made"
    refused = _offline(sys.executable, "-c", I386_UNIX_SOCKET, options=("--no-unix-sockets",))
    assert (refused.returncode, refused.stdout.strip()) == (0, "refused"), refused.stderr


def test_where_apparmor_restricts_the_namespace_the_error_names_the_setting(monkeypatch, tmp_path, capsys):
    """Ubuntu 24.04: the namespace is made, but writing the user mapping is refused."""
    class Libc:
        def unshare(self, flags):
            return 0

    def refused(path, text):
        raise PermissionError(13, "Permission denied", path)

    restriction = tmp_path / "apparmor_restrict_unprivileged_userns"
    restriction.write_text("1\n")
    monkeypatch.setattr(offline.ctypes, "CDLL", lambda *args, **kwargs: Libc())
    monkeypatch.setattr(offline, "_write", refused)
    monkeypatch.setattr(offline, "APPARMOR_RESTRICTION", str(restriction))
    assert offline.run_offline(["pytest", "evals/"]) == 2
    assert capsys.readouterr().err.strip() == (
        "rag-core offline: error: the kernel gave a user namespace but no say over it (/proc/self/setgroups: "
        "Permission denied); AppArmor restricts unprivileged user namespaces here "
        "(kernel.apparmor_restrict_unprivileged_userns is 1); pytest was not run")


def test_no_unix_sockets_names_a_machine_it_has_no_system_call_numbers_for(monkeypatch):
    monkeypatch.setattr(offline_unix_filter.platform, "machine", lambda: "riscv64")
    with pytest.raises(offline_unix_filter.FilterError, match="knows the system calls of x86_64, aarch64; this machine "
                                                              "is riscv64"):
        offline_unix_filter.install()
