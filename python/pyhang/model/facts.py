"""The questions the analysis may ask about one target, and who answers them.

The analysis drives (pyhang.analysis.gather): it asks for the target and its
threads, then only what it needs to know what each thread waits on.  A
question about threads or objects takes all of them at once (the TIDs, the
addresses) and answers in the same order: a collector in another process
answers a report in a handful of round trips, whatever the number of threads.
A collector answers: pyhang.native_facts.Collector, built from the parts
of gdb's (gdbext/pyhang_gdb/facts.py), the command line's (pyhang.gdb_pipe)
or the no-stop one (pyhang.nostop), through the native decoders.  Every answer is a
record, or lists of them, made once by the collector from the native
module's (or pyhang.procfs's) dicts: `target` (model.target_facts),
`python` (model.python_facts), `threads` (ThreadFacts and NativeFrame),
`locks`, `python_locks` and `frame_selves` (model.waits), `attributes` and
`frame_locals` (model.python_values), `object_names` and `references`
(model.references), `files` (model.files), `threading`
(model.threading_facts), `asyncio` (model.asyncio_facts), `fork_facts` and
`fork_containers` (model.fork_facts), `lock_objects` (model.lock_objects);
`words`, `syscall_memory`, `clock_now`, `proc_syscalls`, `thread_children` and
`source_lines` are plain numbers and strings.  `encode`/`decode` turn the records into
data and back.

`Recording` wraps any collector and keeps every answer, counting the
questions; saved as JSON (`to_dict`) it is a snapshot, and `Replay` answers
the same questions from it: a snapshot is analysed anywhere, with no gdb, no
target and no compiled module, by the same code that analysed the target.

A collector may not know an answer (a core has no fd table; a target without
Python state has no interpreter): it says so with the answer's own "not
known" (None, or the problem inside the answer), never by raising.
"""
from __future__ import annotations

import json

from pyhang.model.record import field, from_data, record, to_data
from pyhang.model.asyncio_facts import AsyncioState
from pyhang.model.files import FdObject
from pyhang.model.fork_facts import ForkContainers, ForkFacts
from pyhang.model.lock_objects import LockObject
from pyhang.model.python_facts import PythonState
from pyhang.model.python_values import FrameLocals, attributes_of
from pyhang.model.references import ObjectPath, ThreadReferences
from pyhang.model.target_facts import TargetFacts
from pyhang.model.report import NativeFrame, ThreadIssue, thread_issues
from pyhang.model.threading_facts import ThreadingState
from pyhang.model.waits import FrameSelf, LockIdentification, PythonLockWait

SNAPSHOT_SCHEMA = "pyhang-snapshot/2"

# Native frames per thread a report asks for when none is given; blocked
# threads are unwound deeper when a lock they wait on records no owner.
DEFAULT_NATIVE_DEPTH = 8

# Members of one container the `members` question reads at most.
MEMBERS_MAX = 4096


# The registers of frame 0 a ThreadFacts keeps: the system call (orig_rax) and its arguments (the futex
# word, op and expected value; what a thread parked in another call waits for: pyhang.analysis.syscalls),
# and fs_base, the thread's own struct pthread (x86_64 TLS), which tells which thread a pthread_join waits for.
FRAME0_REGISTERS = ("orig_rax", "rdi", "rsi", "rdx", "r10", "r8", "r9", "fs_base")


@record
class ThreadFacts:
    """One thread as the collector sees it: frame 0's registers and the pcs
    of its top native frames, symbolized."""
    num: int                      # the debugger's thread number
    tid: int                      # the LWP, as the target's own PID namespace numbers it
    name: str | None = None
    registers: dict[str, int] = field(default_factory=dict)   # frame 0: orig_rax, rdi, rsi, rdx, r10, r8, r9, fs_base
    frames: list[NativeFrame] = field(default_factory=list)   # frame 0 first
    problem: list[ThreadIssue] | None = None   # what could not be read about it
    unwound_by: str = "gdb"       # or "pyhang": who found registers and pcs
    host_tid: int | None = None   # the host's TID when the target's PID namespace gives another


