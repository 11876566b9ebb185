"""gRPC client calls waiting for their server.

A blocking gRPC call (a unary call, `channel.unary_unary(...)(request)`,
or a stream-unary one) runs `_blocking` in grpc/_channel.py, which sleeps
in cygrpc's `next_event`: the calling thread polls its completion queue
(epoll_wait on gRPC's epoll instance, with a 200 ms timeout so that it can
look for a KeyboardInterrupt), or sleeps on gRPC's condition variable while
another thread of the process polls.  Read as a system call, that is an idle
timed poll; it is a wait for the server's answer, which ends only when the
server answers (or the call's deadline passes, when it was given one).
A future's result() and a response stream's next() wait in grpc/_common.py's
`wait`, a Condition.wait of 100 ms at a time, as timed as the poll.

Named from what the program holds: the call from the frame (its function
and file), whether it has a deadline from the frame's `timeout` argument; the channel's connections
from the epoll instance the thread polls (/proc/PID/fdinfo: the fds it
watches), the TCP or unix sockets among them, with the processes holding
their other ends on this machine (fd_holders.files, as for any socket wait).
A call with a deadline ends by itself: it stays what its native wait is.
"""
from pyhang.analysis import syscalls
from pyhang.model.files import endpoint
from pyhang.model.kinds import AccountReason, Confidence, OwnerSource, ThreadState, WaitKind
from pyhang.model.report import BlockedOn
from pyhang.model.verdict_facts import GrpcTargets, ProcessPeer, ProcessWait
from pyhang.model.waits import GrpcCallDetail, syscall_of

CHANNEL_FILE = "grpc/_channel.py"
# The frames of grpc/_channel.py a blocking call waits in (co_name, and the qualified name from 3.11).
CALL_FUNCTIONS = ("_blocking", "_UnaryUnaryMultiCallable._blocking", "_StreamUnaryMultiCallable._blocking")
CALL_DEPTH = 2          # innermost Python frames looked at: the call frame calls next_event (C) directly
COMMON_FILE = "grpc/_common.py"
COMMON_WAIT = "wait"    # grpc._common.wait: Condition.wait(timeout=0.1) until the rendezvous is done
WAIT_DEPTH = 4          # Condition.wait, _wait_once, wait: the channel's frame is next
DEADLINE_ATTRIBUTE = "_deadline"   # a rendezvous's deadline (a float of time.time()), None for none
# Native waits of a call: gRPC's poller (epoll, or poll on older engines), or its condition variable (a bare
# futex where glibc's layouts are unknown) while another thread polls; a future's or a stream's wait sleeps on
# its rendezvous's threading.Condition, which the channel's own thread notifies when the answer comes.
POLLS = ("epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll")
SLEEPS = (WaitKind.CONDVAR, WaitKind.FUTEX, WaitKind.PY_CONDITION)


SERVER_FILE = "grpc/_server.py"
# The frames of grpc/_server.py that run a method's handler in the server's thread pool: a request in flight.
HANDLER_FUNCTIONS = ("_unary_response_in_pool", "_stream_response_in_pool")


def serving(t):
    """The frame of `t` (a ThreadReport) that runs a gRPC server's handler, or None: a thread there serves a
    request whose client waits for the answer, so that its wait is never idle (analysis.idle)."""
    return next((f for f in t.python_frames if f.function in HANDLER_FUNCTIONS and
                 (f.file or "").replace("\\", "/").endswith(SERVER_FILE)), None)


def _in(file, path):
    return (file or "").replace("\\", "/").endswith(path)


def call_frames(keys):
    """(index of the frame of grpc/_channel.py the call waits in, index of grpc/_common.py's `wait` below it or
    None) among a thread's innermost frames (`keys`: view.frame_keys), or None: a blocking call's `_blocking`,
    or a future's result() or a stream's next() waiting in _common.wait (a Condition.wait of 100 ms at a time)."""
    for i, (function, file, *_) in enumerate(keys[:CALL_DEPTH]):
        if function in CALL_FUNCTIONS and _in(file, CHANNEL_FILE):
            return i, None
    for i, (function, file, *_) in enumerate(keys[:WAIT_DEPTH]):
        if function == COMMON_WAIT and _in(file, COMMON_FILE) and i + 1 < len(keys) and _in(keys[i + 1][1], CHANNEL_FILE):
            return i + 1, i
    return None


