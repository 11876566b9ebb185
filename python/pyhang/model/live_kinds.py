"""The vocabularies of looking at a live process without stopping it: how
the kernel records each of its threads (ParkState: the native name table's
names, /proc/PID/task/TID/syscall as pyhang.nostop reads it), and how a watch
of it ended (WatchEnd, pyhang.watch)."""


class ParkState:
    """What /proc/PID/task/TID/syscall says of a thread nobody stopped (the native ParkState)."""
    IN_CALL = "in-call"         # in a system call: its number, arguments, stack pointer and pc
    BLOCKED = "blocked"         # stopped outside a call (a fault, a signal): stack pointer and pc only
    RUNNING = "running"         # on a CPU: no registers
    GONE = "gone"               # the thread (or the process) is no more
    UNREADABLE = "unreadable"   # the record could not be read (permission)
    GARBLED = "garbled"         # a record of no form pyhang knows


class WatchEnd:
    """How `pyhang watch` ended (pyhang.watch.WatchOutcome.end)."""
    EXITED = "exited"         # the process ended (or is a zombie)
    LIMIT = "limit"           # --for's seconds passed: every report on the way let the watch go on
    PROBLEM = "problem"       # a report named a problem: the watch ends with it and its exit status
    NOT_READ = "not-read"     # a report could not be taken (the process could not be read)
    INTERRUPTED = "interrupted"   # the user interrupted it (^C)
    ALL = (EXITED, LIMIT, PROBLEM, NOT_READ, INTERRUPTED)
