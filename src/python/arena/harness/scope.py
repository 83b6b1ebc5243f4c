"""What the candidate's processes can reach of the judge's, bounded by the kernel (apart.py).

The worker, and a repository's bench command, call scope() first thing, while they have one
thread, before torch or any candidate code. It tries, in order:

- **Landlock's scopes** (Linux 6.12 and later, ABI 6): a domain of its own in which signals and
  abstract unix sockets reach only processes inside it; every domain also bars ptrace (so
  /proc/PID/mem) of processes outside it. The judge, outside, keeps every right over the worker.
- **A seccomp filter** where the kernel has no scopes (the MI300X hosts of a pool may run older
  kernels): the calls that send a signal, aimed at the judge (its pid, its process group, every
  process at once), fail with EPERM, and so does making the judge a descriptor's owner (which the
  kernel then signals); tkill, pidfd_send_signal, F_SETOWN_EX and the owner ioctls, whose targets a
  filter cannot read (a thread's id, a descriptor, a pointer), fail whole. ptrace of the judge is
  already refused: the judge is not dumpable. Other architectures' entry points (x32, int 0x80)
  are refused whole.

Neither needs a mount, so both hold inside bubblewrap on a GPU machine, where the worker cannot
have PID namespaces of its own. It imports nothing of arena: apart.py, run as a script, loads it.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
import sys

# Landlock (include/uapi/linux/landlock.h): the same syscall numbers on every architecture.
_LANDLOCK_CREATE_RULESET, _LANDLOCK_RESTRICT_SELF, _LANDLOCK_CREATE_RULESET_VERSION = 444, 446, 1
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL, _SCOPED_FROM_ABI = 1, 2, 6
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2

# seccomp (include/uapi/linux/seccomp.h, audit.h) and classic BPF's opcodes.
_RET_ALLOW, _RET_EPERM = 0x7FFF0000, 0x00050000 | 1
_LD_ABS, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06
# Offsets in struct seccomp_data: the low halves of args[0..2] (little-endian).
_NR, _ARCH, _ARG0, _ARG1, _ARG2 = 0, 4, 16, 24, 32
_X32_BIT = 0x40000000
# Per machine: its audit arch; the numbers of kill, rt_sigqueueinfo, pidfd_open, tgkill,
# rt_tgsigqueueinfo (their first argument a pid); of tkill and pidfd_send_signal; of fcntl and ioctl.
_SIGNALLING = {
    "x86_64": (0xC000003E, (62, 129, 434, 234, 297), (200, 424), (72, 16)),
    "aarch64": (0xC00000B7, (129, 138, 434, 131, 240), (130, 424), (25, 29)),
}
# An owner that gets SIGIO (or the signal F_SETSIG names) when a descriptor is ready: fcntl's
# F_SETOWN (a pid or -pgid) and F_SETOWN_EX (a struct), ioctl's FIOSETOWN and SIOCSPGRP (pointers).
_F_SETOWN, _F_SETOWN_EX, _FIOSETOWN, _SIOCSPGRP = 8, 15, 0x8901, 0x8902


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _Filter(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


# What scope() says when Landlock's scopes hold the process (the judge reads it from a worker's start).
LANDLOCK_SCOPED = "signals, ptrace and abstract sockets scoped to its own processes"


def landlock_abi() -> tuple[int, str]:
    """This kernel's Landlock ABI (0 where it has none) and how to say it."""
    libc = _libc()
    version = ctypes.c_uint32(_LANDLOCK_CREATE_RULESET_VERSION)
    abi = libc.syscall(ctypes.c_long(_LANDLOCK_CREATE_RULESET), None, ctypes.c_size_t(0), version)
    return (abi, f"ABI {abi}") if abi > 0 else (0, os.strerror(ctypes.get_errno()))


def scope(judge: int | None = None) -> tuple[bool, str]:
    """This process and all it starts from now on kept from the judge's processes (`judge`: the
    judge's pid, by default this process's parent): Landlock's scopes, or else the seccomp
    filter. (Whether it did, what for the log.) Refused, it changes nothing and says why."""
    if not sys.platform.startswith("linux"):
        return False, "not scoped: not Linux"
    threads = len(os.listdir("/proc/self/task"))
    if threads != 1:
        return False, f"not scoped: {threads} threads (a domain or a filter binds only its caller)"
    done, why = landlock()
    if done:
        return done, why
    judge = os.getppid() if judge is None else judge
    done, filtered = signal_filter(judge)
    return done, filtered if done else f"{why}; {filtered}"


