"""A threading.Lock whose holder most likely exited: a lock that records no
owner, locked, that no live thread of the process references from its
innermost frames (no likely holder), where something says the thread that
took it is gone.

The one such evidence within one process: the waiter serves a client of a
multiprocessing manager (a frame of multiprocessing/managers.py's
Server.serve_client).  Every object a manager's server holds was made by
the server after it started, on a client's request, and each client
connection is served by a thread of its own, which ends when the client's
connection closes (the client exited, or was killed): a managed Lock a
client took and never released is held by nobody alive.  Likely, never
certain: another client could still hold it, its serving thread alive but
not inside the lock's method now.

Fork does not explain such a lock: the server made it after fork, so it
cannot be a copy a parent thread held (analysis.forks keeps the
orphaned-at-fork claim off it).  What the parent has at the lock's address
now (tree_forks) cannot rule fork out for other locks: the parent may have
freed its copy since.
"""
from pyhang.model.kinds import Confidence, HolderEvidence, VerdictKind, WaitKind
from pyhang.model.report import Verdict
from pyhang.model.verdict_facts import HolderExitedFacts
from pyhang.model.waits import CodeLine

# Server.serve_client: the loop of the server thread serving one manager client.
MANAGER_SERVER = ("/multiprocessing/managers.py", ("serve_client", "Server.serve_client"))


def served_by_manager(t):
    """The serve_client frame of `t` (a ThreadReport), or None: `t` serves a manager client."""
    return next((f for f in t.python_frames if f.function in MANAGER_SERVER[1] and
                 (f.file or "").endswith(MANAGER_SERVER[0])), None)


def unheld_lock(t, waiters):
    """Whether `t` waits on a locked threading.Lock with no likely holder:
    no owner, no other thread referencing it (`waiters`: the TIDs an edge
    leaves from, which a likely holder would have made)."""
    b = t.blocked_on
    lock = b.python if b is not None else None
    return b is not None and b.kind == WaitKind.PY_LOCK and not b.owners and lock is not None and \
        not lock.suspects and lock.locked is not False and t.tid not in waiters


def _facts(t, evidence, **more):
    b = t.blocked_on
    return HolderExitedFacts(waiter=t.tid, kind=b.kind, address=b.address, name=b.name, evidence=evidence,
                             confidence=Confidence.LIKELY, **more)


def verdicts(report):
    """holder-exited verdicts of `report`: its threads serving a manager
    client on a lock nobody alive holds."""
    waiters = {e.waiter for e in report.edges}
    out = []
    for t in report.threads:
        frame = served_by_manager(t) if unheld_lock(t, waiters) else None
        if frame is not None:
            out.append(Verdict(kind=VerdictKind.HOLDER_EXITED, threads=[t.tid],
                               facts=_facts(t, HolderEvidence.MANAGER_CLIENT,
                                            frame=CodeLine(frame.function, frame.file, frame.line))))
    return out