class Facts:
    """What a collector answers.  Each method is one question; `QUESTIONS`
    lists them (a Recording keeps each answer under its name and arguments)."""

    QUESTIONS = ("target", "python", "threads", "locks", "python_locks", "words", "frame_selves", "attributes",
                 "members", "syscall_memory", "clock_now", "proc_syscalls", "thread_children", "files", "object_names",
                 "references",
                 "frame_locals", "threading", "asyncio", "fork_facts", "fork_containers", "lock_objects",
                 "source_lines")

    def target(self):
        """A TargetFacts (model.target_facts): what the target is (executable_problem: why its
        executable's file could not be read, None when it was), one entry per thing about it that
        could not be read or trusted, why glibc's lock layouts are unknown (None when known) and why
        the ones used need a caveat (None when they do not): the native LockReader's problem and
        caveat as model.waits.LayoutsIssue."""
        raise NotImplementedError

    def python(self):
        """The decoded interpreter (status, version, threads with their Python frames, GILs, warnings): a
        PythonState (model.python_facts) of the native Interpreter.state()."""
        raise NotImplementedError

    def threads(self, depth, tids=None):
        """[ThreadFacts] of every thread (or of the TIDs `tids`), `depth` native frames each, in the
        debugger's order."""
        raise NotImplementedError

    def locks(self, tids):
        """[[tid, LockIdentification]]: what the native lock identification says each thread sleeps
        on, from its registers and frames as `threads` last gave them (LockReader.identify, plus the
        `library` the address is in); its `kind` None when nothing."""
        raise NotImplementedError

    def python_locks(self, waits):
        """For each [tid, futex address] of `waits`, the threading object the thread sleeps on there
        (PythonLocks.wait) as a PythonLockWait, in order."""
        raise NotImplementedError

    def words(self, addresses):
        """The 32-bit value at each address (None where unreadable), in order."""
        raise NotImplementedError

    def frame_selves(self, tids):
        """[[tid, [FrameSelf]]]: `self` of each thread's innermost Python frames."""
        raise NotImplementedError

    def attributes(self, requests):
        """For each [address, names] of `requests`, those attributes of the object there
        (PythonLocks.attributes) as {name: ObjectValue or None} (model.python_values), in order."""
        raise NotImplementedError

    def members(self, addresses):
        """For each of `addresses`, the members of the set, frozenset, list or tuple there as
        [address] (at most MEMBERS_MAX; PythonLocks.members), None for another object, in order."""
        raise NotImplementedError

    def syscall_memory(self, requests):
        """For each [reader, args] of `requests`, the argument of a system call in target memory read
        by `reader` (pollfds, fd_set, timespec, timeval) at `args`, in order."""
        raise NotImplementedError

    def clock_now(self, clock):
        """The time on `clock` (ns) at the moment the target is seen; None for a core."""
        raise NotImplementedError

    def proc_syscalls(self, tids):
        """The call number the kernel records for each thread (/proc/PID/task/TID/syscall; None when
        not known), in order."""
        raise NotImplementedError

    def thread_children(self, tids):
        """The processes each thread made and has not reaped (/proc/PID/task/TID/children: the child a vfork
        waits for), in order; None for a thread (or all: a core) where not known."""
        raise NotImplementedError

    def files(self, fds):
        """[[fd, FdObject]] (model.files) of the fds from /proc (pyhang.fd_holders.files), or None when not known
        (a core)."""
        raise NotImplementedError

    def object_names(self, addresses):
        """[[address, ObjectPath]] (model.references): the variable that reaches each object
        (PythonLocks.object_names)."""
        raise NotImplementedError

    def references(self, addresses):
        """ThreadReferences (model.references): which threads reach the objects
        (PythonLocks.thread_references)."""
        raise NotImplementedError

    def frame_locals(self, frames):
        """For each [frame, code] of `frames`, its FrameLocals (model.python_values; PythonValues.frame_locals),
        in order."""
        raise NotImplementedError

    def threading(self):
        """threading's Thread objects (PythonLocks.threading()) as a ThreadingState
        (model.threading_facts), or None without Python state."""
        raise NotImplementedError

    def asyncio(self):
        """asyncio's tasks and loops (native asyncio_state()) as an AsyncioState (model.asyncio_facts), or None
        without Python state."""
        raise NotImplementedError

    def fork_facts(self, bases):
        """What a fork child inherited (native fork_facts()) as a ForkFacts (model.fork_facts), given the
        sorted struct pthread addresses of its threads; only its descriptor_issue when they cannot be read."""
        raise NotImplementedError

    def fork_containers(self):
        """ForkContainers (model.fork_facts): the large builtin containers among module globals."""
        raise NotImplementedError

    def lock_objects(self, addresses):
        """[LockObject] (model.lock_objects): what is at each address in this process (PythonLocks.lock_objects);
        [] without Python state."""
        raise NotImplementedError


    def source_lines(self, requests):
        """For each [file, line] of `requests`, that line of the file as the target sees it (a live
        process's root, a core's sysroot: pyhang.sources), trailing white space off and cut when long;
        None where the file or the line cannot be read, in order."""
        raise NotImplementedError


# The questions answered by one record (or None), by its class.
RECORD_ANSWERS = {"target": TargetFacts, "python": PythonState, "threading": ThreadingState, "asyncio": AsyncioState, "fork_facts": ForkFacts,
                  "fork_containers": ForkContainers, "references": ThreadReferences}
# The questions answered by a list of records (or None), by their class.
RECORD_LISTS = {"lock_objects": LockObject, "frame_locals": FrameLocals}
# The questions answered by a list of [key, record] (or None), by the records' class.
RECORD_PAIRS = {"object_names": ObjectPath, "files": FdObject}


def encode(question, answer):
    """`answer` as data json.dumps takes (with `default=frame_sequence`)."""
    if question in RECORD_ANSWERS or question in RECORD_LISTS or question in RECORD_PAIRS or question == "attributes":
        return to_data(answer)
    if question == "threads":
        return [_thread_dict(t) for t in answer]
    if question == "locks" and answer is not None:
        return [[tid, to_data(found)] for tid, found in answer]
    if question == "python_locks" and answer is not None:
        return [to_data(wait) for wait in answer]
    if question == "frame_selves" and answer is not None:
        return [[tid, to_data(frames)] for tid, frames in answer]
    return answer


