"""`pyhang merge REPORT.json...`: the processes grouped by their Python
stacks, largest group first, the odd ones called out; and its
"pyhang-merge/1" JSON document (docs/json-contract.md,
docs/pyhang-merge-1.schema.json)."""
import json

from pyhang import VERSION
from pyhang.model.kinds import MergeProblem


def merge_ranges(numbers):
    """[(first, last)] of sorted distinct ints, runs compressed."""
    out = []
    for n in sorted(set(numbers)):
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return [tuple(r) for r in out]

MERGE_SCHEMA = "pyhang-merge/1"
MAX_MEMBERS = 8          # members named per group in the text
MAX_TREE_LINES = 200     # lines of the prefix tree in the text
MAX_CLASSES = 16         # odd classes said in the text


def member_label(m):
    if m.rank is not None:
        return "rank %d (%s / PID %s)" % (m.rank, m.node or m.source, m.pid if m.pid is not None else "?")
    return "%s / PID %s" % (m.node or m.source, m.pid if m.pid is not None else "?")


def stack_place(stack):
    if not stack:
        return "no Python"
    f = stack[0]
    return "%s (%s:%d)" % f


def _thread(name):
    return "its %s" % name if name else "a thread"


def difference_text(d):
    if not d.stack:
        return "%s differs: it has no thread in %s, where %d others have %s" % (
            member_label(d.member), stack_place(d.others_stack), d.others, "one" if d.thread is None else d.thread)
    if not d.others_stack:
        return "%s differs: %s is in %s, a thread the %d others do not have" % (
            member_label(d.member), _thread(d.thread), stack_place(d.stack), d.others)
    if d.stack[0] != d.others_stack[0]:
        return "%s differs: %s is in %s while %d others are in %s" % (
            member_label(d.member), _thread(d.thread), stack_place(d.stack), d.others, stack_place(d.others_stack))
    # the same innermost frame, reached another way: where the two stacks part, from the outermost
    mine, other = parting(d.stack, d.others_stack)
    return "%s differs: %s is in %s as %d others are, by another path: %d frames where theirs have %d, " \
        "parting at %s against %s" % (
            member_label(d.member), _thread(d.thread), stack_place(d.stack), d.others, len(d.stack), len(d.others_stack),
            stack_place(d.stack[len(mine) - 1:]), stack_place(d.others_stack[len(other) - 1:]))


def problem_text(p):
    """Why a file (or a process in it) could not be merged (analysis.merge.Problem)."""
    f = p.facts
    if p.kind == MergeProblem.UNREADABLE:
        return "cannot be read (%s)" % f["error"]
    if p.kind == MergeProblem.NOT_JSON:
        return "not JSON (%s)" % f["error"]
    if p.kind == MergeProblem.NOT_A_REPORT:
        return "not a pyhang report (schema %r; %s expected)" % (f["schema"], " or ".join(f["expected"]))
    if p.kind == MergeProblem.NOT_EXAMINED:
        return "PID %s was not examined: %s" % (f["pid"], f["problem"])
    if p.kind == MergeProblem.OTHER_VERSION:
        return "a document of another pyhang (%s%s), which this pyhang %s does not read: left out" % (
            f["schema"], ", pyhang %s" % f["version"] if f.get("version") else "", VERSION)
    if p.kind == MergeProblem.GARBAGE:
        return "%d line%s of its answer %s no pyhang document, left out (the first: %r)" % (
            f["lines"], "" if f["lines"] == 1 else "s", "is" if f["lines"] == 1 else "are", f["first"])
    if p.kind == MergeProblem.TRUNCATED:
        return "its answer ends before its last document: cut short after %s" % _ranks_read(f["ranks"])
    if p.kind == MergeProblem.NODE_TIMEOUT:
        return "no complete answer within its deadline of %gs (stopped; %s)" % (f["deadline"], _ranks_read(f["ranks"]))
    if p.kind == MergeProblem.NODE_FAILED:
        return "failed (exit status %s%s; %s)" % (f["status"], ": %s" % f["error"] if f.get("error") else "",
                                                  _ranks_read(f["ranks"]))
    if p.kind == MergeProblem.NODE_PROBLEM:
        return "its pyhang could not look: %s" % f["problem"]
    if p.kind == MergeProblem.NO_RANKS:
        return "runs no Python process of the job (looked up through %s)" % (f.get("found_by") or "its processes")
    if p.kind == MergeProblem.RANK_NOT_READ:
        return "%sPID %s has no report: %s" % ("rank %d, " % f["rank"] if f.get("rank") is not None else "",
                                               f["pid"], f["problem"])
    lacks = {MergeProblem.NO_THREADS: "threads", MergeProblem.NO_PROCESSES: "processes"}[p.kind]
    return "a %s document pyhang did not write: it has no %s list" % (f["schema"], lacks)


