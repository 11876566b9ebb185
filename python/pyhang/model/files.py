"""What a process's fds are, as records: the answer to the `files` question
(pyhang.model.facts), made once at the collector from pyhang.fd_holders.files()
(`from_data`); a snapshot keeps it as data (`to_data`).  The system-call
analysis (pyhang.analysis.syscalls, .tree) reads their fields.

A socket's facts from /proc/net differ by protocol (local and peer
addresses and a TCP state; a unix socket's path, its peer's inode and
path, whether the connection waits in a listener's backlog): `socket` keeps
them as the collector reads them, and the report gives them as they are."""
from __future__ import annotations

import re

from pyhang.model.record import field, record

__all__ = ["FileLock", "HolderThread", "PgSession", "FdHolder", "FdObject", "pg_backend"]


@record
class FileLock:
    """A lock on a file, as /proc/locks names its holder."""
    pid: int = -1                     # -1: an open file description lock, which records none
    type: str = ""                    # "FLOCK", "POSIX", "OFDLCK"
    access: str = ""                  # "READ", "WRITE"


@record
class HolderThread:
    """A thread of a process holding the other end of a pipe or socket, and
    the system call /proc records it in."""
    tid: int = 0
    comm: str | None = None
    nr: int | None = None             # the call's number; None: in no call
    args: list[int] = field(default_factory=list)


@record
class PgSession:
    """A session of this process with a PostgreSQL server (fd_holders.pg_sessions): its backend's PID and
    title, the state the title says ("idle in transaction"), and the client address it names."""
    pid: int
    title: str
    state: str
    local: str


@record
class FdHolder:
    """A process holding the other end (this process included, under another fd); in a report's
    SyscallWait, its threads are the analysis's HolderThreadWaits (model.waits)."""
    pid: int = 0
    comm: str | None = None
    fds: list[int] = field(default_factory=list)   # its fds for it
    threads: list[HolderThread] = field(default_factory=list)
    title: str | None = None          # its process title (fd_holders.title): a server's state, where it shows it
    # for a PostgreSQL backend, this client's sessions with its server
    sessions: list[PgSession] | None = None
    # its parent, the parent's parent, ... (procfs.ancestors): whether a tree of processes holds it; None: unknown
    ancestors: list[int] | None = None

    __nested__ = {"threads": HolderThread, "sessions": PgSession}


@record
class FdObject:
    """What an fd is (pyhang.fd_holders.fd_object): a pipe, a socket, a file, an
    anonymous inode (an epoll instance), or no longer open (kind "closed")."""
    kind: str = ""                    # "pipe", "socket", "file", "anon", "other", "closed"
    link: str | None = None           # the fd's /proc link ("pipe:[48213]")
    access: str | None = None         # "read", "write", "read-write"
    pid: int | None = None            # the process whose fd it is
    inode: int | None = None
    path: str | None = None           # a file's
    epoll: list[int] | None = None    # an epoll instance's watched fds
    lock_holders: list[FileLock] | None = None   # a file's locks
    locks_unreadable: int = 0         # lines of /proc/locks that could not be read (a holder may be missing)
    socket: dict | None = None        # a socket's /proc/net facts, as read (see the module's doc)
    holders: list[FdHolder] | None = None   # a pipe's or socket's other end; None: not looked up
    holders_complete: bool = True     # False: the scan of /proc stopped at its bound

    __nested__ = {"lock_holders": FileLock, "holders": FdHolder}


def endpoint(address):
    """An address as both ends of a connection show it: an IPv4-mapped IPv6
    address ([::ffff:127.0.0.1]:80, a dual-stack socket's) as the IPv4 one."""
    if address and address.startswith("[::ffff:") and "]:" in address:
        host, port = address[len("[::ffff:"):].split("]:")
        if host.count(".") == 3:
            return "%s:%s" % (host, port)
    return address


# A PostgreSQL backend's title: "postgres: USER DB HOST(PORT) STATE" (update_process_title, on by default).
_PG_BACKEND = re.compile(r"^postgres: (?:\S+: )?\S+ \S+ (\S+)\((\d+)\) (.*)$")


def pg_backend(text):
    """(client host, client port, state) of a PostgreSQL backend's title, or None."""
    m = _PG_BACKEND.match(text or "")
    return (m.group(1), int(m.group(2)), m.group(3).strip()) if m else None
