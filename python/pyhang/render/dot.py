"""The wait-for graph as a picture: Graphviz DOT (`pyhang report --dot`,
`--tree --dot`, and `pyhang merge --dot`: the groups of many processes),
rendered with `dot -Tsvg` or `dot -Tpng`.  A picture of one graph, for a
process or a tree of up to dozens of processes; a thousand ranks are
grouped by `merge` first (an HTML page would add nothing a group box does
not say).

Each thread that waits, or that something waits for, is a box (threads of
one process in one frame, for a tree); an edge goes from a waiter to the
thread that holds what it waits for, labelled with what that is; edges of
a deadlock are red and bold, likely ones dashed.  A wait whose owner pyhang
cannot name ends in a grey "owner unknown" note, never on a thread (a
torch.distributed collective's in "the other ranks (other processes)").
"""
import textwrap

from pyhang.model.kinds import HANG_VERDICTS, Confidence, OwnerSource, VerdictKind, WaitKind
from pyhang.model.report import Hazard, program_frame
from pyhang.model.waits import syscall_of
from pyhang.render.forks import HAZARD_TITLES, evidence as hazard_evidence
from pyhang.render.merge import member_label, ranks_text, stack_place
from pyhang.render.names import lock_text, object_name, thread_title
from pyhang.render.text import names_of
from pyhang.render.verdicts import HANG_SUMMARIES, QUEUE_SUMMARIES, findings, headline, verdict_text

DEADLOCK = 'color="#c0392b", fontcolor="#c0392b", penwidth=2.2'
LIKELY = "style=dashed"
UNKNOWN = 'shape=note, style="filled,dashed", fillcolor="#eeeeee", color="#888888", fontcolor="#555555"'
# A finding (a verdict or fork hazard): a hang's red, the rest grey
HANG_FINDING = 'shape=box, style="filled", fillcolor="#fadbd8", color="#c0392b", fontcolor="#78281f"'
OTHER_FINDING = 'shape=box, style="filled", fillcolor="#f2f3f4", color="#888888", fontcolor="#444444"'
IN_FINDING = 'style=dotted, color="#888888", arrowhead=none'

# The first line of a finding's box, for the kinds HANG_SUMMARIES does not name
FINDING_TITLES = {
    VerdictKind.GIL_HANDOVER: "the GIL is being handed over",
    VerdictKind.OWNERS_UNKNOWN: "waits on objects whose owner pyhang cannot name",
    VerdictKind.POOL_IDLE: "native pool workers wait for work (idle by design)",
    VerdictKind.WAITS_ON_PROCESS: "waits on other processes",
    VerdictKind.IDLE: "idle: waits for work or an event (by design)",
    VerdictKind.INCOMPLETE: "report incomplete",
    VerdictKind.UNACCOUNTED: "not accounted for: waits pyhang does not model",
}
FINDING_WIDTH = 56     # characters of a finding's text on one line of its box
FINDING_LINES = 6      # lines of its text at most


def quoted(text):
    """A DOT string: double quotes and backslashes escaped, newlines as \\n."""
    return '"%s"' % str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _node_id(pid, tid):
    return "p%d_t%d" % (pid or 0, tid)


def _wait_label(kind, address, name=None, symbol=None):
    """What is waited for: the object, and the variable that names it, else the ELF symbol it lies in."""
    text = lock_text(kind, address)
    name = object_name(name) or symbol
    return text + ("\n(%s)" % name if name else "")


def _blocked_label(b):
    return _wait_label(b.kind, b.address, b.name, b.symbol)


def _frame_place(f):
    return "%s:%s in %s" % (f.file.rsplit("/", 1)[-1], f.line, f.function)


def _thread_box(th, pid, in_cycle):
    """A thread's box: its title, the program's own innermost frame (where it made the call that waits),
    and the innermost frame when that is a library's."""
    label = thread_title(th.gdb_num, th.tid, th.name, th.python_name)
    own = program_frame(th.python_frames)
    if own is not None:
        label += "\n" + _frame_place(own)
    inner = th.python_frames[0] if th.python_frames else None
    if inner is not None and inner is not own:
        label += "\n(in %s)" % _frame_place(inner) if own is not None else "\n" + _frame_place(inner)
    style = ', color="#c0392b", penwidth=2' if in_cycle else ""
    return "%s [label=%s%s];" % (_node_id(pid, th.tid), quoted(label), style)