def decode(question, data):
    """The answer `encode` made `data` from."""
    if question in RECORD_ANSWERS:
        return from_data(RECORD_ANSWERS[question], data)
    if question in RECORD_LISTS and data is not None:
        return [from_data(RECORD_LISTS[question], d) for d in data]
    if question == "threads":
        return [_thread_from(d) for d in data]
    if question == "locks" and data is not None:
        return [[tid, from_data(LockIdentification, found or {})] for tid, found in data]
    if question == "python_locks" and data is not None:
        return [from_data(PythonLockWait, wait) for wait in data]
    if question == "frame_selves" and data is not None:
        return [[tid, [frame_self(f) for f in frames or ()]] for tid, frames in data]
    if question == "attributes" and data is not None:
        return [attributes_of(d) for d in data]
    if question in RECORD_PAIRS and data is not None:
        return [[key, from_data(RECORD_PAIRS[question], value)] for key, value in data]
    return data


def frame_self(d):
    """The FrameSelf of its data (a snapshot's; the native module makes the record itself): made by hand, as
    one is made for each of the innermost frames of every waiting thread."""
    get = d.get
    return FrameSelf(get("index", 0), get("object"), get("type"), get("function") or "", get("file") or "",
                     get("line") or 0)


def frame_sequence(value):
    """A sequence of the native module's own (Frames) as JSON's list: the
    json encoder's `default`, so that its C encoder converts each on its way."""
    return list(value)


def frame_dict(f):
    return {"pc": f.pc, "function": f.function, "library": f.library, "offset": f.offset,
            **({"from_debug_file": True} if f.from_debug_file else {})}


def frame_from(d):
    return NativeFrame(pc=d["pc"], function=d.get("function"), library=d.get("library"), offset=d.get("offset", 0),
                       from_debug_file=bool(d.get("from_debug_file", False)))


def _thread_dict(t):
    return {"num": t.num, "tid": t.tid, "name": t.name, "registers": dict(t.registers),
            "frames": [frame_dict(f) for f in t.frames], "problem": to_data(t.problem),
            "unwound_by": t.unwound_by, "host_tid": t.host_tid}


def _thread_from(d):
    return ThreadFacts(num=d["num"], tid=d["tid"], name=d.get("name"),
                       registers={k: int(v) for k, v in (d.get("registers") or {}).items()},
                       frames=[frame_from(f) for f in d.get("frames") or []], problem=thread_issues(d.get("problem")),
                       unwound_by=d.get("unwound_by", "gdb"), host_tid=d.get("host_tid"))


def _key(question, args):
    return json.dumps([question, list(args)], separators=(",", ":"), default=frame_sequence)


def _asker(question):
    def ask(self, *args):
        return self._ask(question, *args)
    ask.__name__ = question
    ask.__doc__ = getattr(Facts, question).__doc__
    return ask


def asking(cls):
    """A Facts class whose every question is its `_ask(question, *args)`."""
    for question in Facts.QUESTIONS:
        setattr(cls, question, _asker(question))
    return cls


@asking
class Recording(Facts):
    """Asks `source` and keeps every answer (each question once: a repeated
    one is answered from the record), counting the questions that reached
    `source`."""

    def __init__(self, source):
        self.source = source
        self.answers = {}   # _key → (question, args, answer)
        self.asked = {}     # question → how many reached the source

    def _ask(self, question, *args):
        key = _key(question, args)
        if key not in self.answers:
            self.asked[question] = self.asked.get(question, 0) + 1
            self.answers[key] = (question, args, getattr(self.source, question)(*args))
        return self.answers[key][2]

    def dumps(self, options=None):
        """The snapshot as JSON text: every answer, and the `options` the
        analysis was run with (it asks the same questions again with them)."""
        return json.dumps({"schema": SNAPSHOT_SCHEMA, "options": dict(options or {}),
                           "answers": [[q, list(args), encode(q, a)] for q, args, a in self.answers.values()]},
                          separators=(",", ":"), default=frame_sequence)

    def to_dict(self, options=None):
        """The snapshot as JSON data (dumps(), parsed)."""
        return json.loads(self.dumps(options))


@asking
class Replay(Facts):
    """Answers from a Recording's to_dict(); a question it holds no answer
    for is answered as not known (None)."""

    def __init__(self, document):
        if document.get("schema") != SNAPSHOT_SCHEMA:
            raise ValueError("not a %s document (schema %r)" % (SNAPSHOT_SCHEMA, document.get("schema")))
        self.answers = {}
        for question, args, data in document.get("answers") or []:
            if question in Facts.QUESTIONS:
                self.answers[_key(question, args)] = decode(question, data)
        self.options = dict(document.get("options") or {})
        self.unanswered = []   # questions asked that the snapshot holds no answer for

    def _ask(self, question, *args):
        key = _key(question, args)
        if key not in self.answers:
            self.unanswered.append(key)
            return None
        return self.answers[key]
