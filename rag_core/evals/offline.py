"""Run a command with no network but this machine's loopback: ``rag-core offline -- pytest evals/``.

The network guard closes what Python code can reach (sockets, name resolution, threads the
subject starts). What it cannot see is traffic that never goes through Python's socket module:
a child process the program starts, a C extension's own sockets (gRPC channels). For a CI job
that must prove replay reaches nothing, this runs the whole command in a network namespace of
its own, where the only interface is loopback: those connections fail with "network is
unreachable" like any other, while local services (a PostgreSQL on 127.0.0.1, a Chroma server)
keep working.

Linux only, and unprivileged: a user namespace (mapping the caller's user and group onto
themselves) makes the network namespace creatable without root, as ``unshare -rn`` does.
Where the kernel refuses (another OS, user namespaces disabled, a container without the
capability) the command is not run and the error says why.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import socket
import struct
import sys
from collections.abc import Sequence

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1


class IsolationError(RuntimeError):
    """The kernel would not give this process a network namespace of its own."""


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def _unshare_network() -> None:
    if not sys.platform.startswith("linux"):
        raise IsolationError(f"network isolation needs Linux namespaces; this is {sys.platform}")
    uid, gid = os.getuid(), os.getgid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0:
        code = ctypes.get_errno()
        raise IsolationError(
            f"the kernel refused a user and network namespace ({errno.errorcode.get(code, code)}: "
            f"{os.strerror(code)}); user namespaces may be disabled here (sysctl "
            "kernel.unprivileged_userns_clone, user.max_user_namespaces) or the container forbids them")
    # the caller stays who they are inside the namespace (files keep their owner)
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1\n")
    _write("/proc/self/gid_map", f"{gid} {gid} 1\n")


def _loopback_up() -> None:
    """A new network namespace has its loopback interface down: bring it up, as ``ip link set lo
    up`` would, so services on 127.0.0.1 work inside."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def run_offline(command: Sequence[str]) -> int:
    """Replace this process by ``command``, run with loopback as its only network. Returns only
    on failure: 2 when isolation is refused, 127 when the command cannot be started."""
    if not command:
        print("rag-core offline: error: name the command to run, e.g. rag-core offline -- pytest evals/",
              file=sys.stderr)
        return 2
    try:
        _unshare_network()
        _loopback_up()
    except (IsolationError, OSError) as exc:
        print(f"rag-core offline: error: {exc}; {command[0]} was not run", file=sys.stderr)
        return 2
    try:
        os.execvp(command[0], list(command))
    except OSError as exc:
        print(f"rag-core offline: error: cannot run {command[0]}: {exc.strerror}", file=sys.stderr)
        return 127
    return 0  # unreachable: execvp replaced the process
