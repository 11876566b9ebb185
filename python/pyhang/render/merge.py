"""`pyhang merge REPORT.json...`: the processes grouped by their Python
stacks, largest group first, the odd ones called out; and its
"pyhang-merge/1" JSON document (docs/json-contract.md,
docs/pyhang-merge-1.schema.json)."""
import json

from pyhang import VERSION
from pyhang.model.kinds import MergeProblem

MERGE_SCHEMA = "pyhang-merge/1"
MAX_MEMBERS = 8          # members named per group in the text


def member_label(m):
    return "%s / PID %s" % (m.source, m.pid if m.pid is not None else "?")


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
    common = 0
    while common < min(len(d.stack), len(d.others_stack)) and d.stack[-1 - common] == d.others_stack[-1 - common]:
        common += 1
    return "%s differs: %s is in %s as %d others are, by another path: %d frames where theirs have %d, " \
        "parting at %s against %s" % (
            member_label(d.member), _thread(d.thread), stack_place(d.stack), d.others, len(d.stack), len(d.others_stack),
            stack_place(d.stack[len(d.stack) - 1 - common:]), stack_place(d.others_stack[len(d.others_stack) - 1 - common:]))


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
    lacks = {MergeProblem.NO_THREADS: "threads", MergeProblem.NO_PROCESSES: "processes"}[p.kind]
    return "a %s document pyhang did not write: it has no %s list" % (f["schema"], lacks)


def problem_line(p):
    return "pyhang merge: %s: %s" % (p.source, problem_text(p))


def render_merge_text(merge):
    n = len(merge.members)
    out = ["pyhang merge: %d process%s in %d group%s by Python stack" % (
        n, "" if n == 1 else "es", len(merge.groups), "" if len(merge.groups) == 1 else "s")]
    if merge.differences:
        out.append("")
        out.extend(difference_text(d) for d in merge.differences)
    elif len(merge.groups) == 1 and n > 1:
        out.append("")
        out.append("All %d processes have the same Python stacks." % n)
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
    return {"file": m.source, "pid": m.pid}


def merge_json(merge):
    return {
        "schema": MERGE_SCHEMA,
        "pyhang_version": VERSION,
        "processes": len(merge.members),
        "groups": [{"size": g.size, "members": [_member_json(m) for m in g.members],
                    "threads": [{"name": name, "python_frames": _frames(stack)}
                                for name, stack in g.members[0].threads]} for g in merge.groups],
        "odd": [dict(_member_json(d.member), thread=d.thread, others=d.others,
                     python_frames=_frames(d.stack), others_python_frames=_frames(d.others_stack),
                     text=difference_text(d)) for d in merge.differences],
        "problems": [{"file": p.source, "problem": problem_text(p)} for p in merge.problems],
    }


def dumps(merge, pretty=False):
    return json.dumps(merge_json(merge), indent=1 if pretty else None, separators=None if pretty else (",", ":"))
