"""Text rendering of a report, for people at a gdb prompt."""
import os

from pyhang.report import Report, ThreadReport


def _lib(path):
    return os.path.basename(path) if path else "??"


def native_frame_line(i, f):
    name = f.function + ("+%d" % f.offset if f.offset else "") if f.function else "??"
    return "#%-2d 0x%016x in %s (%s)" % (i, f.pc, name, _lib(f.library))


def python_frame_line(f):
    return 'File "%s", line %s, in %s' % (f.file, f.line if f.line >= 0 else "?", f.function)


def thread_header(th: ThreadReport):
    name = ' "%s"' % th.name if th.name else ""
    return "Thread %d (LWP %d)%s" % (th.gdb_num, th.tid, name)


def describe_target(report: Report):
    t = report.target
    if t.kind == "core":
        where = "core file %s (pid %s)" % (t.core, t.pid)
    elif t.kind == "live":
        where = "live process %s" % t.pid
    else:
        where = "%s target" % t.kind
    parts = [where]
    if t.executable:
        parts.append(t.executable)
    parts.append("Python %s" % t.python_version if t.python_version else "no Python runtime found")
    return ", ".join(parts)


def _thread_block(th, out, also=None):
    header = "%s  GIL: %s" % (thread_header(th), th.gil)
    out.append("")
    out.append(header)
    if also:
        out.append("  and %d more thread%s in the same state with the same stacks: %s" % (
            len(also), "" if len(also) == 1 else "s",
            ", ".join("LWP %d" % t.tid for t in also[:12]) + (", ..." if len(also) > 12 else "")))
    if th.problem:
        out.append("  problem: " + th.problem)
    if th.blocked_on:
        out.append("  blocked: " + th.blocked_on.detail)
    if th.python_frames:
        out.append("  Python stack (innermost first):")
        out.extend("    " + python_frame_line(f) for f in th.python_frames)
    if th.native_frames:
        out.append("  native frames:")
        out.extend("    " + native_frame_line(i, f) for i, f in enumerate(th.native_frames))


def _wait_site(th):
    """Where a thread waits: its innermost Python frame and the native
    function (or library) it waits in."""
    parts = []
    if th.python_frames:
        parts.append(python_frame_line(th.python_frames[0]))
    named = next((f for f in th.native_frames if f.function), None)
    if named:
        parts.append("in %s (%s)" % (named.function, _lib(named.library)))
    return "; ".join(parts)


def _holds_text(kind, address):
    if kind == "gil":
        return "the GIL"
    noun = {"rwlock-read": "rwlock", "rwlock-write": "rwlock", "py-lock": "threading.Lock",
            "py-rlock": "threading.RLock"}.get(kind, kind)
    return "%s 0x%x" % (noun, address) if address is not None else noun


def render_deadlocks(report, by_tid):
    out = []
    n = len(report.deadlocks)
    for i, d in enumerate(report.deadlocks):
        title = "Found one deadlock" if n == 1 else "Deadlock %d of %d" % (i + 1, n)
        out.append("%s (%s), %d threads:" % (title, d["confidence"], len(d["threads"])))
        for e in d["edges"]:
            th = by_tid.get(e["waiter"])
            out.append("  " + (thread_header(th) if th else "LWP %d" % e["waiter"]))
            held = [ed for ed in d["edges"] if ed["owner"] == e["waiter"]]
            for h in held:
                out.append("    holds %s" % _holds_text(h["kind"], h["address"]))
            if th and th.blocked_on:
                out.append("    %s" % th.blocked_on.detail)
            if e["source"] == "heuristic":
                out.append("    (likely holder, not recorded by the lock: %s)" % e["evidence"])
            if th:
                site = _wait_site(th)
                if site:
                    out.append("    at " + site)
        out.append("")
    return out


def render_text(report: Report) -> str:
    out = ["pyhang report: " + describe_target(report)]
    for w in report.warnings:
        out.append("warning: " + w)
    by_tid = {t.tid: t for t in report.threads}
    out.append("%d thread%s" % (len(report.threads), "" if len(report.threads) == 1 else "s"))
    out.append("")
    if report.deadlocks:
        out.extend(render_deadlocks(report, by_tid))
    else:
        out.append("No deadlock found.")
    for v in report.verdicts:
        out.append("Verdict: " + v["text"])
    for h in report.fork_hazards:
        out.append("Fork hazard [%s]: %s" % (h["kind"], h["evidence"]))
        if h.get("advice"):
            out.append("  advice: " + h["advice"])
    involved = {tid for d in report.deadlocks for tid in d["threads"]}
    if involved:
        out.append("")
        out.append("Threads in deadlocks:")
        for th in report.threads:
            if th.tid in involved:
                _thread_block(th, out)
        if len(involved) < len(report.threads):
            out.append("")
            out.append("Other threads:")
    # Threads in the same state with the same stacks take one block.
    groups = {}
    for th in report.threads:
        if th.tid in involved:
            continue
        key = (th.gil, th.blocked_on.kind if th.blocked_on else None,
               tuple((f.function, f.file, f.line) for f in th.python_frames),
               tuple((f.function, f.library) for f in th.native_frames))
        groups.setdefault(key, []).append(th)
    for members in groups.values():
        _thread_block(members[0], out, also=members[1:] if len(members) > 1 else None)
    return "\n".join(out)
