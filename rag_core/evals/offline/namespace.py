"""Run a command with no network but loopback: ``rag-core offline -- pytest evals/``.

The network guard closes what Python code can reach (sockets, name resolution, threads the
subject starts). What it cannot see is traffic that never goes through Python's socket module:
a child process the program starts, a C extension's own sockets (gRPC channels). For a CI job
that must prove replay reaches nothing, this runs the whole command in a network namespace of
its own, where the only interface is a loopback of its own: those connections fail with
"network is unreachable" like any other. A service the command starts itself on 127.0.0.1
works inside; one already listening on the machine's 127.0.0.1 is reached only through the
ports named with ``--allow-port`` (``relay.py``).

What the namespace does not cover is closed or said here: descriptors the command inherited
(a socket connected outside before it started) are closed at exec but for 0, 1, 2 and those
named with ``--keep-fd``; unix sockets bound to a path are files, not network, and stay
reachable unless ``--no-unix-sockets`` (``unix_filter.py``) refuses them.

Linux only, and unprivileged: a user namespace (mapping the caller's user and group onto
themselves) makes the network namespace creatable without root, as ``unshare -rn`` does.
Where the kernel refuses (another OS, user namespaces disabled, a container without the
capability, Ubuntu's AppArmor restriction) the command is not run and the error says why.
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
from dataclasses import dataclass

from rag_core.evals.offline.relay import LOOPBACK, RelayError, start_relay
from rag_core.evals.offline.unix_filter import FilterError
from rag_core.evals.offline.unix_filter import install as refuse_unix_sockets

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
APPARMOR_SYSCTL = "kernel.apparmor_restrict_unprivileged_userns"
APPARMOR_RESTRICTION = "/proc/sys/" + APPARMOR_SYSCTL.replace(".", "/")


class IsolationError(RuntimeError):
    """The kernel would not give this process a network namespace of its own."""


@dataclass(frozen=True)
class OfflineOptions:
    allow_ports: tuple[int, ...] = ()  # the machine's 127.0.0.1 ports reachable inside, at the same address
    keep_fds: tuple[int, ...] = ()  # inherited descriptors the command keeps beside 0, 1 and 2
    no_unix_sockets: bool = False


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def _require_linux() -> None:
    if not sys.platform.startswith("linux"):
        raise IsolationError(f"network isolation needs Linux namespaces; this is {sys.platform}")


def _unshare_network() -> None:
    uid, gid = os.getuid(), os.getgid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0:
        code = ctypes.get_errno()
        raise IsolationError(
            f"the kernel refused a user and network namespace ({errno.errorcode.get(code, code)}: "
            f"{os.strerror(code)}); user namespaces may be disabled here (sysctl "
            "kernel.unprivileged_userns_clone, user.max_user_namespaces) or the container forbids them")
    # the caller stays who they are inside the namespace (files keep their owner)
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1\n")
        _write("/proc/self/gid_map", f"{gid} {gid} 1\n")
    except OSError as exc:
        raise IsolationError(f"the kernel gave a user namespace but no say over it ({exc.filename}: "
                             f"{exc.strerror}){_apparmor_restriction()}") from None


def _apparmor_restriction() -> str:
    """Ubuntu 23.10 and later (GitHub's ubuntu-24.04 runners too) let AppArmor confine a process
    that makes a user namespace to a profile with no capabilities: the namespace is made, but
    nothing can be done in it."""
    try:
        with open(APPARMOR_RESTRICTION) as handle:
            restricted = handle.read().strip() == "1"
    except OSError:
        return ""
    return f"; AppArmor restricts unprivileged user namespaces here ({APPARMOR_SYSCTL} is 1)" if restricted else ""


def _loopback_up() -> None:
    """A new network namespace has its loopback interface down: bring it up, as ``ip link set lo
    up`` would, so services on 127.0.0.1 work inside."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def _listen_inside(port: int) -> socket.socket:
    try:
        return socket.create_server((LOOPBACK, port))
    except OSError as exc:
        raise IsolationError(f"--allow-port {port}: cannot listen on {LOOPBACK}:{port} inside the namespace "
                             f"({exc.strerror or exc})") from None


def _check_kept(keep_fds: Sequence[int]) -> None:
    for fd in keep_fds:
        try:
            os.fstat(fd)
        except OSError:
            raise IsolationError(f"--keep-fd {fd}: no file descriptor {fd} is open here") from None


def _close_inherited(keep_fds: Sequence[int]) -> None:
    """Every descriptor but 0, 1, 2 and the kept ones closes at exec: a socket made before the
    namespace (connected outside, or unconnected in the machine's namespace) leads out of it."""
    for fd in (int(name) for name in os.listdir("/proc/self/fd")):
        if fd > 2:
            try:
                os.set_inheritable(fd, fd in keep_fds)
            except OSError:
                pass  # the listing's own descriptor, closed by now


def _isolate(options: OfflineOptions) -> None:
    _require_linux()
    _check_kept(options.keep_fds)
    # the relay is forked while this process is still in the machine's namespace: it stays there
    relay = start_relay(options.allow_ports) if options.allow_ports else None
    _unshare_network()
    _loopback_up()
    if relay is not None:
        listeners = [_listen_inside(port) for port in options.allow_ports]
        relay.hand_over(listeners)
        for listener in listeners:
            listener.close()
    if options.no_unix_sockets:
        refuse_unix_sockets()


def run_offline(command: Sequence[str], options: OfflineOptions = OfflineOptions()) -> int:
    """Replace this process by ``command``, run with loopback as its only network. Returns only
    on failure: 2 when isolation is refused, 127 when the command cannot be started."""
    if not command:
        print("rag-core offline: error: name the command to run, e.g. rag-core offline -- pytest evals/",
              file=sys.stderr)
        return 2
    try:
        _isolate(options)
    except (IsolationError, RelayError, FilterError, OSError) as exc:
        print(f"rag-core offline: error: {exc}; {command[0]} was not run", file=sys.stderr)
        return 2
    _close_inherited(options.keep_fds)
    try:
        os.execvp(command[0], list(command))
    except OSError as exc:
        print(f"rag-core offline: error: cannot run {command[0]}: {exc.strerror}", file=sys.stderr)
        return 127
    return 0  # unreachable: execvp replaced the process
