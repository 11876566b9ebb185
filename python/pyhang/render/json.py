"""The "pyhang-report/1" JSON document of a report (docs/json-contract.md;
validated against docs/pyhang-report-1.schema.json by the tests).  Keys may
be added, never renamed."""
import json

from pyhang import SCHEMA, VERSION
from pyhang.model.kinds import DeadlockKind
from pyhang.render import recursion
from pyhang.render.asyncio import asyncio_json, deadlock_json
from pyhang.render.forks import hazard_json
from pyhang.render.gc import report_gc_json, thread_gc_json
from pyhang.render.glibc import layouts_text
from pyhang.model.kinds import ThreadState, Unread, WaitKind
from pyhang.render.locks import evidence, summary
from pyhang.render.names import object_name, thread_problem
from pyhang.model.waits import syscall_of
from pyhang.model.record import fields_of, to_data
from pyhang.render.syscalls import syscall_json
from pyhang.render.target import object_problem_text
from pyhang.render.names import lock_text
from pyhang.render.text import edge_evidence, names_of, warnings
from pyhang.render.account import look_problem_text
from pyhang.render.verdicts import deadlock_advice, headline, verdict_advice, verdict_text
from pyhang.render.unread import unread_text



def _named(entry):
    """An entry of a verdict's list as JSON, the object it names worded: a wait's record (owners-unknown, idle),
    a held-across-sleep verdict's lock, or a dict (the facts of a kind this pyhang does not know); an entry
    naming none as it is."""
    if isinstance(entry, dict):
        return dict(entry, name=object_name(entry["name"])) if entry.get("name") else entry
    data = to_data(entry)
    if getattr(entry, "name", None):
        data["name"] = object_name(entry.name)
    return data


def verdict_facts(facts):
    """A verdict's facts (model.verdict_facts) as JSON, with the objects they name worded
    (render.names.object_name)."""
    out = fields_of(facts) if not isinstance(facts, dict) else dict(facts)
    if out.get("name"):
        out["name"] = object_name(out["name"])
    if out.get("unread") == Unread.LOCK_LAYOUTS:   # incomplete: why the layouts are not known, worded
        out["problem"] = layouts_text(out.get("problem"))
    for key in ("waits", "locks"):   # owners-unknown, idle: the object of each wait; held-across-sleep: each lock
        if isinstance(out.get(key), list):
            out[key] = [_named(w) for w in out[key]]
    # the records the rest hold as their data (a frame's CodeLine, a list's entries)
    return {key: to_data(value) for key, value in out.items()}


def _c_call(c):
    if c is None:
        return None
    return {"function": c.function, "repr": c.repr, "type": c.type, "confidence": c.confidence, "address": c.address}


def _python_frame(f, native_frame=None):
    d = {"function": f.function, "file": f.file, "line": f.line, "source": f.source,
         "end_line": f.end_line, "col": f.col, "end_col": f.end_col, "c_call": _c_call(f.c_call)}
    if native_frame is not None:  # report --merged
        d["native_frame"] = native_frame
    if f.signal is not None:  # a signal handler
        d["signal"] = f.signal
    if f.locals is not None:  # report --locals
        d["locals"] = [{"name": v.name, "kind": v.kind, "type": v.type, "repr": v.repr, "address": v.address}
                       for v in f.locals]
        if f.locals_problem:
            d["locals_problem"] = unread_text(f.locals_problem)
    return d


def _native_frame_at(th, merged):
    """{Python frame index: the native frame that runs it} (report --merged), else {}."""
    return {k: n for n, ks in th.python_at.items() for k in ks} if merged else {}


def _python_frames(th, merged):
    at = _native_frame_at(th, merged)
    return [_python_frame(f, at.get(k)) for k, f in enumerate(th.python_frames)]


# json.dumps(value, separators=(",", ":"), check_circular=False), without
# making an encoder per call: thousands of calls per report.
_compact = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode


def _compact_python_frames(th, merged, seen):
    """json.dumps(_python_frames(th, merged)) in the compact form.  A stack
    repeats the same frames (recursion, threads running the same code), so
    each distinct frame without locals is encoded once: `seen` keeps them;
    and the workers of a pool share whole stacks (frames shared by
    python_frames(shared=True)), each encoded once too."""
    at = _native_frame_at(th, merged)
    stack = None
    if not at:
        stack = ("stack",) + tuple(map(id, th.python_frames))
        text = seen.get(stack)
        if text is not None:
            return text
    parts = []
    for k, f in enumerate(th.python_frames):
        native_frame = at.get(k)
        if f.locals is not None:
            parts.append(_compact(_python_frame(f, native_frame)))
            continue
        # Frames without locals are often one shared object (python_frames(shared=True)).
        key = id(f) if native_frame is None else (f.function, f.file, f.line, f.col, f.end_col, f.end_line,
                                                  f.source, f.c_call, native_frame)
        text = seen.get(key)
        if text is None:
            text = seen[key] = _compact(_python_frame(f, native_frame))
        parts.append(text)
    text = "[" + ",".join(parts) + "]"
    if stack is not None and all(f.locals is None for f in th.python_frames):
        seen[stack] = text
    return text


