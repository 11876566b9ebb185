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


def render_text(report: Report) -> str:
    out = ["pyhang report: " + describe_target(report)]
    for w in report.warnings:
        out.append("warning: " + w)
    out.append("%d thread%s" % (len(report.threads), "" if len(report.threads) == 1 else "s"))
    for th in report.threads:
        out.append("")
        out.append("%s  GIL: %s" % (thread_header(th), th.gil))
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
    return "\n".join(out)