def _ranks_read(n):
    return "%d rank report%s read before" % (n, "" if n == 1 else "s") if n else "no rank report read"


MAX_RANGES = 8           # rank ranges said in one place


def ranges_text(numbers):
    """"0-62, 64-127"; past MAX_RANGES ranges, the first ones and how many in all."""
    found = merge_ranges(numbers)
    text = ", ".join("%d" % a if a == b else "%d-%d" % (a, b) for a, b in found[:MAX_RANGES])
    if len(found) > MAX_RANGES:
        text += ", ... (%d in all)" % len(set(numbers))
    return text


def ranks_text(members, limit=MAX_MEMBERS):
    """The members as ranks ("ranks 0-2, 5"), those without a rank by node and PID."""
    ranked = [m.rank for m in members if m.rank is not None]
    parts = []
    if ranked:
        parts.append("rank%s %s" % ("" if len(ranked) == 1 else "s", ranges_text(ranked)))
    unranked = [m for m in members if m.rank is None]
    names = ["%s PID %s" % (m.node or m.source, m.pid if m.pid is not None else "?") for m in unranked[:limit]]
    if len(unranked) > limit:
        names.append("%d more" % (len(unranked) - limit))
    if names:
        parts.append(("processes " if ranked else "") + ", ".join(names))
    return "; ".join(parts) if parts else "no process"


def who(members):
    """Ranks, and where one member: "rank 3 (node2, PID 1234)"."""
    if len(members) == 1:
        m = members[0]
        where = ", ".join(x for x in (m.node if m.node and m.rank is not None else None,
                                      "PID %s" % m.pid if m.pid is not None else None) if x)
        if m.rank is None:
            return "%s PID %s" % (m.node or m.source, m.pid if m.pid is not None else "?")
        return "rank %d (%s)" % (m.rank, where) if where else "rank %d" % m.rank
    nodes = sorted({m.node for m in members if m.node})
    text = ranks_text(members)
    if nodes and len(nodes) <= 4:
        text += " (on %s)" % ", ".join(nodes)
    return text


def parting(stack, others):
    """Where two stacks (innermost first) part, from the outermost: the
    frames of each from there inwards."""
    common = 0
    while common < min(len(stack), len(others)) and stack[-1 - common] == others[-1 - common]:
        common += 1
    return stack[:len(stack) - common], others[:len(others) - common]


def _wait_place(key):
    collective, stack = key
    if collective:
        return collective
    return "at %s" % stack_place(stack) if stack else "running no Python"


def _in(key):
    return "in %s" % key[0] if key[0] else "waiting %s" % _wait_place(key)


def _clause(detail):
    """A wait's detail sentence up to its first explanation (": ...")."""
    return detail.split(": ", 1)[0] if detail else detail


def cause_text(c):
    """Why an odd class's ranks are where they are: their own reports'
    words for their main threads (analysis.merge.MainWait)."""
    main = c.members[0].main
    if main is None:
        return "its report has no thread"
    name = main.name or "main thread"
    if main.detail:
        text = "its %s %s at %s" % (name, _clause(main.detail), stack_place(main.stack))
    elif main.stack:
        text = "its %s is at %s" % (name, stack_place(main.stack))
    else:
        text = "its %s runs no Python" % name
    if main.deadlock:
        text += ", in a deadlock%s with %s" % (" (%s)" % main.confidence if main.confidence else "", "; ".join(
            "its thread %s(LWP %s)%s" % ("%r " % n if n else "", tid, ", which %s" % _clause(d) if d else "")
            for n, tid, d in main.deadlock))
    elif main.verdict:
        text += "; its report: %s" % main.verdict
    return text


