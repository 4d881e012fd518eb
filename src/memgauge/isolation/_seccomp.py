"""No new user namespaces for a sandboxed program: a seccomp filter (classic BPF, installed in the
program's child before it gives up root) refuses ``unshare`` and ``clone`` with ``CLONE_NEWUSER``
(EPERM) and ``clone3``, whose flags a filter cannot read (ENOSYS: the C library falls back to
``clone``). Inside a user namespace of its own an unprivileged program is "root" over new mount and
network namespaces, the way into kernel code no sandbox should expose. Syscalls of another ABI (32-bit
ones on x86_64, x32) are refused too: their numbers differ, and the filter would not see through them.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct

PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
CLONE_NEWUSER = 0x10000000
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
# machine -> (its AUDIT_ARCH, clone, unshare, clone3)
_ARCHES = {
    "x86_64": (0xC000003E, 56, 272, 435),
    "aarch64": (0xC00000B7, 220, 97, 435),
}
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06


def _program() -> bytes | None:
    arch = _ARCHES.get(platform.machine())
    if arch is None:
        return None
    audit, clone, unshare, clone3 = arch
    enosys = _RET_ERRNO | 38
    ins = [
        (_LD_ABS, 0, 0, 4),  # 0: the syscall's ABI
        (_JEQ, 0, 10, audit),  # 1: another ABI -> 12
        (_LD_ABS, 0, 0, 0),  # 2: its number
        (_JGE, 8, 0, 0x40000000),  # 3: x32 -> 12
        (_JEQ, 7, 0, clone3),  # 4: clone3 -> 12
        (_JEQ, 2, 0, unshare),  # 5: -> 8
        (_JEQ, 1, 0, clone),  # 6: -> 8
        (_RET, 0, 0, _RET_ALLOW),  # 7
        (_LD_ABS, 0, 0, 16),  # 8: the low word of its first argument, the flags
        (_JSET, 0, 1, CLONE_NEWUSER),  # 9
        (_RET, 0, 0, _RET_ERRNO | 1),  # 10: EPERM
        (_RET, 0, 0, _RET_ALLOW),  # 11
        (_RET, 0, 0, enosys),  # 12
    ]
    return b"".join(struct.pack("HBBI", *i) for i in ins)


class _Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class UserNamespaceFilter:
    """Built once in the runner (``problem`` says why it cannot be used here, "" when it can);
    ``install`` in the program's child, after ``PR_SET_NO_NEW_PRIVS``."""

    def __init__(self) -> None:
        code = _program()
        self.problem = "" if code is not None else f"no seccomp filter for {platform.machine()}"
        self._code = ctypes.create_string_buffer(code or b"")
        self._prog = _Fprog(len(code or b"") // 8, ctypes.addressof(self._code))
        self._libc = ctypes.CDLL(None, use_errno=True)
        if not self.problem:
            self.problem = self._probe()

    def install(self) -> None:
        rc = self._libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(self._prog), 0, 0)
        if rc != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"seccomp filter: {os.strerror(err)}")

    def _probe(self) -> str:
        """In a forked child: the filter installs, and then refuses a new user namespace."""
        pid = os.fork()
        if pid == 0:  # the runner has no threads yet: forking is safe
            code = 3
            try:
                self._libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS: needed without CAP_SYS_ADMIN
                self.install()
                code = 0 if self._libc.unshare(CLONE_NEWUSER) != 0 else 2
            except BaseException:
                code = 1
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        return {0: "", 1: "the kernel refused the seccomp filter", 2: "the filter did not hold"}.get(
            code, f"the probe failed ({code})"
        )