def _finding_title(f):
    if isinstance(f, Hazard):
        return "fork hazard: " + HAZARD_TITLES[f.kind] if not f.hangs else HAZARD_TITLES[f.kind]
    queue = QUEUE_SUMMARIES.get(f.facts.kind) if f.kind == VerdictKind.NOTHING_CAN_WAKE else None
    return queue or HANG_SUMMARIES.get(f.kind) or FINDING_TITLES.get(f.kind) or f.kind


def _finding_hangs(f):
    return f.hangs if isinstance(f, Hazard) else f.kind in HANG_VERDICTS


def _finding_label(f, names):
    """A finding's box: what it is, then its sentence (the text report's), wrapped and cut short."""
    text = hazard_evidence(f, names) if isinstance(f, Hazard) else verdict_text(f, names)
    lines = textwrap.wrap(text or "", FINDING_WIDTH)
    if len(lines) > FINDING_LINES:
        lines = lines[:FINDING_LINES - 1] + [lines[FINDING_LINES - 1][:FINDING_WIDTH - 4] + " ..."]
    title = _finding_title(f)
    return "\n".join([title[:1].upper() + title[1:]] + lines)


def _finding_lines(report, pid, indent, in_tree=False):
    """(lines, {TID: the nodes of the findings naming it, most serious first}) of the report's verdicts and
    fork hazards, most serious first: a box each.  `in_tree`: a process of a tree, whose waits on other
    processes are its edges across them."""
    names = names_of(report)
    lines, named = [], {}
    for i, f in enumerate(findings(report)):
        if in_tree and f.kind == VerdictKind.WAITS_ON_PROCESS:
            continue
        node = "p%d_f%d" % (pid or 0, i)
        lines.append(indent + "%s [label=%s, %s];" % (node, quoted(_finding_label(f, names)),
                                                      HANG_FINDING if _finding_hangs(f) else OTHER_FINDING))
        for tid in dict.fromkeys(f.threads):
            named.setdefault(tid, []).append(node)
    return lines, named


def _process_lines(report, pid, cycle_edges, indent, also=(), in_tree=False):
    """Boxes and edges of one process's report; `also`: TIDs to show
    besides (the ends of edges to other processes)."""
    threads = {t.tid: t for t in report.threads}
    shown, lines, unknown = set(also), [], 0
    finding_lines, findings_of = _finding_lines(report, pid, indent, in_tree)
    shown.update(tid for tid in findings_of if tid in threads)
    for e in report.edges:
        shown.update((e.waiter, e.owner))
    for t in report.threads:
        b = t.blocked_on
        if b is not None and not b.owners and b.kind != WaitKind.SYSCALL:
            shown.add(t.tid)
    in_cycle = {tid for (p, tid) in {n for key in cycle_edges for n in key[:2]} if p == pid}
    for tid in sorted(shown):
        if tid in threads:
            lines.append(indent + _thread_box(threads[tid], pid, tid in in_cycle))
        else:
            lines.append(indent + "%s [label=%s];" % (_node_id(pid, tid), quoted("LWP %d (not in this process's "
                                                                                  "threads)" % tid)))
    for e in report.edges:
        waiter = threads.get(e.waiter)
        b = waiter.blocked_on if waiter is not None else None
        own = b is not None and b.address == e.address
        label = _blocked_label(b) if own else _wait_label(e.kind, e.address)
        attrs = ["label=%s" % quoted(label)]
        if ((pid, e.waiter), (pid, e.owner)) in cycle_edges:
            attrs.append(DEADLOCK)
        if e.source == OwnerSource.HEURISTIC:
            attrs.append(LIKELY)
        lines.append(indent + "%s -> %s [%s];" % (_node_id(pid, e.waiter), _node_id(pid, e.owner), ", ".join(attrs)))
    lines += finding_lines
    waiters = {e.waiter for e in report.edges}
    for tid in sorted(findings_of):
        if tid not in shown:
            continue
        t = threads.get(tid)
        b = t.blocked_on if t is not None else None
        # a thread in a finding: its wait, when no edge of its own says it, labels its line to the first finding
        label = None if b is None else syscall_of(b).name if b.kind == WaitKind.SYSCALL else \
            _blocked_label(b) if tid not in waiters else None
        for k, node in enumerate(findings_of[tid]):
            lines.append(indent + "%s -> %s [%s%s];" % (_node_id(pid, tid), node, IN_FINDING,
                                                        ", label=%s" % quoted(label) if label and not k else ""))
    for t in report.threads:
        b = t.blocked_on
        if b is None or b.owners or b.kind == WaitKind.SYSCALL or t.tid in waiters or t.tid in findings_of:
            continue
        unknown += 1
        node = "p%d_unknown%d" % (pid or 0, unknown)
        # a collective's owners are the other ranks: other processes, known but not threads of this one
        note = "the other ranks (other processes)" if b.kind == WaitKind.COLLECTIVE else "owner unknown"
        lines.append(indent + "%s [label=%s, %s];" % (node, quoted(note), UNKNOWN))
        lines.append(indent + "%s -> %s [label=%s, %s];" % (_node_id(pid, t.tid), node,
                                                            quoted(_blocked_label(b)), LIKELY))
    return lines