def class_text(c, largest):
    """The sentence of an odd class against the largest: which ranks, where, and why."""
    theirs = who(largest.members)
    if c.key[0] and largest.key[0]:
        if c.key[0] != largest.key[0]:
            return "%s %s in %s while %s %s in %s" % (who(c.members), "is" if c.size == 1 else "are", c.key[0],
                                                      theirs, "is" if largest.size == 1 else "are", largest.key[0])
        mine, other = parting(c.key[1], largest.key[1])
        return "%s %s in %s as %s %s, by another path: at %s against %s" % (
            who(c.members), "is" if c.size == 1 else "are", c.key[0], theirs,
            "is" if largest.size == 1 else "are", stack_place(mine), stack_place(other))
    if largest.key[0]:
        return "%s %s not in %s: %s" % (who(c.members), "is" if c.size == 1 else "are", largest.key[0], cause_text(c))
    return "%s %s %s, not where %s %s (%s): %s" % (
        who(c.members), "is" if c.size == 1 else "are", _wait_place(c.key), theirs,
        "is" if largest.size == 1 else "are", _wait_place(largest.key), cause_text(c))


def headline_lines(merge):
    """The members' own headlines where they differ: one line each, with the ranks that have it."""
    by = {}
    for m in merge.members:
        if m.headline is not None:
            by.setdefault(m.headline, []).append(m)
    if len(by) < 2:
        return []
    from pyhang.model.kinds import ExitStatus
    order = {ExitStatus.DEADLOCK: 0, ExitStatus.HUNG: 1, ExitStatus.INCOMPLETE: 2}
    items = sorted(by.items(), key=lambda kv: (order.get(kv[1][0].exit_status, 3), len(kv[1])))
    return ["%s: %s" % (ranks_text(ms), h) for h, ms in items]


def tree_lines(root, limit=MAX_TREE_LINES):
    """The prefix tree of the main threads' stacks, outermost first: a frame
    a line, indented by depth, with its ranks where they change."""
    out = []

    def walk(node, depth, parent_count):
        for child in node.children.values():
            if len(out) >= limit:
                return
            label = " [%s]" % ranks_text(child.members) if len(child.members) != parent_count or depth == 0 else ""
            out.append("  %s%s (%s:%d)%s" % ("  " * depth, child.frame[0], child.frame[1], child.frame[2], label))
            walk(child, depth + 1, len(child.members))
    walk(root, 0, len(root.members))
    if len(out) >= limit:
        out.append("  ... (%d lines shown)" % limit)
    return out


def merge_headline(merge):
    """The merge's first line of answer."""
    odd = [c for c in merge.classes if c.odd]
    if odd:
        largest = merge.classes[0]
        return class_text(odd[0], largest) + "."
    if len(merge.classes) == 1 and merge.classes[0].key[0] and merge.members:
        if merge.problems:
            return "%s wait in %s; no rank of those read is the odd one out, and not every rank could be read." % (
                ranks_text(merge.classes[0].members), merge.classes[0].key[0])
        return "%s wait in %s: no rank is the odd one out." % (ranks_text(merge.classes[0].members), merge.classes[0].key[0])
    return None


def problem_line(p):
    return "pyhang merge: %s: %s" % (p.source, problem_text(p))


