"""Wait-for edges from the decoded threads, the deadlocks found in them, and
verdicts for blocked processes without a cycle.

The graph search and the driver-lock heuristics are native
(native/src/waitgraph.cpp); this module turns the report's threads into their
inputs and their results into the report's `edges`, `deadlocks` and
`verdicts`.  No gdb here.
"""
import os

from pyhang import compose


def certain_edges(threads):
    """One edge per (waiter, owner) the decoders know for sure."""
    edges = []
    for th in threads:
        b = th.blocked_on
        if b is None:
            continue
        for owner in b.owners:
            if owner == th.tid:
                continue
            edges.append({"waiter": th.tid, "owner": owner, "kind": b.kind, "address": b.address,
                          "source": b.owner_source, "evidence": b.evidence or ""})
    return edges


def _is_system(path):
    base = os.path.basename(path or "")
    return base.startswith(("libc.so", "libc-", "libpthread", "ld-linux"))


def needs_deeper_frames(threads):
    """Whether some thread waits on a native lock that records no owner: the
    likely-holder heuristics then need to see deeper into blocked threads."""
    for th in threads:
        b = th.blocked_on
        if b is None or b.owners or not (b.kind.startswith("rwlock") or b.kind in ("futex", "mutex")):
            continue
        lib = next((f.library for f in th.native_frames if f.library and not _is_system(f.library)), None)
        if lib:
            return True
    return False


def thread_facts(threads):
    """Inputs of the native likely_holders heuristic."""
    facts = []
    for th in threads:
        b = th.blocked_on
        facts.append({
            "tid": th.tid, "name": th.name,
            "frames": [{"function": f.function, "library": f.library} for f in th.native_frames],
            "blocked_kind": b.kind if b else None, "blocked_address": b.address if b else None,
            "owners": list(b.owners) if b else [], "waits_for_gil": th.gil == compose.WAITING,
        })
    return facts


def holds(edges, tid):
    """What others wait for from `tid`: [(kind, address)], each once."""
    seen = []
    for e in edges:
        if e["owner"] == tid and (e["kind"], e["address"]) not in seen:
            seen.append((e["kind"], e["address"]))
    return seen


def verdicts(report, holder_blocked_line=None):
    """Blocked-but-no-cycle situations, each {kind, threads, text}."""
    out = []
    py_threads = [t for t in report.threads if t.gil not in (compose.NO_PYTHON, compose.UNKNOWN)]
    waiting = [t for t in py_threads if t.gil == compose.WAITING]
    if report.gil.locked is False and waiting and len(waiting) == len(py_threads):
        out.append({"kind": "gil-nobody-holds", "threads": [t.tid for t in waiting],
                    "text": "every Python thread waits for the GIL and no thread holds it"})
    if holder_blocked_line:
        out.append({"kind": "gil-holder-blocked", "threads": [report.gil.holder_tid],
                    "text": holder_blocked_line})
    for t in report.threads:
        b = t.blocked_on
        if b and b.owners and b.owner_alive is False:
            out.append({"kind": "owner-gone", "threads": [t.tid] + list(b.owners),
                        "text": "Thread %d (LWP %d) waits on %s 0x%x whose owner LWP %s is not a thread of this "
                                "process: no live thread can release it" % (
                                    t.gdb_num, t.tid, b.kind, b.address or 0,
                                    ", ".join(str(o) for o in b.owners))})
    return out


def deadlock_json(cycle):
    return {"threads": cycle["threads"], "confidence": cycle["confidence"],
            "edges": [{"waiter": e["waiter"], "kind": e["kind"], "address": e["address"], "owner": e["owner"],
                       "source": e["source"], "evidence": e.get("evidence", "")} for e in cycle["edges"]]}
