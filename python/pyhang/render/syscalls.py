"""The sentences of a thread parked in a blocking system call (blocked_on
kind "syscall", pyhang.analysis.syscalls): the call, its object and, for a
pipe or unix socket of a live target, who holds the other end."""
from pyhang.model.waits import syscall_of

_LISTED = 8   # fds or holders named in one line; the rest are counted

CORE_FDS = "unknown (cores do not record fd tables)"


def call_name(call):
    """A system call's name; a number (analysis.syscalls.name of a number no
    x86_64 kernel has) is said to be one, never given bare."""
    return "unknown system call (number %d)" % call if isinstance(call, int) else call


def duration(ns):
    """"3600 s", "1.5 s", "250 ms"."""
    if ns >= 1000000000:
        s = ns / 1e9
        return "%d s" % round(s) if s >= 100 or ns % 1000000000 == 0 else "%.1f s" % s
    if ns >= 1000000:
        return "%g ms" % (ns / 1e6)
    return "%d ns" % ns if ns else "0 s (it returns at once)"


def _timeout_text(t, sleeping=False):
    if t is None:
        return ""
    if t.get("ns") is None:
        return "" if sleeping else ", with no timeout"
    if t.get("absolute"):
        until = "until %.3f s on %s" % (t["ns"] / 1e9, t.get("clock") or "its clock")
        return " for another %s (%s)" % (duration(t["left_ns"]), until) if "left_ns" in t else " " + until
    return " for " + duration(t["ns"])


def _end(access):
    return {"read": "read end", "write": "write end"}.get(access)


def object_text(obj):
    """"pipe:[48213], read end", "unix socket socket:[7] (peer socket:[8])", "file /tmp/x"."""
    if obj is None:
        return CORE_FDS
    kind = obj.kind
    if kind == "closed":
        return "not open now"
    if kind == "pipe":
        end = _end(obj.access)
        return (obj.link or "a pipe") + (", " + end if end else "")
    if kind == "socket":
        s = obj.socket or {}
        protocol = s.get("protocol")
        if protocol == "unix":
            text = "unix socket %s" % obj.link
            if s.get("path"):
                text += " at %s" % s["path"]
            if s.get("peer_inode") and not s.get("peer_in_backlog"):
                text += ", peer socket:[%d]" % s["peer_inode"] + (" at %s" % s["peer_path"] if s.get("peer_path")
                                                                  else "")
            return text
        if protocol:
            text = "%s socket %s %s → %s" % (protocol, obj.link, s.get("local"), s.get("peer"))
            return text + (", %s" % s["state"] if s.get("state") else "")
        return "socket %s" % obj.link
    if kind == "file":
        return "file %s" % (obj.path or "(path unknown)")
    if obj.epoll is not None:
        return "epoll instance watching fd%s %s" % ("" if len(obj.epoll) == 1 else "s",
                                                    ", ".join(str(fd) for fd in obj.epoll[:_LISTED]) or "none")
    return obj.link or "unknown"


def _thread_wait(t, pid):
    """"thread LWP 4120 "python3" waits in wait4 for PID 4121 (this process)" (`t` a HolderThreadWait)."""
    who = "thread LWP %d" % t.tid + (' "%s"' % t.comm if t.comm else "")
    what = "waits in %s" % call_name(t.syscall or "a system call")
    if t.pid is not None:
        child = t.pid
        what += " for " + ("any child" if child == -1 else "PID %d" % child + (" (this process)" if child == pid
                                                                              else ""))
    return who + " " + what


def _holder_text(h, pid, fd_pid):
    if h.pid == fd_pid:
        who = "this process (fd %s)" % ", ".join(str(fd) for fd in h.fds)
    else:
        who = "PID %d" % h.pid + (" (%s)" % h.comm if h.comm else "")
    waits = [t for t in h.threads if t.relevant]
    if waits:
        who += ", whose " + "; ".join(_thread_wait(t, fd_pid) for t in waits[:3])
    return who