def render_merge_text(merge, title="pyhang merge"):
    n = len(merge.members)
    out = ["%s: %d process%s in %d group%s by Python stack" % (
        title, n, "" if n == 1 else "es", len(merge.groups), "" if len(merge.groups) == 1 else "s")]
    if merge.nodes:
        answered = [a for a in merge.nodes if a.complete]
        out[0] += "; %d of %d node%s answered in full" % (len(answered), len(merge.nodes),
                                                          "" if len(merge.nodes) == 1 else "s")
    head = merge_headline(merge)
    lines = headline_lines(merge)
    if head or lines:
        out.append("")
    if head:
        out.append(head)
    odd = [c for c in merge.classes if c.odd]
    out.extend(class_text(c, merge.classes[0]) + "." for c in odd[1:MAX_CLASSES])
    if len(odd) > MAX_CLASSES:
        out.append("and %d more odd classes (below)" % (len(odd) - MAX_CLASSES))
    if lines:
        out.append("Their own reports' headlines:")
        out.extend("  " + line for line in lines)
    if merge.problems:
        out.append("Incomplete: %d of what was asked could not be merged (above%s)." % (
            len(merge.problems), ", on stderr" if merge.nodes else ""))
    if merge.differences:
        out.append("")
        out.extend(difference_text(d) for d in merge.differences)
    elif len(merge.groups) == 1 and n > 1:
        out.append("")
        out.append("All %d processes have the same Python stacks." % n)
    if len(merge.classes) > 1 or any(m.rank is not None for m in merge.members):
        out.append("")
        out.append("Where the main threads wait, outermost frame first (the ranks where they part):")
        out.extend(tree_lines(merge.tree))
    for i, g in enumerate(merge.groups):
        out.append("")
        out.append("Group %d: %d process%s" % (i + 1, g.size, "" if g.size == 1 else "es"))
        names = [member_label(m) for m in g.members[:MAX_MEMBERS]]
        if g.size > MAX_MEMBERS:
            names.append("and %d more" % (g.size - MAX_MEMBERS))
        out.append("  " + ", ".join(names))
        if not g.signature:
            out.append("  (no thread runs Python)")
        for name, stack in sorted(g.members[0].threads, key=lambda t: (t[0] != "MainThread", t[1])):
            out.append("  Thread %s" % (name or "(no name)"))
            out.extend("    %s (%s:%d)" % f for f in stack)
    return "\n".join(out)


def _frames(stack):
    return [{"function": fn, "file": fi, "line": li} for fn, fi, li in stack]


def _member_json(m):
    return {"file": m.source, "pid": m.pid, "node": m.node, "rank": m.rank, "exit_status": m.exit_status}


def _tree_json(node):
    return {"function": node.frame[0], "file": node.frame[1], "line": node.frame[2],
            "ranks": ranks_text(node.members), "processes": len(node.members),
            "children": [_tree_json(c) for c in node.children.values()]}


def merge_json(merge):
    head = merge_headline(merge)
    return {
        "schema": MERGE_SCHEMA,
        "pyhang_version": VERSION,
        "processes": len(merge.members),
        "exit_status": merge.exit_status,
        "headline": head,
        "headlines": [{"ranks": r, "headline": h} for r, h in (line.split(": ", 1) for line in headline_lines(merge))],
        "groups": [{"size": g.size, "members": [_member_json(m) for m in g.members],
                    "threads": [{"name": name, "python_frames": _frames(stack)}
                                for name, stack in g.members[0].threads]} for g in merge.groups],
        "odd": [dict(_member_json(d.member), thread=d.thread, others=d.others,
                     python_frames=_frames(d.stack), others_python_frames=_frames(d.others_stack),
                     text=difference_text(d)) for d in merge.differences],
        "classes": [{"size": c.size, "odd": c.odd, "ranks": ranks_text(c.members), "collective": c.key[0],
                     "python_frames": _frames(c.key[1]), "members": [_member_json(m) for m in c.members],
                     "text": class_text(c, merge.classes[0]) if c.odd else None,
                     "cause": cause_text(c) if c.odd else None} for c in merge.classes],
        "tree": [_tree_json(c) for c in merge.tree.children.values()] if merge.tree is not None else [],
        "nodes": [{"node": a.node, "ranks": a.ranks, "complete": a.complete} for a in merge.nodes],
        "problems": [{"file": p.source, "problem": problem_text(p)} for p in merge.problems],
    }


def dumps(merge, pretty=False):
    return json.dumps(merge_json(merge), indent=1 if pretty else None, separators=None if pretty else (",", ":"))