def _recursion(th):
    """The python_recursion of a thread's stack: each run of frames repeated in a row (render.recursion), as
    {"start", "period", "repeats"} indices into python_frames."""
    o = th.python_frames_omitted
    return [{"start": r.start, "period": r.period, "repeats": r.repeats}
            for r in recursion.stack_runs(th.python_frames, o.at if o is not None else None)]


def _omitted_at(th):
    return th.python_frames_omitted.at if th.python_frames_omitted is not None else None


def _omitted(th):
    o = th.python_frames_omitted
    return None if o is None else {"at": o.at, "count": o.count}


def _compact_folds(th, seen):
    """The compact python_recursion and python_frames_omitted of a thread, ',' joined; a stack that is
    another thread's (the same frame objects) is folded once (`seen` keeps it)."""
    key = ("folds", _omitted_at(th)) + tuple(map(id, th.python_frames))
    text = seen.get(key)
    if text is None:
        text = seen[key] = _compact(_recursion(th))
    return "\"python_recursion\":%s,\"python_frames_omitted\":%s" % (text, _compact(_omitted(th)))


def _blocked(b, names):
    if b is None:
        return None
    return {"kind": b.kind, "address": b.address, "name": object_name(b.name), "library": b.library, "owners": list(b.owners),
            "owner_source": b.owner_source, "owner_alive": b.owner_alive, "detail": summary(b, names),
            "confidence": b.confidence, "evidence": evidence(b), **_syscall(b)}


def _syscall(b):
    """The system call facts of a "syscall" wait (docs/json-contract.md)."""
    if b.kind != WaitKind.SYSCALL:
        return {}
    return {"syscall": syscall_json(syscall_of(b))}


def _edge(e, waits):
    """`waits`: {TID: its BlockedOn}, for the evidence of an edge that is the waiter's own wait."""
    return {"waiter": e.waiter, "kind": e.kind, "address": e.address, "owner": e.owner, "source": e.source,
            "evidence": edge_evidence(e, waits.get(e.waiter)),
            "facts": to_data(e.facts) if e.facts is not None else {}}   # (model.edge_facts: a record's, in order)


def _deadlock(report, d, waits):
    out = {"threads": list(d.threads), "confidence": d.confidence, "edges": [_edge(e, waits) for e in d.edges],
           "advice": deadlock_advice(d)}
    if d.kind == DeadlockKind.AWAIT:   # thread cycles keep the keys they always had
        out.update(deadlock_json(report, d))
    elif d.component is not None:
        out["component"] = dict(d.component)
    return out


def _thread_head(th):
    """A thread's keys before "python_frames", in the contract's order."""
    return {"tid": th.tid, "host_tid": th.host_tid, "gdb_num": th.gdb_num, "name": th.name,
            "python_name": th.python_name, "gil": th.gil, "interpreter": th.interpreter}


def _native_frames(th):
    return [{"function": f.function, "library": f.library, "pc": f.pc, "offset": f.offset} for f in th.native_frames]


def _account(th):
    """A thread's class in the closed-world account (docs/json-contract.md), None when none was made."""
    a = th.account
    if a is None:
        return None
    return {"state": a.state, "reason": a.reason, "finding": a.finding, "threads": list(a.threads),
            "pids": list(a.pids)}


def _moved(th):
    """What a second look saw move of the thread ([] nothing), None when no second look was taken."""
    return None if th.moved is None else list(th.moved)


def _second_look(report):
    look = report.second_look
    if look is None:
        return None
    return {"interval": look.interval, "problem": look_problem_text(look) if look.problem is not None else None,
            "moved": [t.tid for t in report.threads if t.moved],
            "no_progress": [t.tid for t in report.threads if t.moved == [] and t.blocked_on is not None]}


def _account_counts(report):
    """{class: number of threads} of the closed-world account, in ThreadState.ALL's order, a class with none
    left out."""
    found = {}
    for t in report.threads:
        if t.account is not None:
            found[t.account.state] = found.get(t.account.state, 0) + 1
    return {s: found[s] for s in ThreadState.ALL if s in found}


def _thread_tail(th, names):
    """A thread's keys after "python_frames"."""
    return {"native_frames": _native_frames(th), "blocked_on": _blocked(th.blocked_on, names), "problem": thread_problem(th),
            "gc": thread_gc_json(th), "account": _account(th), "moved": _moved(th), "exiting": th.exiting}


