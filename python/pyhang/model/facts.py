"""The questions the analysis may ask about one target, and who answers them.

The analysis drives (pyhang.analysis.gather): it asks for the target and its
threads, then for each thread only what it needs to know what the thread
waits on.  A collector answers: gdb's (gdbext/pyhang_gdb/facts.py) from a
stopped process or a core through gdb and the native decoders.  Every answer
is plain data: JSON's types, except the records `threads` gives (ThreadFacts,
NativeFrame), which `encode`/`decode` turn into dicts and back.

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

from pyhang.model.record import field, record
from pyhang.model.report import NativeFrame

SNAPSHOT_SCHEMA = "pyhang-snapshot/2"


@record
class ThreadFacts:
    """One thread as the collector sees it: frame 0's registers and the pcs
    of its top native frames, symbolized."""
    num: int                      # the debugger's thread number
    tid: int                      # the LWP, as the target's own PID namespace numbers it
    name: str | None = None
    registers: dict[str, int] = field(default_factory=dict)   # frame 0: orig_rax, rdi, rsi, rdx, r10, r8, r9, fs_base
    frames: list[NativeFrame] = field(default_factory=list)   # frame 0 first
    problem: str | None = None
    unwound_by: str = "gdb"       # or "pyhang": who found registers and pcs
    host_tid: int | None = None   # the host's TID when the target's PID namespace gives another


class Facts:
    """What a collector answers.  Each method is one question; `QUESTIONS`
    lists them (a Recording keeps each answer under its name and arguments)."""

    QUESTIONS = ("target", "python", "threads", "lock", "python_lock", "word", "frame_selves", "attributes",
                 "syscall_memory", "clock_now", "proc_syscall", "files", "object_names", "references",
                 "frame_locals", "threading", "asyncio", "fork_facts", "fork_containers", "lock_objects")

    def target(self):
        """{kind, pid, core, executable, namespace_pid, parent_pid, warnings, lock_problem}: what the
        target is, one line per thing about it that could not be read or trusted, and why glibc's lock
        layouts are unknown (None when known)."""
        raise NotImplementedError

    def python(self):
        """The decoded interpreter: the native Interpreter.state() dict (status, version, threads with
        their Python frames, GILs, warnings)."""
        raise NotImplementedError

    def threads(self, depth, tids=None):
        """[ThreadFacts] of every thread (or of the TIDs `tids`), `depth` native frames each, in the
        debugger's order."""
        raise NotImplementedError

    def lock(self, tid):
        """What the native lock identification says thread `tid` sleeps on, from its registers and
        frames as `threads` last gave them (LockReader.identify, plus the `library` the address is
        in); {} when nothing."""
        raise NotImplementedError

    def python_lock(self, tid, futex):
        """The threading object thread `tid` sleeps on at futex address `futex` (PythonLocks.wait)."""
        raise NotImplementedError

    def word(self, address):
        """The 32-bit value at `address`, or None when unreadable."""
        raise NotImplementedError

    def frame_selves(self, tid):
        """[{index, self, type, function, file, line}] of the innermost Python frames of `tid`."""
        raise NotImplementedError

    def attributes(self, address, names):
        """The attributes `names` of the object at `address` (PythonLocks.attributes)."""
        raise NotImplementedError

    def syscall_memory(self, reader, args):
        """The argument of a system call in target memory, read by `reader` (pollfds, fd_set,
        timespec, timeval) at `args`."""
        raise NotImplementedError

    def clock_now(self, clock):
        """The time on `clock` (ns) at the moment the target is seen; None for a core."""
        raise NotImplementedError

    def proc_syscall(self, tid):
        """The call number the kernel records for `tid` (/proc/PID/task/TID/syscall), or None."""
        raise NotImplementedError

    def files(self, fds):
        """[[fd, object]] of the fds from /proc (pyhang.procfs.files), or None when not known (a core)."""
        raise NotImplementedError

    def object_names(self, addresses):
        """[[address, path]]: the variable that reaches each object (PythonLocks.object_names)."""
        raise NotImplementedError

    def references(self, addresses):
        """{"by_object": [[address, [{tid, ...}]]], "complete": bool}: which threads reach the objects
        (PythonLocks.thread_references)."""
        raise NotImplementedError

    def frame_locals(self, frame, code):
        """{"locals": [...], "problem": str or None} of one Python frame (PythonValues.frame_locals)."""
        raise NotImplementedError

    def threading(self):
        """threading's Thread objects (PythonLocks.threading()), or None without Python state."""
        raise NotImplementedError

    def asyncio(self):
        """asyncio's tasks and loops (native asyncio_state()), or None without Python state."""
        raise NotImplementedError

    def fork_facts(self, bases):
        """What a fork child inherited (native fork_facts()), given the sorted struct pthread
        addresses of its threads; {"descriptor_problem": why} when they cannot be read."""
        raise NotImplementedError

    def fork_containers(self):
        """{containers, problems}: the large builtin containers among module globals."""
        raise NotImplementedError

    def lock_objects(self, addresses):
        """What is at each address in this process (PythonLocks.lock_objects); [] without Python state."""
        raise NotImplementedError


def encode(question, answer):
    """`answer` as JSON data."""
    if question == "threads":
        return [_thread_dict(t) for t in answer]
    return _plain(answer)


def decode(question, data):
    """The answer `encode` made `data` from."""
    if question == "threads":
        return [_thread_from(d) for d in data]
    return data


def _plain(value):
    """Sequences as lists, mappings as dicts, all the way down (the native
    module gives some answers as sequences of its own)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    return [_plain(v) for v in value]


def frame_dict(f):
    return {"pc": f.pc, "function": f.function, "library": f.library, "offset": f.offset,
            **({"from_debug_file": True} if f.from_debug_file else {})}


def frame_from(d):
    return NativeFrame(pc=d["pc"], function=d.get("function"), library=d.get("library"), offset=d.get("offset", 0),
                       from_debug_file=bool(d.get("from_debug_file", False)))


def _thread_dict(t):
    return {"num": t.num, "tid": t.tid, "name": t.name, "registers": dict(t.registers),
            "frames": [frame_dict(f) for f in t.frames], "problem": t.problem, "unwound_by": t.unwound_by,
            "host_tid": t.host_tid}


def _thread_from(d):
    return ThreadFacts(num=d["num"], tid=d["tid"], name=d.get("name"),
                       registers={k: int(v) for k, v in (d.get("registers") or {}).items()},
                       frames=[frame_from(f) for f in d.get("frames") or []], problem=d.get("problem"),
                       unwound_by=d.get("unwound_by", "gdb"), host_tid=d.get("host_tid"))


def _key(question, args):
    return json.dumps([question, _plain(list(args))], separators=(",", ":"))


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

    def to_dict(self, options=None):
        """The snapshot: every answer, and the `options` the analysis was run
        with (it asks the same questions again with them)."""
        return {"schema": SNAPSHOT_SCHEMA, "options": dict(options or {}),
                "answers": [[q, _plain(list(args)), encode(q, a)] for q, args, a in self.answers.values()]}


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


def _asker(question):
    def ask(self, *args):
        return self._ask(question, *args)
    ask.__name__ = question
    ask.__doc__ = getattr(Facts, question).__doc__
    return ask


for _q in Facts.QUESTIONS:
    setattr(Recording, _q, _asker(_q))
    setattr(Replay, _q, _asker(_q))
