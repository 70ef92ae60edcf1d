"""The machine's loopback ports that ``rag-core offline --allow-port PORT`` lets into the namespace.

A network namespace has a loopback of its own: a PostgreSQL listening on the machine's
127.0.0.1:5432 is not there inside. The relay is a process left in the machine's namespace. The
command's side listens on 127.0.0.1:PORT inside the namespace (sockets made there and handed to
the relay before the command starts), and the relay passes each connection to 127.0.0.1:PORT
outside, byte for byte, both ways. It connects to nothing else, so the named ports are the only
way out of the namespace.

It lives exactly as long as the command: it watches the command's process through a pidfd, and
it is nobody's child the command knows of (a double fork), so a shell or an init the command is
never waits for it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

LOOPBACK = "127.0.0.1"
READY = b"ready"
CHUNK = 1 << 16


class RelayError(RuntimeError):
    """The relay could not take over the ports; the command is not run."""


@dataclass
class Relay:
    """The command's end of the relay, until the listening sockets are handed over."""

    ports: tuple[int, ...]
    control: socket.socket

    def hand_over(self, listeners: Sequence[socket.socket]) -> None:
        """Give the relay the sockets listening inside the namespace (one per port, in order) and
        wait until it serves them."""
        try:
            socket.send_fds(self.control, [b"listeners"], [listener.fileno() for listener in listeners])
            answer = self.control.recv(1024)
        except OSError as exc:
            raise RelayError(f"the port relay did not start ({exc.strerror or exc})") from None
        finally:
            self.control.close()
        if answer != READY:
            raise RelayError(answer.decode(errors="replace") or "the port relay ended before it started")


def start_relay(ports: Sequence[int]) -> Relay:
    """Fork the relay off this process, which goes on to become the command. Call it while this
    process is still in the machine's network namespace."""
    command_pid = os.getpid()
    ours, theirs = socket.socketpair()
    middle = os.fork()
    if middle == 0:  # pragma: no cover - runs in the forked processes, which never return here
        code = 1
        try:
            ours.close()
            os.setsid()  # out of the terminal's process group: Ctrl-C is the command's to handle
            if os.fork() == 0:
                code = _relay(theirs, tuple(ports), command_pid)
            else:
                code = 0
        except BaseException as exc:  # noqa: BLE001 - a forked process must never return into the CLI
            _say(f"the port relay failed: {exc}")
        finally:
            os._exit(code)
    theirs.close()
    os.waitpid(middle, 0)
    return Relay(tuple(ports), ours)


def _say(line: str) -> None:
    try:
        os.write(2, f"rag-core offline: {line}\n".encode(errors="replace"))
    except OSError:
        pass


def _detach(keep: int) -> None:
    """The relay keeps only its control socket and stderr (for what it has to say): a pipe the
    caller reads the command's output from ends when the command does, the relay with it."""
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    for fd in (int(name) for name in os.listdir("/proc/self/fd")):
        if fd > 2 and fd != keep:
            try:
                os.close(fd)
            except OSError:
                pass  # the listing's own descriptor, already closed


def _relay(control: socket.socket, ports: tuple[int, ...], command_pid: int) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _detach(control.fileno())
    try:
        command = os.pidfd_open(command_pid)
    except (AttributeError, OSError) as exc:
        control.sendall(f"the port relay cannot watch the command (pidfd_open: {exc}); it needs Linux 5.3 "
                        "or later".encode())
        return 1
    try:
        _, fds, _, _ = socket.recv_fds(control, 1024, len(ports))
    except OSError:
        return 1
    if len(fds) != len(ports):
        return 1  # the command's side gave up before handing the ports over
    listeners = [socket.socket(fileno=fd) for fd in fds]
    control.sendall(READY)
    control.close()
    asyncio.run(_serve(listeners, ports, command))
    return 0


@dataclass
class _Outside:
    """What the relay says about one port: once, not once per connection."""

    port: int
    told: set[str] = field(default_factory=set)

    def refused(self, exc: OSError) -> None:
        cause = os.strerror(exc.errno) if exc.errno else str(exc)  # asyncio's own text repeats the address
        if cause not in self.told:
            self.told.add(cause)
            _say(f"--allow-port {self.port}: {LOOPBACK}:{self.port} outside the namespace refused the connection "
                 f"({cause}); is the service running? The connection inside was reset")


async def _serve(listeners: list[socket.socket], ports: tuple[int, ...], command: int) -> None:
    loop = asyncio.get_running_loop()
    ended = loop.create_future()
    loop.add_reader(command, lambda: ended.done() or ended.set_result(None))
    servers = [await asyncio.start_server(partial(_pass_through, _Outside(port)), sock=listener)
               for listener, port in zip(listeners, ports)]
    await ended
    for server in servers:
        server.close()


async def _pass_through(outside: _Outside, inside_reader: asyncio.StreamReader,
                        inside_writer: asyncio.StreamWriter) -> None:
    try:
        reader, writer = await asyncio.open_connection(LOOPBACK, outside.port)
    except OSError as exc:
        outside.refused(exc)
        _reset(inside_writer)
        return
    try:
        await asyncio.gather(_copy(inside_reader, writer), _copy(reader, inside_writer))
    finally:
        for end in (writer, inside_writer):
            end.close()


async def _copy(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while data := await source.read(CHUNK):
            sink.write(data)
            await sink.drain()
        if sink.can_write_eof():
            sink.write_eof()  # a half-close passes through: the peer reads its end of input
    except OSError:
        _reset(sink)


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with a reset (as a refused connection reads to the client), not an orderly end of data."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    writer.transport.abort()