def _timeout(locals_):
    """The repr of the `timeout` local of a frame's locals ({name: LocalValue}), None for none or not found."""
    v = locals_.get("timeout")
    return None if v is None or v.repr == "None" else v.repr


def add_calls(facts, view, threads):
    """ThreadSnapshot.grpc_call of each thread in a gRPC client call: {"deadline", "frame"}: `_blocking`'s
    `timeout` argument, or for a future's or a stream's wait its rendezvous's `_deadline` (the call frame's
    `self`) and the wait's own `timeout` (result(timeout=...)); a deadline that cannot be read counts as none
    (the wait is then never taken for idle).  (The method is bytes, `self._method`, which the attribute
    reader does not decode.)"""
    waiting = [(t, call_frames(view.frame_keys(t.tid))) for t in threads]
    waiting = [(t, [view.frames(t.tid)[i] for i in found if i is not None]) for t, found in waiting if found]
    if not waiting:
        return
    asked = [f for _, frames in waiting for f in frames]
    answers = iter(facts.frame_locals([[f.frame, f.code] for f in asked]) or [None] * len(asked))
    selves = []
    for t, frames in waiting:
        found = [{v.name: v for v in (fl.locals if fl is not None else ())} for fl in (next(answers, None)
                                                                                     for _ in frames)]
        call = frames[0]
        t.grpc_call = {"frame": {"function": call.function, "file": call.file, "line": call.line},
                       # None: no deadline (it waits until the server answers); else the timeout's repr
                       "deadline": next((x for x in map(_timeout, found) if x is not None), None)}
        own = found[0].get("self")
        if len(frames) > 1 and own is not None and own.address:
            selves.append((t, own.address))
    got = facts.attributes([[address, [DEADLINE_ATTRIBUTE]] for _, address in selves]) or [] if selves else []
    for (t, _), attributes in zip(selves, got):
        v = (attributes or {}).get(DEADLINE_ATTRIBUTE)
        if v is not None and v.kind not in ("none", "None") and v.real is not None:
            t.grpc_call["deadline"] = t.grpc_call["deadline"] or repr(v.real)


def epoll_fds(threads, files):
    """The fds the epoll instances that gRPC calls poll watch, which `files` (procfs's) does not hold yet."""
    out = set()
    for t in threads:
        if t.grpc_call is None:
            continue
        for fd in syscalls.fds_wanted(t.registers, t.syscall.memory if t.syscall is not None else None):
            obj = (files or {}).get(fd)
            out.update(x for x in (obj.epoll or ()) if obj is not None and x not in files)
    return sorted(out)


def add_sockets(facts, threads, files):
    """Adds to `files` (procfs's fds of the process, or None for a core without them) the fds the epoll
    instances of the gRPC calls watch: the channel's connections are among them."""
    if files is None:
        return
    wanted = epoll_fds(threads, files)
    found = facts.files(wanted) if wanted else None
    for fd, obj in found or ():
        files[int(fd)] = obj


def _connected(obj):
    s = obj.socket or {}
    return obj.kind == "socket" and s.get("state") not in ("LISTEN", 10) and \
        s.get("protocol") in ("tcp", "tcp6", "unix")


def _sockets(b, files):
    """[{fd, link, local, peer, pids, peers}] of the connected sockets the epoll instance `b` polls watches."""
    s = syscall_of(b)
    epoll = s.object.epoll if s.object is not None else None
    out = []
    for fd in epoll or ():
        obj = (files or {}).get(fd)
        if obj is None or not _connected(obj):
            continue
        sock = obj.socket or {}
        holders = [h for h in obj.holders or ()] if obj.holders is not None else None
        out.append({"fd": fd, "link": obj.link, "local": endpoint(sock.get("local")) or sock.get("path"),
                    "peer": endpoint(sock.get("peer")) or sock.get("peer_path"),
                    "pids": None if holders is None else sorted({h.pid for h in holders}),
                    "peers": [{"pid": h.pid, "comm": h.comm, "title": h.title} for h in holders or ()],
                    "complete": bool(obj.holders_complete) if holders is not None else False})
    return out