def _header(title):
    return ["digraph pyhang {",
            "  label=%s; labelloc=t; fontname=Helvetica;" % quoted(title),
            "  node [shape=box, style=rounded, fontname=Helvetica, fontsize=10];",
            "  edge [fontname=Helvetica, fontsize=9];"]


def _across_label(edge, report):
    """What a thread waits for from another process: its system call and
    the fd's object (a pipe, a socket), else the edge's kind."""
    th = report.thread(edge.waiter[1]) if report is not None else None
    b = th.blocked_on if th is not None else None
    s = syscall_of(b)
    if s.name and s.has_fd():
        link = s.object.link if s.object is not None else None
        return "%s on fd %d%s" % (s.name, s.fd, "\n%s" % link if link else "")
    return edge.kind


def report_dot(report):
    """The wait-for graph of one process's Report."""
    t = report.target
    pid = t.pid or 0
    lines = _header("pyhang report: %s %s\n%s" % ("core" if t.kind == "core" else "process", t.core or pid,
                                                 "\n".join(textwrap.wrap(headline(report), 100))))
    cycle_edges = {((pid, e.waiter), (pid, e.owner)) for d in report.deadlocks for e in d.edges}
    lines += _process_lines(report, pid, cycle_edges, "  ")
    lines.append("}")
    return "\n".join(lines) + "\n"


def tree_dot(tree):
    """The wait-for graph of a TreeReport: one frame per process examined,
    the edges across processes between them."""
    cycle_edges = {(e.waiter, e.owner) for d in tree.deadlocks for e in d.edges}
    found = "%d deadlock%s across processes" % (len(tree.deadlocks), "" if len(tree.deadlocks) == 1 else "s") \
        if tree.deadlocks else "no deadlock across processes"
    lines = _header("pyhang report --tree: process %s and its descendants, %s" % (tree.root_pid, found))
    across = [e for e in tree.edges if e.waiter[0] != e.owner[0]]
    for entry in tree.processes:
        ends = {n[1] for e in across for n in (e.waiter, e.owner) if n[0] == entry.pid}
        lines.append("  subgraph cluster_%d {" % entry.pid)
        title = "PID %d%s" % (entry.pid, " (%s)" % entry.comm if entry.comm else "")
        if entry.report is None:
            title += "\nnot examined: %s" % (entry.problem or "?")
        lines.append("    label=%s; style=rounded; color=\"#888888\";" % quoted(title))
        if entry.report is not None:
            lines += _process_lines(entry.report, entry.pid, cycle_edges, "    ", ends, in_tree=True)
        lines.append("    p%d_anchor [shape=point, style=invis];" % entry.pid)
        lines.append("  }")
    reports = {p.pid: p.report for p in tree.processes if p.report is not None}
    for e in across:  # (edges inside one process are drawn with its report's)
        (wp, wt), (op, ot) = e.waiter, e.owner
        attrs = ["label=%s" % quoted(_across_label(e, reports.get(wp)))]
        if (e.waiter, e.owner) in cycle_edges:
            attrs.append(DEADLOCK)
        if e.confidence != Confidence.CERTAIN:
            attrs.append(LIKELY)
        lines.append("  %s -> %s [%s];" % (_node_id(wp, wt), _node_id(op, ot), ", ".join(attrs)))
    lines.append("}")
    return "\n".join(lines) + "\n"