def _backlog_text(obj):
    """The other end of a connection no process has accepted yet: "its peer
    is a connection not yet accepted by this process's own listening socket
    (fd 5): …", "its peer waits, not yet accepted, in the backlog of a
    listening socket, which is held only by PID 4121 (…)", or (a unix
    socket whose listener the kernel does not name) that it waits in some
    backlog."""
    s = obj.socket
    if obj.holders is None:
        return ("its peer is a connection not yet accepted: it waits in the backlog of a listening socket (the kernel "
                "does not say which)")
    which = ""
    if s.get("backlog_inferred"):
        which = " %s (likely: the only listening socket here with connections waiting)" % (
            "at " + s["peer_path"] if s.get("peer_path") else "socket:[%d]" % s["peer_inode"])
    pid, holders = obj.pid, obj.holders
    if holders and obj.holders_complete and all(h.pid == pid for h in holders):
        return ("its peer is a connection not yet accepted by this process's own listening socket, fd %s%s: no other "
                "process can accept it" % (", ".join(str(fd) for h in holders for fd in h.fds), which))
    return _held_text("its peer waits, not yet accepted, in the backlog of a listening socket%s, which" % which, obj)


def other_end_text(obj):
    """"its write end is held only by PID 4120 (python3.11), whose thread …"."""
    if obj is None or obj.kind not in ("pipe", "socket"):
        return None
    if (obj.socket or {}).get("peer_in_backlog"):
        return _backlog_text(obj)
    if obj.holders is None:
        return None
    if obj.kind == "pipe":
        return _held_text({"read": "its write end", "write": "its read end"}.get(obj.access, "its other end"), obj)
    return _held_text("its peer", obj)


def _held_text(end, obj):
    """"END is held only by PID 4120 (python3.11), whose thread …", of `obj`'s holders."""
    holders = obj.holders
    pid = obj.pid
    if not holders:
        return "%s is held by no process%s" % (
            end, "" if obj.holders_complete else " pyhang could scan (the scan of /proc stopped at its bound)")
    listed = ", ".join(_holder_text(h, pid, pid) for h in holders[:_LISTED])
    if len(holders) > _LISTED:
        listed += ", and %d more processes" % (len(holders) - _LISTED)
    only = " only" if len(holders) == 1 and obj.holders_complete else ""
    return "%s is held%s by %s" % (end, only, listed)


def _fd_list(fds):
    parts = []
    for f in fds[:_LISTED]:
        text = "%d" % f["fd"]
        if f.get("object") is not None:
            text += " (%s)" % object_text(f["object"])
        text += {"read": " to read", "write": " to write", "except": " for an exception"}.get(f["direction"], "")
        parts.append(text)
    if len(fds) > _LISTED:
        parts.append("and %d more" % (len(fds) - _LISTED))
    return ", ".join(parts)


def _child_text(s):
    child = s.child
    if child is None:
        group = s.group
        return "a child in process group %d" % group if group is not None else "a child"
    if child == -1:
        return "any child"
    if child == 0:
        return "any child in its process group"
    if child < -1:
        return "any child in process group %d" % -child
    return "child PID %d" % child


def summary(b):
    """The `blocked:` line of a thread parked in a system call."""
    line = _call_summary(b)
    if syscall_of(b).restarted:
        line += " (resumed after a stop interrupted it, as restart_syscall; the call named by frame 0)"
    return line


def _call_summary(b):
    s = syscall_of(b)
    call = s.name or "?"
    line = "waits in %s" % call
    obj = s.object
    if call in ("nanosleep", "clock_nanosleep") or s.fds_count == 0:
        # poll or select on no fd is a sleep too (Python 3.6-3.10's time.sleep)
        t = s.timeout
        if t is None:
            return "sleeps in %s (its duration could not be read)" % call
        return "sleeps in %s" % call + (_timeout_text(t, sleeping=True) if t.get("ns") is not None else " for ever")
    if call == "vfork":
        return "%s for %s to exec or exit" % (line, "its child PID %d" % s.child if s.child else "its child")
    if call in ("wait4", "waitid"):
        return "%s for %s to exit" % (line, _child_text(s))
    if call == "restart_syscall":
        r = s.restarts
        if r is None:
            return line + ", restarting a call it does not record (unknown)"
        how = "the kernel's record" if r.get("source") == "proc" else "its libc frame is %s" % r["syscall"]
        return "%s, restarting %s (%s)" % (line, r["syscall"], how)
    if call in ("pause", "rt_sigsuspend"):
        return line + " for a signal"
    if call == "rt_sigtimedwait":
        return line + " (sigtimedwait) for a signal" + _timeout_text(s.timeout)
    if s.watches_fds:
        fds = s.fds
        if fds is None:
            return line + " on fds it could not read from target memory" + _timeout_text(s.timeout)
        line += " on %d fd%s: %s" % (s.fds_count if s.fds_count is not None else len(fds),
                                      "" if len(fds) == 1 else "s", _fd_list(fds))
        if not s.fd_table:
            line += "; what they are is unknown (cores do not record fd tables)"
        return line + _timeout_text(s.timeout)
    if s.has_fd():
        kind = "epoll fd" if call.startswith("epoll") else "fd"
        line += " on %s %d: %s" % (kind, s.fd, object_text(obj))
        wanted = lock_wanted_text(s)
        if wanted:
            line += "; " + wanted
        if call in ("flock", "fcntl") and obj is not None:
            holders = [h.pid for h in s.lock_holders or () if isinstance(h.pid, int) and h.pid != obj.pid]
            if holders:
                line += "; locked by " + ", ".join("PID %d" % pid if pid > 0 else
                                                   "an open file description (no PID recorded)" for pid in holders)
            elif s.lock:
                line += "; /proc/locks names no other holder"
            if obj.locks_unreadable:
                line += "; %d line%s of /proc/locks could not be read (a holder may be missing)" % (
                    obj.locks_unreadable, "" if obj.locks_unreadable == 1 else "s")
        other = other_end_text(obj)
        if other:
            line += "; " + other
        return line + _timeout_text(s.timeout) if call.startswith("epoll") else line
    if call in ("sync", "fsync", "fdatasync", "msync"):
        return line + " for the disk"
    return "waits in the %s system call" % call


