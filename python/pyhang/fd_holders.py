"""What a live process's file descriptors are, and who holds the other end
of the pipes and sockets its threads wait on: the object behind an fd
(pyhang.procfs's readers: a pipe, a socket with its addresses and peer, a
file with its locks, an epoll instance), the processes holding a pipe's other
end or a unix or TCP socket's peer (each with its title and its threads'
system calls), and for a PostgreSQL backend the sessions the waiting
process has with that server.  Like procfs, none of it is target memory;
every scan is bounded in count and time."""
import os
import re
import time

from pyhang import procfs
from pyhang.model.files import endpoint, pg_backend

MAX_THREADS = 64         # threads of a holder whose system call is read
SCAN_SECONDS = 2.0       # the whole scan for holders


def fd_object(pid, fd):
    """What fd `fd` of process `pid` is: {kind, link, inode, access, path,
    socket, epoll}; {"kind": "closed"} when it is not open."""
    path = "/proc/%d/fd/%d" % (pid, fd)
    try:
        link = os.readlink(path)
    except OSError:
        return {"kind": "closed"}
    obj = {"link": link, "access": procfs.fd_access(pid, fd), "pid": pid}
    m = procfs.FD_LINK.match(link)
    if m:
        obj["kind"], obj["inode"] = m.group(1), int(m.group(2))
    elif link.startswith("anon_inode:"):
        obj["kind"] = "anon"
        if "eventpoll" in link:
            info = procfs.read_text("/proc/%d/fdinfo/%d" % (pid, fd), 1 << 16) or ""
            obj["epoll"] = [int(x) for x in re.findall(r"^tfd:\s*(\d+)", info, re.M)][:256]
    elif link.startswith("/"):
        obj["kind"], obj["path"] = "file", link
        try:
            st = os.stat(path)
            obj["inode"] = st.st_ino
            obj["lock_holders"], unreadable = procfs.file_locks(st.st_dev, st.st_ino)
            if unreadable:
                obj["locks_unreadable"] = unreadable
        except OSError:
            pass
    else:
        obj["kind"] = "other"
    return obj


def _holders(wanted, deadline):
    """{link: [(pid, fd)]} of the processes holding each link of `wanted`
    (pipe:[N] / socket:[N]), scanning /proc/*/fd within the bounds."""
    found = {link: [] for link in wanted}
    truncated = False
    try:
        pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    except OSError:
        return found, True
    if len(pids) > procfs.MAX_PROCESSES:
        pids, truncated = pids[:procfs.MAX_PROCESSES], True
    for pid in pids:
        if time.monotonic() > deadline:
            return found, True
        try:
            fds = os.listdir("/proc/%d/fd" % pid)
        except OSError:
            continue
        for name in fds[:procfs.MAX_FDS]:
            try:
                link = os.readlink("/proc/%d/fd/%s" % (pid, name))
            except OSError:
                continue
            if link in found:
                found[link].append((pid, int(name)))
    return found, truncated


def _unix_peer(diag, inode):
    """What is at the other end of unix socket `inode` (procfs.unix_diag()'s
    `diag`): {peer_inode} of its peer; for a connection no process has
    accepted yet (connected, and its peer has no inode), {peer_in_backlog},
    with {peer_inode, backlog_inferred} of the listening socket in whose
    backlog it waits when that is the only one here with connections
    waiting (the kernel does not say which: it may be in another network
    namespace); None when nothing is known."""
    me = diag.get(inode)
    if me is None:
        return None
    if me["peer"]:
        return {"peer_inode": me["peer"]}
    if me["state"] != procfs.UNIX_CONNECTED:
        return None
    waiting = [i for i, d in diag.items() if d["state"] == procfs.UNIX_LISTENING and d["queued"] and i]
    if len(waiting) == 1:
        return {"peer_in_backlog": True, "peer_inode": waiting[0], "backlog_inferred": True}
    return {"peer_in_backlog": True}


TITLE_LIMIT = 300   # characters of a process title kept


def title(pid):
    """Process `pid`'s title: its command line as it shows it now (/proc/PID/cmdline, arguments joined by
    spaces), where servers publish their state (a PostgreSQL backend: `postgres: user db host(port) UPDATE
    waiting`); None when it cannot be read or is empty (a kernel thread, a zombie)."""
    text = procfs.read_text("/proc/%d/cmdline" % pid, 4096)
    if not text:
        return None
    words = [w for w in text.split("\0") if w]
    return " ".join(words).strip()[:TITLE_LIMIT] or None


