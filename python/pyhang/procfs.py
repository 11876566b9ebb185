"""What /proc says about a live process: its threads (names, states, CPU
time, context switches, the system call each is in), its parents and
children, its environment, its fds and sockets (addresses, TCP peers, unix
sockets through sock_diag), and the file locks of /proc/locks.
pyhang.fd_holders puts them together into what each waited-on fd is and who
holds its other end.

None of this is target memory: it is the kernel's view, read with plain
file reads by the collection step (gdbext/pyhang_gdb/collect.py), which
puts the facts into the snapshot; the analysis reads them there.  Every scan
is bounded in count and time; what cannot be read is left out, never
guessed.
"""
import os
import re
import struct
import time

from pyhang.model.files import endpoint

MAX_PROCESSES = 4096     # processes scanned for the other end of a pipe or socket
MAX_FDS = 4096           # fds looked at per process

FD_LINK = re.compile(r"^(pipe|socket):\[(\d+)\]$")


def read_text(path, limit=1 << 20):
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode("utf-8", "replace")
    except OSError:
        return None


def fd_access(pid, fd):
    """"read", "write" or "read-write" from the fd's open flags."""
    info = read_text("/proc/%d/fdinfo/%d" % (pid, fd), 4096)
    m = re.search(r"^flags:\s*([0-7]+)", info or "", re.M)
    if not m:
        return None
    return ("read", "write", "read-write", "read-write")[int(m.group(1), 8) & 3]


def thread_name(pid, tid):
    """The kernel's name of thread `tid` (/proc/PID/task/TID/comm: the
    command name of its stat file, without parsing the rest), or None when
    it is gone: read once for every thread of a report."""
    try:
        fd = os.open("/proc/%d/task/%d/comm" % (pid, tid), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        data = os.read(fd, 256)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data[:-1].decode("utf-8", "replace") if data.endswith(b"\n") else None


def comm(pid, tid=None):
    text = read_text("/proc/%d/task/%d/comm" % (pid, tid) if tid else "/proc/%d/comm" % pid, 256)
    return text.strip() if text else None


def parse_stat(text):
    """{state, ppid, comm, start_ticks, cpu_ticks, exit_code} of the text of
    a /proc/PID/stat file, or None when it is not one.  The command name is
    between the first "(" and the last ")": it may hold spaces and
    parentheses itself.  start_ticks (field 22, clock ticks after boot),
    cpu_ticks (utime + stime, fields 14 and 15) and exit_code (field 52,
    Linux 3.5 on: the wait status of a thread that ended, 0 while it lives,
    and 0 too to a reader not allowed to trace it) are None when missing."""
    if not text or "(" not in text or ")" not in text:
        return None
    name, rest = text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 1:].split()
    try:
        start = int(rest[19]) if len(rest) > 19 else None
        cpu = int(rest[11]) + int(rest[12]) if len(rest) > 12 else None
        code = int(rest[49]) if len(rest) > 49 else None
        return {"state": rest[0], "ppid": int(rest[1]), "comm": name, "start_ticks": start, "cpu_ticks": cpu,
                "exit_code": code}
    except (IndexError, ValueError):
        return None


def context_switches(pid, tid):
    """(voluntary, involuntary) context switches of thread `tid` so far
    (/proc/PID/task/TID/status), or None when it is gone or they are not
    there."""
    text = read_text("/proc/%d/task/%d/status" % (pid, tid), 8192) or ""
    found = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in ("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches") and value.strip().isdigit():
            found[key] = int(value)
    if len(found) != 2:
        return None
    return found["voluntary_ctxt_switches"], found["nonvoluntary_ctxt_switches"]


def zombie_status(pid, s=None):
    """The wait status a zombie `pid` will give its parent (stat's exit_code),
    or None when it cannot be trusted: the kernel shows 0 to a reader that
    may not trace the process (another user's, and this one not root), and a
    stat too short has none.  `s`: its parse_stat, when read already."""
    s = s if s is not None else stat(pid)
    if s is None or s.get("exit_code") is None:
        return None
    try:
        owner = os.stat("/proc/%d" % pid).st_uid
    except OSError:
        return None
    return s["exit_code"] if os.geteuid() in (0, owner) else None


def stat(pid, tid=None):
    """parse_stat of /proc/PID/stat (of /proc/PID/task/TID/stat with
    `tid`), or None when the process or thread is gone: pyhang's one reader
    of that file."""
    return parse_stat(read_text("/proc/%d/task/%d/stat" % (pid, tid) if tid else "/proc/%d/stat" % pid, 4096))


