"""What a second look (pyhang.second_look: two no-stop looks some time
after the report's own) means for a report.

Each thread gets the facts that moved between the looks (ThreadReport.moved:
[] when none did: "no progress in 0.5 s").  Then:

- a finding about a thread that moved is marked (its facts' "moved"): what
  it names may be contention, not a hang;
- the threads the closed-world account could not account for
  (ThreadState.UNACCOUNTED: owners pyhang cannot name, waits it does not
  model) that did not move become a hang (the no-progress verdict, exit 5)
  when nothing that could end their waits moved either: no thread of the
  process moved, and no thread waits for what comes from outside (a client,
  a signal, the terminal, a timer: analysis.account's idle reasons; another
  process's answer on a pipe, socket, child or file lock; a process-shared
  futex, which another process may wake).  Where
  some thread ran meanwhile, or one could still be woken from outside, they
  stay unaccounted, and the verdict's facts say which threads moved.

Waits on other processes (ThreadState.ELSEWHERE) stay what they are: this
look does not see the other processes.  A gRPC call's poll wakes every
200 ms by design: only its Python frames moving is progress
(grpc_calls.progress).
"""
from pyhang.analysis import grpc_calls
from pyhang.model.kinds import AccountReason, ThreadState, VerdictKind, severity
from pyhang.model.report import ThreadAccount, Verdict
from pyhang.model.verdict_facts import NoProgressFacts

# Idle reasons of threads that outside events may wake (a client, a signal, the user, a timer): any of them
# could still end a wait pyhang cannot name.
_WOKEN_FROM_OUTSIDE = (AccountReason.SELECTOR, AccountReason.LISTENER, AccountReason.SIGNAL,
                       AccountReason.TERMINAL, AccountReason.TIMED,
                       AccountReason.POOL_WORK)   # a Pool's result handler, woken by a worker's result
# Waits on other processes that those processes may answer (a pipe's other end, a child's exit, a file lock, a
# socket's peer): a thread woken by one may go on to end a wait pyhang cannot name (a Pool's result handler,
# once a worker writes, completes the result the main thread waits for).
_ANSWERED_FROM_OUTSIDE = (AccountReason.OTHER_PROCESS, AccountReason.CHILD, AccountReason.FILE_LOCK,
                          AccountReason.PEER)


def apply(report, look):
    """Mark `report` (made before the look, its account made) with `look` (a SecondLook) and conclude again:
    returns the threads found stuck ([TID])."""
    report.second_look = look
    if look.problem is not None:
        return []
    seen = {t.tid: t for t in look.threads}
    for th in report.threads:
        t = seen.get(th.tid)
        th.moved = grpc_calls.progress(th, t.moved()) if t is not None else None
    moved = sorted(th.tid for th in report.threads if th.moved)
    for v in report.verdicts:
        named = [tid for tid in v.threads if tid in moved]
        if named:
            v.facts.moved = named
    outside = [th.tid for th in report.threads if th.account is not None and (
        th.account.state == ThreadState.IDLE and th.account.reason in _WOKEN_FROM_OUTSIDE or
        th.account.state == ThreadState.ELSEWHERE and th.account.reason in _ANSWERED_FROM_OUTSIDE or
        th.account.state == ThreadState.UNACCOUNTED and th.account.reason == AccountReason.SHARED_FUTEX)]
    stuck = [th.tid for th in report.threads if th.account is not None and th.moved == []
             and th.account.state == ThreadState.UNACCOUNTED]
    if not stuck or moved or outside:
        return []
    report.verdicts.append(Verdict(kind=VerdictKind.NO_PROGRESS, threads=stuck,
                                   facts=NoProgressFacts(interval=look.interval, threads=len(report.threads))))
    report.verdicts.sort(key=lambda v: severity(v.kind))
    for th in report.threads:
        if th.tid in stuck:
            th.account = ThreadAccount(state=ThreadState.HUNG, reason=AccountReason.NO_PROGRESS,
                                       finding=VerdictKind.NO_PROGRESS)
    return stuck