MERGE_FRAMES = 3      # innermost frames of a group's main thread in its box
MERGE_MEMBERS = 4     # members named in a group's box


def _group_label(i, g):
    lines = ["Group %d: %d process%s" % (i + 1, g.size, "" if g.size == 1 else "es"),
             ", ".join(member_label(m) for m in g.members[:MERGE_MEMBERS]) +
             (", and %d more" % (g.size - MERGE_MEMBERS) if g.size > MERGE_MEMBERS else "")]
    threads = sorted(g.members[0].threads, key=lambda t: (t[0] != "MainThread", t[1]))
    if threads:
        name, stack = threads[0]
        lines.append("%s%s" % (name or "a thread", " (and %d more threads)" % (len(threads) - 1)
                                if len(threads) > 1 else ""))
        lines.extend("  %s (%s:%d)" % f for f in stack[:MERGE_FRAMES])
    else:
        lines.append("(no thread runs Python)")
    return "\n".join(lines)


def merge_dot(merge):
    """`pyhang merge --dot`: a box per group of processes with the same
    Python stacks (its size, members, the innermost frames of its main
    thread); each odd one out red, with an edge to the largest group
    labelled where it differs."""
    lines = _header("pyhang merge: %d process%s in %d group%s by Python stack" % (
        len(merge.members), "" if len(merge.members) == 1 else "es", len(merge.groups),
        "" if len(merge.groups) == 1 else "s"))
    odd = {id(d.member) for d in merge.differences}
    group_of = {}
    for i, g in enumerate(merge.groups):
        red = any(id(m) in odd for m in g.members)
        lines.append("  g%d [label=%s%s];" % (i, quoted(_group_label(i, g)), ", " + DEADLOCK if red else ""))
        for m in g.members:
            group_of[id(m)] = i
    for d in merge.differences:
        at = group_of.get(id(d.member))
        if at is not None and at != 0:
            where = "%s\nwhere %d others are in\n%s" % (stack_place(d.stack), d.others, stack_place(d.others_stack))
            lines.append("  g%d -> g0 [label=%s, %s, %s];" % (at, quoted(where), DEADLOCK, LIKELY))
    lines.append("}")
    return "\n".join(lines) + "\n"


MAX_TREE_NODES = 400     # boxes of a prefix tree drawn


def merge_tree_dot(merge):
    """`pyhang job --dot`: the prefix tree of the main threads' Python
    stacks (STAT's), outermost frame at the top: a box per run of frames
    the same ranks share, each edge labelled with the ranks that take it;
    the branches only odd classes take are red."""
    lines = _header("pyhang job: %d rank%s, where their main threads wait" % (
        len(merge.members), "" if len(merge.members) == 1 else "s"))
    odd = {id(m) for c in merge.classes if c.odd for m in c.members}
    count = [0]

    def box(node, parent):
        frames = [node.frame]
        while len(node.children) == 1 and len(next(iter(node.children.values())).members) == len(node.members):
            node = next(iter(node.children.values()))
            frames.append(node.frame)
        name = "t%d" % count[0]
        count[0] += 1
        red = all(id(m) in odd for m in node.members)
        label = "\n".join("%s (%s:%d)" % f for f in frames[:12]) + ("\n..." if len(frames) > 12 else "")
        if parent is None:
            label = "%s\n%s" % (ranks_text(node.members), label)
        lines.append("  %s [label=%s%s];" % (name, quoted(label), ", " + DEADLOCK if red else ""))
        if parent is not None:
            lines.append("  %s -> %s [label=%s%s];" % (parent, name, quoted(ranks_text(node.members)),
                                                     ", " + DEADLOCK if red else ""))
        for child in node.children.values():
            if count[0] < MAX_TREE_NODES:
                box(child, name)
    for top in merge.tree.children.values():
        box(top, None)
    lines.append("}")
    return "\n".join(lines) + "\n"