def task_ids(pid):
    """[TID] of the threads of process `pid` (/proc/PID/task), [] when it is gone."""
    try:
        return sorted(int(t) for t in os.listdir("/proc/%d/task" % pid) if t.isdigit())
    except OSError:
        return []


def alive(pid):
    """Whether a process exists and is not a zombie (Z) or dead (X)."""
    s = stat(pid)
    return s is not None and s["state"] not in ("Z", "X")


def parent_pid(pid):
    s = stat(pid)
    return s["ppid"] if s else None


ANCESTORS = 32   # parents followed up from a process at most


def ancestors(pid):
    """[parent PID, its parent, ...] of process `pid` up to init (1) or the first that cannot be read, at
    most ANCESTORS; [] when `pid` itself is gone."""
    out = []
    while len(out) < ANCESTORS:
        ppid = parent_pid(pid)
        if not ppid:
            break
        out.append(ppid)
        if ppid == 1:
            break
        pid = ppid
    return out


def descendants(root, limit):
    """([(pid, parent pid)] of every descendant of `root`, parents first,
    at most `limit`; whether there were more), from one scan of /proc."""
    children = {}
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return [], False
    for pid in pids[:MAX_PROCESSES * 4]:
        s = stat(pid)
        if s is not None:
            children.setdefault(s["ppid"], []).append(pid)
    out, queue = [], [root]
    while queue:
        parent = queue.pop(0)
        for child in sorted(children.get(parent, ())):
            if len(out) >= limit:
                return out, True
            out.append((child, parent))
            queue.append(child)
    return out, False


def syscall_line(pid, tid):
    """Thread `tid`'s /proc/PID/task/TID/syscall line as the kernel writes
    it ("running", "-1 SP PC", or the call's number, six arguments, SP and
    PC), or None when it cannot be read."""
    text = read_text("/proc/%d/task/%d/syscall" % (pid, tid), 512)
    return text.strip() if text is not None else None


def thread_children(pid, tid):
    """The PIDs of the processes thread `tid` of `pid` made and has not reaped (its task's children file), or
    None when it cannot be read."""
    text = read_text("/proc/%d/task/%d/children" % (pid, tid), 1 << 16)
    if text is None:
        return None
    try:
        return [int(p) for p in text.split()]
    except ValueError:
        return None


def thread_syscall(pid, tid):
    """(number, [six arguments]) of the system call thread `tid` is in, as
    the kernel records it (/proc/PID/task/TID/syscall), or None when it runs,
    is not in one, or cannot be read."""
    return parse_syscall(syscall_line(pid, tid))


def parse_syscall(text):
    """(number, [six arguments]) of a /proc/PID/task/TID/syscall line, or
    None when it names no call (or is no such line)."""
    fields = (text or "").split()
    if len(fields) < 7 or not fields[0].lstrip("-").isdigit() or int(fields[0]) < 0:
        return None
    try:
        return int(fields[0]), [int(a, 16) for a in fields[1:7]]
    except ValueError:
        return None


def open_fds(pid, limit=MAX_FDS):
    """(the fds process `pid` has open, sorted, at most `limit`; whether
    that is all of them), or None when /proc/PID/fd cannot be read."""
    try:
        fds = sorted(int(n) for n in os.listdir("/proc/%d/fd" % pid) if n.isdigit())
    except OSError:
        return None
    return fds[:limit], len(fds) <= limit


def environment(pid, names, limit=256):
    """{name: value} of the variables of `names` in process `pid`'s
    environment as it was at exec (/proc/PID/environ: what the program
    changed since is not there), each value cut to `limit` characters; None
    when it cannot be read."""
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            data = f.read(8 << 20)
    except OSError:
        return None
    out = {}
    for entry in data.split(b"\0"):
        name, eq, value = entry.partition(b"=")
        key = name.decode("utf-8", "replace")
        if eq and key in names:
            out[key] = value.decode("utf-8", "replace")[:limit]
    return out


def children(pid, limit=MAX_PROCESSES):
    """[(pid, stat)] of the children of process `pid` (parse_stat of each;
    zombies included), from one scan of /proc, at most `limit`."""
    found, _ = descendants(pid, limit)
    out = []
    for child, parent in found:
        if parent != pid:
            break   # descendants lists the children first
        s = stat(child)
        if s is not None:
            out.append((child, s))
    return out