def landlock() -> tuple[bool, str]:
    """Landlock's scopes for this thread and all it starts: (whether, what for the log)."""
    abi, found = landlock_abi()
    if abi < _SCOPED_FROM_ABI:
        return False, f"not scoped: this kernel's Landlock ({found}) has no scopes (ABI {_SCOPED_FROM_ABI}, Linux 6.12)"
    libc = _libc()
    attr = _RulesetAttr(0, 0, _SCOPE_SIGNAL | _SCOPE_ABSTRACT_UNIX_SOCKET)
    size = ctypes.c_size_t(ctypes.sizeof(attr))
    ruleset = libc.syscall(ctypes.c_long(_LANDLOCK_CREATE_RULESET), ctypes.byref(attr), size, ctypes.c_uint32(0))
    if ruleset < 0:
        return False, f"not scoped: landlock_create_ruleset: {os.strerror(ctypes.get_errno())}"
    try:
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:  # what an unprivileged domain requires
            return False, f"not scoped: no_new_privs: {os.strerror(ctypes.get_errno())}"
        if libc.syscall(ctypes.c_long(_LANDLOCK_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            return False, f"not scoped: landlock_restrict_self: {os.strerror(ctypes.get_errno())}"
    finally:
        os.close(ruleset)
    return True, f"{LANDLOCK_SCOPED} (Landlock ABI {abi})"


def signal_filter(judge: int) -> tuple[bool, str]:
    """The seccomp filter that refuses signals aimed at `judge` (its pid, its process group, all
    processes) for this thread and all it starts: (whether, what for the log)."""
    machine = platform.machine()
    if machine not in _SIGNALLING:
        return False, f"no signal filter for {machine}"
    try:
        group = os.getpgid(judge)
    except OSError as error:
        return False, f"no signal filter: the judge's process group: {error}"
    program = filter_program(machine, judge, group)
    libc = _libc()
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False, f"no signal filter: no_new_privs: {os.strerror(ctypes.get_errno())}"
    fprog = _Filter(len(program) // 8, program)
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return False, f"no signal filter: seccomp: {os.strerror(ctypes.get_errno())}"
    return True, f"signals to the judge's processes refused (a seccomp filter, {machine})"


def filter_program(machine: str, judge: int, group: int) -> bytes:
    """The filter's classic BPF program, as the kernel reads it (struct sock_filter, 8 bytes each)."""
    arch, aimed, blind, (fcntl, ioctl) = _SIGNALLING[machine]
    targets = (judge, -group & 0xFFFFFFFF, 0xFFFFFFFF)  # kill(pid), kill(-pgid), kill(-1)
    # Labels resolved after: ("jump", code, k, true label, false label) or a plain instruction.
    code: list[tuple[object, ...] | str] = [
        (_LD_ABS, 0, 0, _ARCH),
        ("jump", _JEQ, arch, None, "deny"),
        (_LD_ABS, 0, 0, _NR),
        ("jump", _JGE, _X32_BIT, "deny", None),
        *[("jump", _JEQ, number, "pid", None) for number in aimed],
        *[("jump", _JEQ, number, "deny", None) for number in blind],
        ("jump", _JEQ, fcntl, "fcntl", None),
        ("jump", _JEQ, ioctl, "ioctl", None),
        (_RET, 0, 0, _RET_ALLOW),
        "fcntl",
        (_LD_ABS, 0, 0, _ARG1),
        ("jump", _JEQ, _F_SETOWN_EX, "deny", None),
        ("jump", _JEQ, _F_SETOWN, None, "allow"),
        (_LD_ABS, 0, 0, _ARG2),
        ("jump", _JEQ, targets[0], "deny", None),
        ("jump", _JEQ, targets[1], "deny", "allow"),
        "ioctl",
        (_LD_ABS, 0, 0, _ARG1),
        ("jump", _JEQ, _FIOSETOWN, "deny", None),
        ("jump", _JEQ, _SIOCSPGRP, "deny", "allow"),
        "pid",
        (_LD_ABS, 0, 0, _ARG0),
        *[("jump", _JEQ, target, "deny", None) for target in targets],
        "allow",
        (_RET, 0, 0, _RET_ALLOW),
        "deny",
        (_RET, 0, 0, _RET_EPERM),
    ]
    labels: dict[str, int] = {}
    index = 0
    for entry in code:
        if isinstance(entry, str):
            labels[entry] = index
        else:
            index += 1
    out, index = b"", 0
    for entry in code:
        if isinstance(entry, str):
            continue
        if entry[0] == "jump":
            _, op, k, yes, no = entry
            offset = [0 if label is None else labels[str(label)] - index - 1 for label in (yes, no)]
            out += struct.pack("<HBBI", op, offset[0], offset[1], k)
        else:
            out += struct.pack("<HBBI", *entry)
        index += 1
    return out


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc
