"""A process tree's report (`pyhang report --tree`, several cores): the
deadlocks across processes first, the processes, then each process's own
report; and its "pyhang-tree/1" JSON document (docs/json-contract.md,
docs/pyhang-tree-1.schema.json)."""
import json

from pyhang import VERSION
from pyhang.model.kinds import TreeEdgeKind, VerdictKind, WaitKind
from pyhang.model.record import to_data
from pyhang.model.tree_edge_facts import FdPeerFacts, FileLockFacts, facts_data
from pyhang.model.verdict_facts import ProcessPeer
from pyhang.render import json as render_json
from pyhang.render.exits import exit_json, exit_text
from pyhang.render.forks import advice as fork_advice, evidence, hazard_json, hazard_title
from pyhang.render.locks import summary
from pyhang.render.syscalls import duration
from pyhang.render.names import lock_text
from pyhang.render.text import names_of, render_text, thread_header
from pyhang.render.account import count as _count
from pyhang.render.process_verdicts import diverged_ranks_text
from pyhang.render.verdicts import DEADLOCK_ADVICE, HANG_SUMMARIES, NO_PYTHON_FOUND, NOTHING_FOUND, WAITS_PREFIX, \
    TITLES, hang_summaries, headline, incomplete_reasons, verdict_advice, verdict_text

TREE_SCHEMA = "pyhang-tree/1"


def _thread(tree, node):
    p = tree.process(node[0])
    th = p.report.thread(node[1]) if p and p.report else None
    return p, th


def _node_label(tree, node):
    p, th = _thread(tree, node)
    return "PID %d %s" % (node[0], thread_header(th) if th else "LWP %d" % node[1])


def _held_text(held):
    """Why the thread is what the threads of `held` (edges of one kind and
    object, whose owner it is) wait for, or None for a wait within its process."""
    h = held[0]
    f = h.facts
    waiters = ", ".join("PID %d (LWP %d)" % e.waiter for e in held)
    one = len(held) == 1
    if h.kind == TreeEdgeKind.CHILD_EXIT:
        return "its process is the child %s wait%s for: it exits only when this thread ends" % (
            waiters, "s" if one else "")
    if h.kind == TreeEdgeKind.PIPE_OTHER_END:
        what = "the other end of %s" % (f.link or "the pipe")
    elif h.kind == TreeEdgeKind.SOCKET_PEER:
        what = "the peer of %s" % (f.link or "the socket")
    elif h.kind == TreeEdgeKind.FILE_LOCK:
        return "its process holds the lock on %s that %s wait%s for" % (f.path or "the file", waiters,
                                                                      "s" if one else "")
    else:
        return None
    return "its process holds %s, on which %s wait%s" % (what, waiters, "s" if one else "")


def _link(facts):
    """The pipe or socket a pipe or socket edge's facts name (its fd's link), or None."""
    return facts.link if isinstance(facts, FdPeerFacts) else None


def _path(facts):
    """The locked file a file-lock edge's facts name, or None."""
    return facts.path if isinstance(facts, FileLockFacts) else None


def _held_texts(d, node):
    """The _held_text of each object `node` serves in deadlock `d`."""
    groups = {}
    for e in d.edges:
        if e.owner == node:
            groups.setdefault((e.kind, _link(e.facts), _path(e.facts)), []).append(e)
    texts = [_held_text(edges) for edges in groups.values()]
    return [t for t in texts if t]


# A deadlock across processes' next step, by the first kind of wait it has across them.
_TREE_ADVICE = (
    ((TreeEdgeKind.PIPE_OTHER_END, TreeEdgeKind.SOCKET_PEER),
     "each process waits to write or read what the other will only take after: read and write at once "
     "(subprocess's communicate(), or one thread per pipe), or send the data through a file"),
    ((TreeEdgeKind.CHILD_EXIT,),
     "a process waits for a child to exit while the child waits on it: close the pipes and release the locks "
     "the child needs before waiting for it"),
    ((TreeEdgeKind.FILE_LOCK,),
     "take these file locks in one order in every process (or with LOCK_NB and a retry)"),
)


# A deadlock whose every wait is a read of a pipe: each process that could write waits to read.
READERS_ADVICE = ("every process that holds a write end of these pipes waits to read one: a fork child inherits "
                  "every pipe end, so close in each process the ends it does not use (right after fork; "
                  "subprocess's close_fds) — a read then ends at end-of-file once the real writers are gone — and "
                  "let one side write before it reads")


# A knot that holds while the other holders of its pipes sleep: the sleeper is what could end it.
SLEEPERS_ADVICE = ("a thread that sleeps while it holds the other end of a pipe, a socket or a file lock serves "
                   "nobody until it wakes: close in that process the ends it does not use (a fork child inherits "
                   "every end), or wake it when there is something to write (an Event or a Condition, not "
                   "time.sleep)")


def deadlock_advice(d):
    """The advice line of a deadlock across processes (model.tree.TreeDeadlock)."""
    if d.sleepers:
        return SLEEPERS_ADVICE
    # an idle thread's wait for work is no step of its own: the advice is the other waits'
    edges = [e for e in d.edges if e.kind != TreeEdgeKind.WORK_GIVER]
    if edges and all(e.kind == TreeEdgeKind.PIPE_OTHER_END and e.facts.direction == "read" for e in edges):
        return READERS_ADVICE
    kinds = {e.kind for e in edges}
    for across, advice in _TREE_ADVICE:
        if kinds.intersection(across):
            return advice
    return DEADLOCK_ADVICE[None]


def render_deadlocks(tree):
    out = []
    n = len(tree.deadlocks)
    for i, d in enumerate(tree.deadlocks):
        title = "Found one deadlock" if n == 1 else "Deadlock %d of %d" % (i + 1, n)
        out.append("%s across %d processes (%s), %d threads:" % (title, len(d.pids), d.confidence, len(d.nodes)))
        said = set()   # what a process holds is said once, at its first thread: any of them may serve it
        for node in d.nodes:
            p, th = _thread(tree, node)
            out.append("  " + _node_label(tree, node))
            if th is not None and th.blocked_on is not None:
                out.append("    " + summary(th.blocked_on, names_of(p.report)))
            if th is not None and th.moved:
                out.append("    moved between the second look's looks (%s): this may be contention, not a deadlock" %
                           ", ".join(th.moved))
            held = [t for t in _held_texts(d, node) if (node[0], t) not in said]
            said.update((node[0], t) for t in held)
            out.extend("    (%s)" % text for text in held)
        if d.sleepers:
            out.append("  unless it wakes and serves them: " + "; ".join(
                "%s %s" % (_node_label(tree, (z.pid, z.tid)), sleeper_text(z)) for z in d.sleepers))
        if d.waiting:
            out.append("  waiting on it, not part of it: %s" % ", ".join(
                _node_label(tree, w) for w in d.waiting[:MAX_WAITING_LISTED]) +
                (", and %d more" % (len(d.waiting) - MAX_WAITING_LISTED) if len(d.waiting) > MAX_WAITING_LISTED
                 else ""))
        out.append("  advice: " + deadlock_advice(d))
        out.append("")
    return out


MAX_WAITING_LISTED = 8   # threads waiting on a deadlock named in its text


def render_fork_hazards(tree):
    """Those across processes with their evidence and advice; a process's
    own, one line each (its report below has them whole)."""
    out, across = [], [(pid, h) for pid, h in tree.fork_hazards if h.facts.processes]
    if across:
        out += ["Fork hazards across processes:"]
        for pid, h in across:
            p = tree.process(pid)
            names = names_of(p.report)
            who = ", ".join(names(t) for t in h.threads) if h.threads else "the process"
            out.append("[%s] PID %d %s (%s)" % (h.kind, pid, who, h.confidence))
            out.append("  evidence: " + evidence(h, names))
            out.append("  advice: " + fork_advice(h))
    for pid, h in tree.fork_hazards:
        if not h.facts.processes:
            out.append("Fork hazard [%s] in PID %d: %s; PID %d's report below says why" % (
                h.kind, pid, hazard_title(h), pid))
    return out


def _process_line(p, depth):
    what = "PID %d" % p.pid + (" (%s)" % p.comm if p.comm else "")
    if p.report is not None:
        t = p.report.target
        what += ": %d thread%s, %s" % (len(p.report.threads), "" if len(p.report.threads) == 1 else "s",
                                       "Python %s" % t.python_version if t.python_version else "no Python")
        if p.report.deadlocks:
            what += ", %d deadlock%s within" % (len(p.report.deadlocks), "" if len(p.report.deadlocks) == 1 else "s")
        reasons = incomplete_reasons(p.report)
        if reasons:
            what += ", report incomplete (%s)" % " and ".join(reasons)
    elif p.exit is not None:
        what += ": %s, and its parent has not reaped it (a zombie)" % exit_text(p.exit)
    else:
        what += ": not examined: %s" % (p.problem or "unknown reason")
    return "  " + "  " * depth + what


def _depths(tree):
    depth = {}
    for p in tree.processes:
        depth[p.pid] = depth.get(p.parent_pid, -1) + 1 if p.parent_pid in depth else 0
    return depth


def _doing_text(x):
    """"LWP 200 in clock_nanosleep": what a thread of a stall's holder (a StallThread) does."""
    if x.syscall:
        return "LWP %d in %s" % (x.tid, x.syscall)
    return "LWP %d %s" % (x.tid, "in a system call" if x.kind == WaitKind.SYSCALL else
                          "waits on " + lock_text(x.kind, None))


def render_stalls(tree):
    """Waits on a pipe or socket that no holder of the other end serves now."""
    if not tree.stalls:
        return []
    out = ["Waits that nothing serves now (no thread of the other end's holders is free to):"]
    for st in tree.stalls:
        out.append("  " + _node_label(tree, st.waiter))
        holders = "; ".join("PID %d%s: %s%s" % (
            h.pid, " (%s)" % h.comm if h.comm else "", ", ".join(_doing_text(x) for x in h.threads),
            ", and %d more threads" % (h.thread_count - len(h.threads)) if h.thread_count > len(h.threads)
            else "") for h in st.holders)
        out.append("    waits in %s on %s; the other end is held only by %s" % (
            st.syscall or "a system call", st.link or "a " + st.kind, holders))
    out.append("")
    return out


def sleeper_text(z):
    """"sleeps (clock_nanosleep) for another 59 min 58 s, and its process holds the other ends too", from a knot's
    sleeper (a KnotSleeper)."""
    if z.left_ns is not None:
        how = "sleeps (%s) for another %s" % (z.call, duration(z.left_ns))
    elif z.requested_ns is not None:
        how = "sleeps (%s) in a sleep of %s" % (z.call, duration(z.requested_ns))
    else:
        how = "waits for a signal (%s)" % z.call
    return how + ", and its process holds the other ends too"


def tree_headline(tree):
    """The first line of a tree's answer: its deadlocks across processes,
    else a deadlock or a hang within one, else what could not be read, else
    the all-clear."""
    within = [p.pid for p in tree.processes if p.report is not None and p.report.deadlocks]
    if within:
        return "Found a deadlock within %s (its report is below); none across processes." % _pids(within)
    hangs = {}   # summary → PIDs
    for p in tree.processes:
        for what in hang_summaries(p.report) if p.report is not None else ():
            hangs.setdefault(what, []).append(p.pid)
    for pid, h in tree.fork_hazards:
        if h.hangs:
            hangs.setdefault(HANG_SUMMARIES[h.kind], []).append(pid)
    own = []   # findings whose summary names their processes itself
    for pid, v in tree.verdicts:
        if v.kind == VerdictKind.COLLECTIVE_MISMATCH:
            own.append(diverged_ranks_text(v.facts))
        else:
            hangs.setdefault(HANG_SUMMARIES[v.kind], []).append(pid)
    hangs = own + ["in %s %s" % (_pids(sorted(set(pids))), what) for what, pids in hangs.items()]
    if tree.stalls:
        hangs.append("%s wait%s on a pipe or socket nothing serves now" % (
            _count(len(tree.stalls), "thread"), "s" if len(tree.stalls) == 1 else ""))
    if hangs:
        return "Hung without a deadlock: %s." % "; ".join(hangs)
    incomplete = [(p.pid, incomplete_reasons(p.report)) for p in tree.processes if p.report is not None]
    unread = ["in PID %d %s" % (pid, " and ".join(reasons)) for pid, reasons in incomplete if reasons]
    # a process that could not be examined, or was left out of a bounded tree, is never taken for fine
    unseen = [p for p in tree.processes if p.report is None and p.exit is None]
    if [p for p in unseen if p.pid]:
        unread.append("%s not examined" % _pids([p.pid for p in unseen if p.pid]))
    if [p for p in unseen if not p.pid]:
        unread.append("%s could not be read" % _count(len([p for p in unseen if not p.pid]), "core"))
    if tree.truncated:
        unread.append("%d more descendant%s not examined (the tree is bounded)" % (
            tree.truncated, " was" if tree.truncated == 1 else "s were"))
    if unread:
        # Never a false all-clear: a process pyhang could not read may hide a wait of a cycle.
        return "Report incomplete: %s; no deadlock across processes can be ruled out." % "; ".join(unread)
    if tree.unaccounted:
        said = []
        if tree.outside:
            said.append("waits on %s outside the tree, which pyhang does not look into: %s" % (
                "a process" if len({p for w in tree.outside for p in w.pids}) == 1 else "processes",
                "; ".join(_outside_text(w) for w in tree.outside[:MAX_WAITING_LISTED]) +
                (", and %d more" % (len(tree.outside) - MAX_WAITING_LISTED)
                 if len(tree.outside) > MAX_WAITING_LISTED else "")))
        outside = {w.waiter for w in tree.outside}
        rest = [n for n in tree.unaccounted if n not in outside]
        if rest:
            listed = ", ".join("PID %d LWP %d" % n for n in rest[:MAX_WAITING_LISTED])
            more = len(rest) - MAX_WAITING_LISTED
            said.append("%s wait%s on what pyhang cannot name or does not model, or on a process it did not examine "
                        "or name (%s%s)" % (_count(len(rest), "thread"), "s" if len(rest) == 1 else "", listed,
                                            ", and %d more" % more if more > 0 else ""))
        return "Not accounted for: %s; no deadlock across processes among the waits it can follow." % "; ".join(said)
    return "No deadlock found across processes."


def _outside_text(w):
    """"PID 9 LWP 10 on PID 3 (redis-server `/usr/bin/redis-server 127.0.0.1:6379`)": a wait on processes
    outside the tree (analysis.tree.outside), each with its command and process title where known."""
    peers = {p.pid: p for p in w.peers}

    def one(pid):
        p = peers.get(pid) or ProcessPeer(pid=pid)
        about = " ".join(x for x in (p.comm, "`%s`" % p.title if p.title else None) if x)
        return "PID %d%s" % (pid, " (%s)" % about if about else "")
    return "PID %d LWP %d on %s" % (w.waiter[0], w.waiter[1], ", ".join(one(pid) for pid in w.pids))


def _tree_first_line(tree):
    """The headline, or the first deadlock's title line (without its colon)."""
    if not tree.deadlocks:
        return tree_headline(tree)
    return render_deadlocks(tree)[0].rstrip(":") + "."


def _pids(pids):
    return ("PID " if len(pids) == 1 else "PIDs ") + ", ".join(str(p) for p in pids)


def tree_answer(tree):
    """What is wrong, first: the deadlocks across processes (or the
    headline), the fork hazards across processes, the waits nothing
    serves, then each process's own answer where it has one to give."""
    out = render_deadlocks(tree) if tree.deadlocks else [tree_headline(tree), ""]
    for pid, v in tree.verdicts:
        out.append("%s: %s" % (TITLES[v.kind], verdict_text(v, names_of(tree.process(pid).report))))
        out.append("  advice: " + verdict_advice(v))
    if tree.verdicts:
        out.append("")
    hazards = render_fork_hazards(tree)
    if hazards:
        out.extend(hazards + [""])
    out.extend(render_stalls(tree))
    own = [(p.pid, headline(p.report)) for p in tree.processes if p.report is not None]
    # (a process that waits on others: the tree has looked at them together)
    own = [(pid, line) for pid, line in own if line not in (NOTHING_FOUND, NO_PYTHON_FOUND) and
           not line.startswith(WAITS_PREFIX)]
    if own:
        out.append("Within each process:")
        out.extend("  PID %d: %s" % (pid, line) for pid, line in own)
        out.append("")
    return out


