"""``rag-core offline --no-unix-sockets``: the command cannot make a unix socket that reaches a path.

A network namespace does not cover unix sockets bound to a path: they are files, and a relay
listening on one (``socat UNIX-LISTEN:…``) or ``/var/run/docker.sock`` leads outside as before.
Abstract unix sockets (``\\0name``) belong to the network namespace and are shut out already.
No unprivileged kernel interface this module can count on tells a connect to a path from any
other connect (Landlock gains that right only in its ABI 9), so this filter (seccomp, installed
for the command and inherited by all it starts) refuses what makes such a connection possible:

- ``socket(AF_UNIX, …)``, with EACCES: no unix socket to connect or send from;
- ``socketpair(AF_UNIX, …)`` of any type but ``SOCK_STREAM``: a connected stream pair cannot be
  pointed elsewhere, a datagram pair can (``connect`` and ``sendto`` to a path), so asyncio's and
  multiprocessing's pairs keep working;
- ``io_uring_setup``, with EACCES: io_uring makes and connects sockets without those calls;
- system calls of another ABI than the machine's own (32-bit, x32), with ENOSYS: their numbers
  are not the ones this filter checks.

Unix sockets the command would make for itself go too (a PostgreSQL it starts listens on one),
which is why this is asked for, not the default.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
from dataclasses import dataclass

AF_UNIX, SOCK_STREAM, SOCK_TYPE_MASK = 1, 1, 0xF  # the type's low bits; the rest is NONBLOCK/CLOEXEC
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO = 0x7FFF0000, 0x00050000
X32_SYSCALL_BIT = 0x40000000

# classic BPF opcodes (linux/filter.h) and where struct seccomp_data keeps its fields
LD_W_ABS, JEQ_K, JGE_K, AND_K, RET_K = 0x20, 0x15, 0x35, 0x54, 0x06
NR, ARCH = 0, 4


def _argument(n: int) -> int:
    return 16 + 8 * n  # the low 32 bits of a 64-bit argument, on a little-endian machine


@dataclass(frozen=True)
class Abi:
    arch: int  # AUDIT_ARCH_* (linux/audit.h)
    socket: int
    socketpair: int
    io_uring_setup: int
    has_x32: bool


ABIS = {
    "x86_64": Abi(arch=0xC000003E, socket=41, socketpair=53, io_uring_setup=425, has_x32=True),
    "aarch64": Abi(arch=0xC00000B7, socket=198, socketpair=199, io_uring_setup=425, has_x32=False),
}


class FilterError(RuntimeError):
    """The kernel would not take the filter, or this machine is one it has no numbers for."""


def program(abi: Abi) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jump if true, jump if false, k) instructions. A jump counts the
    instructions it skips, so each target is named and the offsets are worked out at the end."""
    code: list[tuple[int, str | int, str | int, int] | str] = [
        (LD_W_ABS, 0, 0, ARCH),
        (JEQ_K, 0, "foreign", abi.arch),
        (LD_W_ABS, 0, 0, NR),
        *([(JGE_K, "foreign", 0, X32_SYSCALL_BIT)] if abi.has_x32 else []),
        (JEQ_K, "socket", 0, abi.socket),
        (JEQ_K, "socketpair", 0, abi.socketpair),
        (JEQ_K, "refuse", "allow", abi.io_uring_setup),
        "socket",
        (LD_W_ABS, 0, 0, _argument(0)),
        (JEQ_K, "refuse", "allow", AF_UNIX),
        "socketpair",
        (LD_W_ABS, 0, 0, _argument(0)),
        (JEQ_K, 0, "allow", AF_UNIX),
        (LD_W_ABS, 0, 0, _argument(1)),
        (AND_K, 0, 0, SOCK_TYPE_MASK),
        (JEQ_K, "allow", "refuse", SOCK_STREAM),
        "allow",
        (RET_K, 0, 0, SECCOMP_RET_ALLOW),
        "refuse",
        (RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EACCES),
        "foreign",
        (RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.ENOSYS),
    ]
    labels: dict[str, int] = {}
    instructions = []
    for item in code:
        if isinstance(item, str):
            labels[item] = len(instructions)
        else:
            instructions.append(item)

    def offset(at: int, target: str | int) -> int:
        return target if isinstance(target, int) else labels[target] - at - 1

    return [(op, offset(at, true), offset(at, false), k) for at, (op, true, false, k) in enumerate(instructions)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install() -> None:
    """Install the filter on this process (and so on the command it becomes by exec)."""
    abi = ABIS.get(platform.machine())
    if abi is None:
        raise FilterError(f"--no-unix-sockets knows the system calls of {', '.join(ABIS)}; "
                          f"this machine is {platform.machine()}")
    raw = b"".join(struct.pack("=HBBI", *instruction) for instruction in program(abi))
    buffer = ctypes.create_string_buffer(raw, len(raw))
    fprog = _SockFprog(len(raw) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    # without no_new_privs the kernel takes a filter only from a privileged process; it also keeps
    # a set-user-ID program from shedding the filter
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or \
            libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        code = ctypes.get_errno()
        raise FilterError(f"the kernel refused the unix-socket filter ({errno.errorcode.get(code, code)}: "
                          f"{os.strerror(code)})")