# ---- sockets -----------------------------------------------------------------

def _ipv4(hexaddr):
    import socket  # here: only a thread in a socket call needs it, and it costs every gdb its import
    addr, port = hexaddr.split(":")
    return "%s:%d" % (socket.inet_ntop(socket.AF_INET, struct.pack("<I", int(addr, 16))), int(port, 16))


def _ipv6(hexaddr):
    import socket
    addr, port = hexaddr.split(":")
    raw = b"".join(struct.pack("<I", int(addr[i:i + 8], 16)) for i in range(0, 32, 8))
    return "[%s]:%d" % (socket.inet_ntop(socket.AF_INET6, raw), int(port, 16))


# TCP states (include/net/tcp_states.h)
_TCP_STATES = {1: "ESTABLISHED", 2: "SYN_SENT", 3: "SYN_RECV", 4: "FIN_WAIT1", 5: "FIN_WAIT2", 6: "TIME_WAIT",
               7: "CLOSE", 8: "CLOSE_WAIT", 9: "LAST_ACK", 10: "LISTEN", 11: "CLOSING"}


_INET_TABLES = (("tcp", _ipv4), ("tcp6", _ipv6), ("udp", _ipv4), ("udp6", _ipv6))


def _inet_rows(pid, protocols):
    """(protocol, inode, local, peer, state) of every socket in the process's
    network namespace's tables /proc/PID/net/PROTOCOL (state: TCP only)."""
    for protocol, decode in _INET_TABLES:
        if protocol not in protocols:
            continue
        text = read_text("/proc/%d/net/%s" % (pid, protocol), 8 << 20) or ""
        for line in text.splitlines()[1:]:
            f = line.split()
            if len(f) < 10 or not f[9].isdigit():
                continue
            try:
                local, peer = decode(f[1]), decode(f[2])
                state = _TCP_STATES.get(int(f[3], 16), f[3]) if protocol.startswith("tcp") else None
            except (ValueError, OSError):
                continue
            yield protocol, int(f[9]), local, peer, state


def inet_sockets(pid):
    """{inode: {protocol, local, peer, state}} of the process's network
    namespace (/proc/PID/net/tcp, tcp6, udp, udp6)."""
    out = {}
    for protocol, inode, local, peer, state in _inet_rows(pid, ("tcp", "tcp6", "udp", "udp6")):
        entry = {"protocol": protocol, "local": local, "peer": peer}
        if state is not None:
            entry["state"] = state
        out[inode] = entry
    return out


def _tcp_table(pid):
    """[(inode, local, peer, state)] of every TCP socket of the process's
    network namespace, those without an inode included (a connection the
    kernel accepted that no accept() has taken yet: it waits in its
    listener's backlog)."""
    return [(inode, endpoint(local), endpoint(peer), state)
            for _, inode, local, peer, state in _inet_rows(pid, ("tcp", "tcp6"))]


def tcp_peer(pid, socket_facts):
    """The other end of a TCP connection when it is in this network
    namespace (a loopback or same-host connection): {inode} of the socket
    holding it, or {inode, backlog: True} of the listening socket in whose
    backlog it still waits (no process has accepted it); None when the
    other end is not here (another host) or the socket is not connected."""
    local, peer = endpoint(socket_facts.get("local")), endpoint(socket_facts.get("peer"))
    if not local or not peer or peer.endswith(":0"):
        return None
    table = _tcp_table(pid)
    match = next((t for t in table if t[1] == peer and t[2] == local), None)
    if match is None:
        return None
    if match[0]:
        return {"inode": match[0]}
    port = peer.rsplit(":", 1)[1]
    for inode, listen_local, _, state in table:
        host = listen_local.rsplit(":", 1)[0]
        if state == "LISTEN" and inode and listen_local.rsplit(":", 1)[1] == port and \
                (listen_local == peer or host in ("0.0.0.0", "[::]")):
            return {"inode": inode, "backlog": True}
    return None


def unix_sockets(pid):
    """{inode: {protocol: "unix", path}} from /proc/PID/net/unix."""
    out = {}
    text = read_text("/proc/%d/net/unix" % pid, 8 << 20) or ""
    for line in text.splitlines()[1:]:
        f = line.split()
        if len(f) >= 7 and f[6].isdigit():
            out[int(f[6])] = {"protocol": "unix", "path": f[7] if len(f) > 7 else None}
    return out