def call_wait(b, thread, files):
    """`b`, or, for a thread in a blocking gRPC call with no deadline (ThreadSnapshot.grpc_call) whose native
    wait is gRPC's (its poll, or its condition variable with no owner), the call's wait: on the server, which
    no thread here owns; likely (the call is told from its frame, the connections from the poller's fds)."""
    call = thread.grpc_call
    if call is None or call.get("deadline") is not None or b is None:
        return b
    if b.kind == WaitKind.SYSCALL:
        native = syscall_of(b).name
        if native not in POLLS:
            return b
    elif b.kind in SLEEPS and not b.owners:
        native = b.kind
    else:
        return b
    detail = GrpcCallDetail(frame=call.get("frame"), native_wait=native,
                            sockets=_sockets(b, files) if b.kind == WaitKind.SYSCALL else [],
                            fd_table=files is not None)
    return BlockedOn(kind=WaitKind.GRPC_CALL, address=None, library=b.library, owners=[],
                     owner_source=OwnerSource.UNKNOWN, confidence=Confidence.LIKELY, grpc=detail,
                     syscall=b.syscall)


# What a second look sees a waiting call do by design: it wakes every 200 ms (CPU time, context switches, its
# system call between gRPC's poll and its futex); its Python frames stay.
PERIODIC_WAKE = ("cpu", "switches", "syscall")


def progress(t, moved):
    """What of `moved` (a second look's ThreadLook.moved) is progress for `t` (a ThreadReport): for a gRPC call,
    only its Python frames moving or its exit."""
    b = t.blocked_on
    if b is None or b.kind != WaitKind.GRPC_CALL:
        return moved
    return [m for m in moved if m not in PERIODIC_WAKE]


def _elsewhere(d, own):
    """The pids holding the other ends of the call's connections, when every connection's other end is known
    and only other processes hold it; else None."""
    if not d.sockets or not all(s["complete"] and s["pids"] for s in d.sockets):
        return None
    pids = sorted({p for s in d.sockets for p in s["pids"]})
    return None if own in pids else pids


def process_waits(report):
    """The waits-on-process entries of the gRPC calls whose connections only other processes hold the other
    ends of (ProcessWaits, their `grpc` the connections' peer addresses)."""
    out = []
    for t in report.threads:
        b = t.blocked_on
        if b is None or b.kind != WaitKind.GRPC_CALL:
            continue
        d = b.grpc
        pids = _elsewhere(d, report.target.pid)
        if pids is None:
            continue
        one = d.sockets[0] if len(d.sockets) == 1 else None
        peers = {p["pid"]: p for s in d.sockets for p in s["peers"]}
        out.append(ProcessWait(tid=t.tid, syscall=d.native_wait, fd=one["fd"] if one else None,
                               link=one["link"] if one else None, pids=pids,
                               peers=[ProcessPeer(**peers[p]) for p in sorted(peers)],
                               grpc=GrpcTargets(targets=[s["peer"] for s in d.sockets])))
    return out


def account_class(b, own):
    """(class, reason, pids) of a gRPC call no verdict names: its server is not a process found here."""
    d = b.grpc
    if not d.fd_table:
        return ThreadState.UNACCOUNTED, AccountReason.NO_FD_TABLE, []
    if not d.sockets:
        return ThreadState.UNACCOUNTED, AccountReason.NOT_MODELED, []
    if not all(s["complete"] for s in d.sockets):
        return ThreadState.UNACCOUNTED, AccountReason.HOLDERS_UNKNOWN, []
    pids = sorted({p for s in d.sockets for p in s["pids"] or ()})
    if own in pids:
        return ThreadState.UNACCOUNTED, AccountReason.OWN_PROCESS, pids
    return ThreadState.ELSEWHERE, AccountReason.PEER if not pids else AccountReason.OTHER_PROCESS, pids
