"""The text of `gil-holder`."""
from pyhang.render.names import ThreadNames
from pyhang.render.target import warning_text
from pyhang.render.verdicts import holder_blocked_text


def render_gils(entries, no_python, threads, warnings=()):
    """`entries`: [InterpreterGil]; `threads`: the process's ThreadSnapshots
    (gdb numbers for names)."""
    names = ThreadNames(threads)

    def who(tid):
        return names(tid) if names.alive(tid) else "LWP %s (not a thread gdb knows)" % tid

    out = ["warning: " + warning_text(w) for w in warnings]
    for g in entries:
        label = "GIL" if g.interp_id < 0 else "GIL of interpreter %d" % g.interp_id
        if g.holder_tid:
            out.append("%s: held by %s" % (label, who(g.holder_tid)))
            if g.holder_blocked:
                out.append("  " + holder_blocked_text(g.holder_blocked, names))
        elif g.locked is False:
            out.append("%s: not held" % label)
        elif g.locked is None:
            out.append("%s: state unknown" % label)
        else:
            out.append("%s: locked, holder not found among the thread states" % label)
        out.append("  waiting for it: %s" % (", ".join(who(t) for t in g.waiting) or "none"))
        out.append("  running with it released (native code, sleeping or blocked): %s" % (
            ", ".join(who(t) for t in g.released) or "none"))
    if no_python:
        out.append("no Python thread state: %s" % ", ".join(who(t) for t in no_python))
    return "\n".join(out)