def lock_wanted_text(s):
    """"to take an exclusive flock", "to write-lock bytes 100-149 (fcntl, an open file description lock)": what a
    file lock wait wants, or None when it is none or it was not read."""
    if s.name == "flock" and s.lock_mode:
        return "to take %s %s flock" % ("an" if s.lock_mode == "exclusive" else "a", s.lock_mode)
    r = s.lock_range if s.name == "fcntl" and s.lock else None
    if not r:
        return None
    verb = {"read": "to read-lock", "write": "to write-lock"}.get(r.get("type"), "to lock (%s)" % r.get("type"))
    start, length = r.get("start") or 0, r.get("length") or 0
    span = "from byte %d to the end" % start if length == 0 else \
        "byte %d" % start if length == 1 else "bytes %d-%d" % (start, start + length - 1)
    if r.get("whence") not in ("start", None):
        span += " (from the file's %s)" % r["whence"]
    return "%s %s (fcntl%s)" % (verb, span, ", an open file description lock" if s.lock_ofd else "")


def _object_json(obj):
    if obj is None:
        return None
    out = {k: getattr(obj, k) for k in ("kind", "link", "inode", "access", "path") if getattr(obj, k) is not None}
    if obj.socket:
        out["socket"] = dict(obj.socket)
    if obj.epoll is not None:
        out["epoll"] = list(obj.epoll)
    if obj.holders is not None:
        out["holders"] = [{"pid": h.pid, "comm": h.comm, "fds": list(h.fds),
                           "threads": [{"tid": t.tid, "comm": t.comm, "syscall": call_name(t.syscall),
                                        **({"pid": t.pid} if t.pid is not None else {})}
                                       for t in h.threads if t.relevant]}
                          for h in obj.holders]
        out["holders_complete"] = obj.holders_complete
    return out


def syscall_json(s):
    """blocked_on.syscall of a SyscallWait: {name, number, fd, object, fds, timeout_ns, ...}
    (docs/json-contract.md): each key only where the call has it."""
    out = {"name": s.name, "number": s.number, "fd_table": bool(s.fd_table)}
    if s.has_fd():
        out["fd"] = s.fd
        out["object"] = _object_json(s.object)
    if s.watches_fds:
        out["fds"] = None if s.fds is None else [{"fd": f["fd"], "direction": f["direction"],
                                                  "object": _object_json(f.get("object"))} for f in s.fds]
    t = s.timeout
    if t is not None:
        out["timeout_ns"] = t.get("ns")
        for key in ("absolute", "clock", "left_ns"):
            if key in t:
                out[key] = t[key]
    if s.waits_for_child():
        out["child"] = s.child
    if s.group is not None:
        out["group"] = s.group
    if s.name == "fcntl":
        out["lock"] = s.lock
        if s.lock:
            out["lock_range"] = s.lock_range
            out["lock_ofd"] = s.lock_ofd
    if s.lock_mode is not None:
        out["lock_mode"] = s.lock_mode
    if s.lock_holders is not None:
        out["lock_holders"] = [h.pid for h in s.lock_holders]
    if s.name == "restart_syscall":
        out["restarts"] = s.restarts
    if s.restarted:
        out["restarted"] = True
    return out