# NETLINK_SOCK_DIAG for AF_UNIX (include/uapi/linux/sock_diag.h, unix_diag.h)
_NETLINK_SOCK_DIAG, _SOCK_DIAG_BY_FAMILY = 4, 20
_NLM_F_REQUEST, _NLM_F_DUMP, _NLMSG_ERROR, _NLMSG_DONE = 1, 0x300, 2, 3
_UDIAG_SHOW_PEER, _UNIX_DIAG_PEER, _UDIAG_SHOW_RQLEN, _UNIX_DIAG_RQLEN = 4, 2, 0x10, 4
# A unix socket's sk_state (the kernel reuses TCP's numbers)
UNIX_CONNECTED, UNIX_LISTENING = 1, 10


def unix_diag(deadline):
    """{inode: {"peer": inode, "state": sk_state, "queued": n}} of every unix
    socket of this network namespace, from the kernel's sock_diag (what
    `ss -x` shows): its peer (0 where the kernel names none: a connection
    no process has accepted yet has no inode), its state (UNIX_CONNECTED,
    UNIX_LISTENING, ...), and for a listening socket the connections
    waiting in its backlog; {} when it cannot be asked."""
    import socket
    sockets = {}
    try:
        s = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_SOCK_DIAG)
    except OSError:
        return sockets
    try:
        s.settimeout(max(0.1, deadline - time.monotonic()))
        # struct unix_diag_req: family, protocol, pad, states, ino, show, cookie[2]
        req = struct.pack("=BBHIIIII", socket.AF_UNIX, 0, 0, 0xFFFFFFFF, 0, _UDIAG_SHOW_PEER | _UDIAG_SHOW_RQLEN,
                          0xFFFFFFFF, 0xFFFFFFFF)
        s.send(struct.pack("=IHHII", 16 + len(req), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST | _NLM_F_DUMP, 1, 0) + req)
        for _ in range(100000):
            if time.monotonic() > deadline:
                break
            data = s.recv(1 << 16)
            if not data:
                break
            offset, done = 0, False
            while offset + 16 <= len(data):
                length, kind = struct.unpack_from("=IH", data, offset)
                if length < 16 or kind in (_NLMSG_DONE, _NLMSG_ERROR):
                    done = True
                    break
                body = offset + 16
                if length >= 32:   # struct unix_diag_msg: family, type, state, pad, ino, cookie[2]
                    state, ino = data[body + 2], struct.unpack_from("=I", data, body + 4)[0]
                    found = sockets[ino] = {"peer": 0, "state": state, "queued": 0}
                    attr = body + 16
                    while attr + 4 <= offset + length:
                        alen, atype = struct.unpack_from("=HH", data, attr)
                        if alen < 4:
                            break
                        if atype == _UNIX_DIAG_PEER and alen >= 8:
                            found["peer"] = struct.unpack_from("=I", data, attr + 4)[0]
                        elif atype == _UNIX_DIAG_RQLEN and alen >= 12 and state == UNIX_LISTENING:
                            found["queued"] = struct.unpack_from("=I", data, attr + 4)[0]
                        attr += (alen + 3) & ~3
                offset += (length + 3) & ~3
            if done:
                break
    except OSError:
        pass
    finally:
        s.close()
    return sockets


# ---- file locks ----------------------------------------------------------------

def file_locks(device, inode):
    """(holders, unreadable) of the locks on one file (/proc/locks): parse_locks."""
    return parse_locks(read_text("/proc/locks", 8 << 20) or "", device, inode)


def parse_locks(text, device, inode):
    """([{pid, type, access}] of the holders of the locks on one file in the
    text of /proc/locks (pid -1: an open file description lock, which
    records none), the number of lines that could not be read).  A line is
    "N: TYPE ADVISORY|MANDATORY ACCESS PID MAJ:MIN:INODE START END", and
    "N: -> ..." for a waiter, which holds nothing."""
    out, unreadable = [], 0
    for line in text.splitlines():
        f = line.split()
        if "->" in f:
            continue
        where = f[5].split(":") if len(f) >= 6 else []
        try:
            same = (int(where[0], 16), int(where[1], 16), int(where[2])) == \
                (os.major(device), os.minor(device), inode)
        except (ValueError, IndexError):
            unreadable += 1
            continue
        if same:
            out.append({"pid": int(f[4]) if f[4].lstrip("-").isdigit() else -1, "type": f[1], "access": f[3]})
    return out, unreadable
