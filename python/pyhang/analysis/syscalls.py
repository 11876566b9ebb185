"""x86_64 system calls a blocked thread typically sleeps in.  A thread
stopped inside a system call has its number in orig_rax (-1 otherwise)."""

FUTEX = 202

BLOCKING = {
    0: "read", 7: "poll", 23: "select", 34: "pause", 35: "nanosleep", 43: "accept", 45: "recvfrom",
    47: "recvmsg", 61: "wait4", 202: "futex", 230: "clock_nanosleep", 232: "epoll_wait", 247: "waitid",
    270: "pselect6", 271: "ppoll", 281: "epoll_pwait", 288: "accept4", 299: "recvmmsg", 441: "epoll_pwait2",
}


def in_syscall(registers):
    """The system call number a thread is stopped in, or None."""
    nr = registers.get("orig_rax")
    if nr is None or nr >= 1 << 63 or nr == 0xFFFFFFFFFFFFFFFF:
        return None
    return nr


def name(nr):
    return BLOCKING.get(nr, "syscall %d" % nr)


def futex_address(registers):
    """The futex word a thread sleeps on, when it is in futex(2)."""
    if in_syscall(registers) == FUTEX:
        return registers.get("rdi")
    return None
