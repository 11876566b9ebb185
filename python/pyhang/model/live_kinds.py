"""The vocabularies of looking at a live process: how the kernel records
each of its threads when nobody stopped it (ParkState: the native name
table's names, /proc/PID/task/TID/syscall as pyhang.nostop reads it), how a
watch of it ended (WatchEnd, pyhang.watch), why pyhang's own stop of it
failed (StopProblem, pyhang.stopped), and where pyhang's unwinder ends a
native stack (UnwindStop)."""


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


class StopProblem:
    """Why pyhang could not stop a live process itself (the native StopProblem: ProcessStop.problem)."""
    NO_PROCESS = "no-process"         # no such process, or it exited while being stopped
    NOT_PERMITTED = "not-permitted"   # ptrace refused: another tracer, Yama's ptrace_scope, another user's process
    FAILED = "failed"                 # another error of ptrace or /proc (its errno)


class UnwindStop:
    """Why pyhang's unwinder ended a native stack (the native Stop: Unwinder.unwind's second item)."""
    END = "end"                       # the outermost frame
    DEPTH = "depth"                   # as many frames as asked for
    NO_CFI = "no-cfi"                 # a pc in no mapped file, or no call-frame information covers it
    UNREADABLE = "unreadable"         # stack memory, a register or call-frame information could not be read
    UNSUPPORTED = "unsupported"       # call-frame information this unwinder does not handle
    BAD_FRAME = "bad-frame"           # a stack that makes no sense (no progress, a cycle)
    REGISTER_UNKNOWN = "register-unknown"   # a rule needs a register no record or frame gave
    COMPLETE = (END, DEPTH)           # after these, the pcs read are all there is to have
