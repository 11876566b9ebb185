"""The text of the fork-hazards command."""
from pyhang.render.names import ThreadNames


def render_fork_hazards(report, analysis):
    """The text of the fork-hazards command."""
    names = ThreadNames(report.threads)
    t = report.target
    where = "live process %s" % t.pid if t.kind == "live" else "core %s" % (t.core or "?")
    lines = ["fork-hazards: %s, %s" % (where, t.executable or "?")]
    if analysis.child:
        lines.append("This process is a fork child%s that did not exec:" % (
            " of PID %d" % analysis.parent_pid if analysis.parent_pid else ""))
        lines += ["  - " + e for e in analysis.child_evidence]
    else:
        lines.append("No evidence that this process is a fork child.")
    lines.append("")
    if analysis.hazards:
        lines.append("%d fork hazard%s:" % (len(analysis.hazards), "" if len(analysis.hazards) == 1 else "s"))
        for h in analysis.hazards:
            who = ", ".join(names(x) for x in h["threads"]) if h["threads"] else "the process"
            lines.append("[%s] %s (%s)" % (h["kind"], who, h.get("confidence", "certain")))
            lines.append("  evidence: " + h["evidence"])
            lines.append("  advice: " + h["advice"])
    else:
        lines.append("No fork hazards found.")
    lines.append("Checked: " + "; ".join(analysis.checked))
    for p in analysis.problems:
        lines.append("  (could not read: %s)" % p)
    return "\n".join(lines)