def _thread(th, names, python_frames):
    return {**_thread_head(th), "python_frames": python_frames, "python_recursion": _recursion(th),
            "python_frames_omitted": _omitted(th), **_thread_tail(th, names)}


def _compact_native_frames(th, seen):
    """json.dumps(_native_frames(th)) in the compact form: the threads of a
    pool stop at the same return addresses, each such stack encoded once
    (`seen` keeps them)."""
    stack = ("native",) + tuple((f.function, f.library, f.pc, f.offset) for f in th.native_frames)
    text = seen.get(stack)
    if text is None:
        text = seen[stack] = _compact(_native_frames(th))
    return text


def _compact_thread(th, names, merged, seen):
    """_compact(_thread(...)), put together from the encodings of its parts:
    the thread's Python frames (_compact_python_frames) and native frames
    (_compact_native_frames) are often another thread's too."""
    tail = {"blocked_on": _blocked(th.blocked_on, names), "problem": thread_problem(th), "gc": thread_gc_json(th),
            "account": _account(th), "moved": _moved(th), "exiting": th.exiting}
    return "%s,\"python_frames\":%s,%s,\"native_frames\":%s,%s" % (
        _compact(_thread_head(th))[:-1], _compact_python_frames(th, merged, seen), _compact_folds(th, seen),
        _compact_native_frames(th, seen), _compact(tail)[1:])   # (the tail's keys in one encoding)


def proc_record_json(s):
    """A core's record of /proc (ProcSummary `s`) in the report."""
    return {"schema": s.schema, "fds": s.fds, "threads": s.threads, "environment": dict(sorted(s.environment.items())),
            "children": [{"pid": c.pid, "state": c.state, "comm": c.comm, "exit_status": c.exit_status}
                         for c in s.children]}


def to_json(report, merged=False, threads=True) -> dict:
    """The report as a tree of fresh dicts and lists (`threads` False: an
    empty list of threads, for dumps() to fill)."""
    t = report.target
    names = names_of(report)
    waits = {th.tid: th.blocked_on for th in report.threads}
    doc = {
        "schema": SCHEMA,
        "pyhang_version": VERSION,
        "headline": headline(report),
        "target": {"kind": t.kind, "pid": t.pid, "core": t.core, "executable": t.executable,
                   "python_version": t.python_version, "namespace_pid": t.namespace_pid,
                   "executable_problem": object_problem_text(t.executable_problem) if t.executable_problem else None},
        "threads": [_thread(th, names, _python_frames(th, merged)) for th in report.threads] if threads else [],
        "gil": {"locked": report.gil.locked, "holder_tid": report.gil.holder_tid,
                "waiters": list(report.gil.waiters)},
        "gc": report_gc_json(report),
        "deadlocks": [_deadlock(report, d, waits) for d in report.deadlocks],
        "edges": [_edge(e, waits) for e in report.edges],
        "fork_hazards": [hazard_json(h, names, report) for h in report.fork_hazards],
        "verdicts": [{"kind": v.kind, "threads": list(v.threads), "text": verdict_text(v, names),
                      "advice": verdict_advice(v, report), "facts": verdict_facts(v.facts)}
                     for v in report.verdicts],
        "warnings": warnings(report),
        "account": _account_counts(report),
        "second_look": _second_look(report),
        "children": None if report.children is None else list(report.children),
        "exit_status": report.exit_status,
    }
    if t.proc_record is not None:    # a core pyhang gcore made: what its record of /proc holds
        doc["target"]["proc_record"] = proc_record_json(t.proc_record)
    if report.asyncio is not None:   # collected (snapshots recorded before asyncio was read have none)
        doc["asyncio"] = asyncio_json(report, names, lock_text)
    return doc


def pieces(report, merged=False):
    """The compact line of dumps() in pieces, one per thread, to be written in
    turn: a report of thousands of threads is never held whole as text."""
    names = names_of(report)
    doc = to_json(report, merged, threads=False)
    keys = list(doc)
    at = keys.index("threads")
    yield _compact({k: doc[k] for k in keys[:at]})[:-1] + ',"threads":['
    seen = {}
    for n, th in enumerate(report.threads):
        yield ("," if n else "") + _compact_thread(th, names, merged, seen)
    yield "]," + _compact({k: doc[k] for k in keys[at + 1:]})[1:]


def dumps(report, pretty=False, merged=False):
    """One line (the C encoder; no cycle to check in a fresh tree), or indented for people;
    `merged`: each Python frame names the native frame that runs it (`native_frame`).
    The line is json.dumps(to_json(...)) in the compact form, put together
    from its parts (pieces()): thousands of threads repeat the same Python frames."""
    if pretty:
        return json.dumps(to_json(report, merged), indent=1, check_circular=False)
    return "".join(pieces(report, merged))