def pg_sessions(pid, backend):
    """[{pid, title, state, local}] of the sessions of the PostgreSQL server that runs backend `backend`
    whose client end is a TCP socket of process `pid`: the backends (the children of the backend's
    postmaster) whose title names, as its client address, one of `pid`'s local addresses."""
    s = procfs.stat(backend)
    if s is None or not s.get("ppid"):
        return []
    local = set()
    sockets = dict(procfs.inet_sockets(pid))
    try:
        links = [os.readlink("/proc/%d/fd/%s" % (pid, fd)) for fd in os.listdir("/proc/%d/fd" % pid)]
    except OSError:
        return []
    for link in links:
        m = procfs.FD_LINK.match(link)
        if m and m.group(1) == "socket" and int(m.group(2)) in sockets:
            address = endpoint(sockets[int(m.group(2))].get("local"))
            if address:
                local.add(address)
    out = []
    for child, _ in procfs.children(s["ppid"]):
        t = title(child)
        b = pg_backend(t)
        if b and "%s:%d" % (b[0], b[1]) in local:
            out.append({"pid": child, "title": t, "state": b[2], "local": "%s:%d" % (b[0], b[1])})
    return out


def _holder(pid, fds, access_wanted, client=None):
    """One holder of the other end: {pid, comm, title, fds, threads} with the
    threads' system calls, or None when none of its fds has the access."""
    kept = [fd for fd in fds if access_wanted is None or procfs.fd_access(pid, fd) in (access_wanted, "read-write")]
    if not kept:
        return None
    threads = []
    try:
        tids = sorted(int(t) for t in os.listdir("/proc/%d/task" % pid) if t.isdigit())[:MAX_THREADS]
    except OSError:
        tids = []
    for tid in tids:
        call = procfs.thread_syscall(pid, tid)
        if call is not None:
            threads.append({"tid": tid, "comm": procfs.comm(pid, tid), "nr": call[0], "args": call[1]})
    out = {"pid": pid, "comm": procfs.comm(pid), "title": title(pid), "fds": kept, "threads": threads,
           "ancestors": procfs.ancestors(pid)}
    if pg_backend(out["title"]) is not None:
        # a PostgreSQL backend: the other sessions this client process has with the same server
        out["sessions"] = pg_sessions(client, pid) if client else []
    return out


def files(pid, fds):
    """{fd: object} for the fds of process `pid` that threads wait on, each
    pipe and unix socket with `holders` of its other end: for a pipe, the
    processes holding it open the other way (this process included, under
    another fd); for a connected unix socket, those holding its peer."""
    deadline = time.monotonic() + SCAN_SECONDS
    out = {fd: fd_object(pid, fd) for fd in fds}
    wanted = {}
    sockets = None
    diag = None
    for fd, obj in out.items():
        if obj.get("kind") == "pipe":
            other = {"read": "write", "write": "read"}.get(obj.get("access"))
            wanted[fd] = ("pipe:[%d]" % obj["inode"], other)
        elif obj.get("kind") == "socket":
            if sockets is None:
                sockets = dict(procfs.inet_sockets(pid))
                sockets.update(procfs.unix_sockets(pid))
            obj["socket"] = dict(sockets.get(obj["inode"]) or {"protocol": None})
            if obj["socket"].get("protocol") == "unix":
                if diag is None:
                    diag = procfs.unix_diag(deadline)
                peer = _unix_peer(diag, obj["inode"])
                if peer:
                    obj["socket"].update(peer)
                    obj["socket"]["peer_path"] = (sockets.get(peer["peer_inode"]) or {}).get("path")
                    wanted[fd] = ("socket:[%d]" % peer["peer_inode"], None)
                elif peer is not None:
                    obj["socket"].update(peer)
            elif obj["socket"].get("protocol") in ("tcp", "tcp6"):
                peer = procfs.tcp_peer(pid, obj["socket"])
                if peer:
                    # the holders of the other end, or of the listener it still waits to be accepted from
                    obj["socket"]["peer_inode"] = peer["inode"]
                    obj["socket"]["peer_in_backlog"] = bool(peer.get("backlog"))
                    wanted[fd] = ("socket:[%d]" % peer["inode"], None)
    if wanted:
        found, truncated = _holders({link for link, _ in wanted.values()}, deadline)
        for fd, (link, access) in wanted.items():
            holders = []
            by_pid = {}
            for hpid, hfd in found.get(link, ()):
                if not (hpid == pid and hfd == fd):
                    by_pid.setdefault(hpid, []).append(hfd)
            for hpid, hfds in sorted(by_pid.items()):
                h = _holder(hpid, hfds, access, pid)
                if h is not None:
                    holders.append(h)
            out[fd]["holders"] = holders
            out[fd]["holders_complete"] = not truncated
    return out