def render_tree_text(tree):
    count = len(tree.processes)
    head = "pyhang report --tree: "
    head += ("process %d and %d descendant%s" % (tree.root_pid, count - 1, "" if count == 2 else "s")
             if tree.root_pid is not None else "%d processes" % count)
    out = [head]
    if tree.truncated:
        out.append("warning: %d more descendant%s not examined (the tree is bounded)" % (
            tree.truncated, " was" if tree.truncated == 1 else "s were"))
    if tree.unfollowed:
        out.append("warning: these cores record no fd table (cores `pyhang gcore` makes do): waits on pipes and "
                   "sockets are not followed across processes (%s)" % ", ".join("PID %d LWP %d" % n for n in tree.unfollowed[:8]) +
                   ("" if len(tree.unfollowed) <= 8 else ", and %d more" % (len(tree.unfollowed) - 8)))
    out.append("")
    out.extend(tree_answer(tree))
    depth = _depths(tree)
    out.append("Processes:")
    out.extend(_process_line(p, depth.get(p.pid, 0)) for p in tree.processes)
    for p in tree.processes:
        if p.report is None:
            continue
        out.append("")
        out.append("=" * 8 + " PID %d%s " % (p.pid, " (parent %d)" % p.parent_pid if p.parent_pid else "") + "=" * 8)
        out.append(render_text(p.report, in_tree=True))
    return "\n".join(out)


def _edge_json(tree, e):
    out = {"waiter": e.waiter[1], "waiter_pid": e.waiter[0], "owner": e.owner[1], "owner_pid": e.owner[0],
           "kind": e.kind, "confidence": e.confidence}
    out.update(facts_data(e.facts))   # (model.tree_edge_facts: beside the edge's own, None left out)
    return out


def _verdict_json(v, names):
    return {"kind": v.kind, "threads": list(v.threads), "text": verdict_text(v, names), "advice": verdict_advice(v),
            "facts": render_json.verdict_facts(v.facts)}


def tree_json(tree):
    processes = []
    for p in tree.processes:
        if p.report is not None:
            doc = render_json.to_json(p.report)
        else:
            doc = {"pid": p.pid, "problem": p.problem}
            if p.comm:
                doc["comm"] = p.comm
            if p.exit is not None:
                doc["exit"] = exit_json(p.exit)
        doc["parent_pid"] = p.parent_pid
        processes.append(doc)
    hazards = []
    for pid, h in tree.fork_hazards:
        d = hazard_json(h, names_of(tree.process(pid).report))
        d["pid"] = pid
        spans = h.facts.processes
        if spans:
            d["processes"] = spans
        if h.variant == "parent-reference":
            d["parent_references"] = [dict(to_data(t.references), tid=t.tid, pid=h.facts.parent_pid)
                                      for t in h.facts.parent_threads]
        hazards.append(d)
    return {
        "schema": TREE_SCHEMA,
        "pyhang_version": VERSION,
        "headline": _tree_first_line(tree),
        "root_pid": tree.root_pid,
        "processes": processes,
        "deadlocks": [{"threads": [tid for _, tid in d.nodes], "processes": d.pids, "confidence": d.confidence,
                       "advice": deadlock_advice(d),
                       "edges": [_edge_json(tree, e) for e in d.edges],
                       "waiting": [{"pid": pid, "tid": tid} for pid, tid in d.waiting],
                       "sleepers": to_data(d.sleepers)} for d in tree.deadlocks],
        "fork_hazards": hazards,
        "verdicts": [dict(_verdict_json(v, names_of(tree.process(pid).report)), pid=pid) for pid, v in tree.verdicts],
        "stalls": [{"waiter": st.waiter[1], "waiter_pid": st.waiter[0], "syscall": st.syscall, "fd": st.fd,
                    "kind": st.kind, "link": st.link, "holders": to_data(st.holders)} for st in tree.stalls],
        "exit_status": tree.exit_status,
        "unexamined": tree.truncated,
        "unfollowed": [{"pid": pid, "tid": tid} for pid, tid in tree.unfollowed],
        "unaccounted": [{"pid": pid, "tid": tid} for pid, tid in tree.unaccounted],
        "outside": [{"pid": w.waiter[0], "tid": w.waiter[1], "pids": w.pids, "peers": to_data(w.peers)}
                    for w in tree.outside],
    }


def dumps(tree, pretty=False):
    return json.dumps(tree_json(tree), indent=1 if pretty else None, separators=None if pretty else (",", ":"))
