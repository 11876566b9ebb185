"""Across machines: many processes' reports (the ranks of a job, from
`pyhang report --json` on every node) grouped by their Python stacks, so
that the one rank doing something else stands out (plain Python, no gdb).

Two processes are in one group when their Python stacks are the same: each
thread's stack is its Python frames, innermost first, as (function, file,
line) — line numbers included, so two ranks waiting at different lines of
one function differ — and the threads are compared as a multiset (their
order, TIDs and names do not count). Threads that run no Python (no Python
frame) are left out: native helper threads vary between ranks.

Inputs are pyhang-report/1 documents (one process each) and pyhang-tree/1
documents (each of its processes examined counts). A file that cannot be
read or is neither is one problem, and the rest are still grouped.
"""
import json
from collections import Counter
from pyhang.model.kinds import MergeProblem
from pyhang.model.record import field, record

REPORT_SCHEMA = "pyhang-report/1"
TREE_SCHEMA = "pyhang-tree/1"
MAX_FRAMES = 256         # Python frames per thread compared
MAX_THREADS = 4096       # threads per process compared


@record
class Member:
    """One process of the merge."""
    source: str                     # the file it was read from
    pid: object                     # its PID (None when the report has none)
    threads: list                   # [(python_name or thread name, stack)], stack = ((function, file, line), ...)

    @property
    def signature(self):
        return tuple(sorted(stack for _, stack in self.threads))


@record
class Group:
    members: list
    signature: tuple

    @property
    def size(self):
        return len(self.members)


@record
class Difference:
    """How the only member of a small group differs from the largest group."""
    member: Member
    others: int                     # the size of the largest group
    thread: object                  # the odd thread's name (None when it has none)
    stack: tuple                    # its stack (() when the odd process lacks a thread the others have)
    others_stack: tuple             # the stack the others' thread has there (() when they lack it)


@record
class Problem:
    """A file, or a process in it, that could not be merged."""
    source: str                     # the file
    kind: str                       # model.kinds.MergeProblem
    facts: dict                     # what the renderer words it from (MergeProblem says which)


class _Foreign(ValueError):
    """A document of a pyhang schema without what pyhang writes in it."""
    def __init__(self, kind):
        super().__init__(kind)
        self.kind = kind


@record
class Merge:
    members: list = field(default_factory=list)
    problems: list = field(default_factory=list)      # [Problem]
    groups: list = field(default_factory=list)
    differences: list = field(default_factory=list)


def _frame(f):
    line = f.get("line")
    return (str(f.get("function")), str(f.get("file")), line if isinstance(line, int) else -1)


def _member(source, doc):
    """A Member from one pyhang-report/1 document; _Foreign when it is not one."""
    threads = doc.get("threads")
    if not isinstance(threads, list):
        raise _Foreign(MergeProblem.NO_THREADS)
    target = doc.get("target") if isinstance(doc.get("target"), dict) else {}
    out = []
    for t in threads[:MAX_THREADS]:
        if not isinstance(t, dict) or not isinstance(t.get("python_frames"), list):
            continue
        stack = tuple(_frame(f) for f in t["python_frames"][:MAX_FRAMES] if isinstance(f, dict))
        if stack:
            out.append((t.get("python_name") or t.get("name"), stack))
    return Member(source=source, pid=target.get("pid"), threads=out)


def read(merge, source, text):
    """Adds the processes of one file's text to `merge` (or a problem)."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        merge.problems.append(Problem(source, MergeProblem.NOT_JSON, {"error": str(exc)}))
        return
    schema = doc.get("schema") if isinstance(doc, dict) else None
    try:
        if schema == REPORT_SCHEMA:
            merge.members.append(_member(source, doc))
        elif schema == TREE_SCHEMA:
            processes = doc.get("processes")
            if not isinstance(processes, list):
                raise _Foreign(MergeProblem.NO_PROCESSES)
            for p in processes:
                if isinstance(p, dict) and p.get("schema") == REPORT_SCHEMA:
                    merge.members.append(_member(source, p))
                elif isinstance(p, dict):
                    merge.problems.append(Problem(source, MergeProblem.NOT_EXAMINED,
                                                  {"pid": p.get("pid"), "problem": p.get("problem")}))
        else:
            merge.problems.append(Problem(source, MergeProblem.NOT_A_REPORT,
                                          {"schema": schema, "expected": [REPORT_SCHEMA, TREE_SCHEMA]}))
    except _Foreign as exc:
        merge.problems.append(Problem(source, exc.kind, {"schema": schema}))


def _names(threads):
    """{stack: a thread name}: the main thread's where it has that stack."""
    out = {}
    for name, stack in threads:
        if out.get(stack) != "MainThread":
            out[stack] = name
    return out


def _difference(odd, largest):
    """Where `odd` and a member of the largest group part: the odd thread
    (the main thread when it is one of them) and the others' thread there."""
    mine = Counter(s for _, s in odd.threads) - Counter(largest.signature)
    theirs = Counter(largest.signature) - Counter(s for _, s in odd.threads)
    names, their_names = _names(odd.threads), _names(largest.members[0].threads)
    odd_threads = sorted(mine, key=lambda s: (names.get(s) != "MainThread", names.get(s) or "", s))
    their_threads = sorted(theirs, key=lambda s: (their_names.get(s) != "MainThread", their_names.get(s) or "", s))
    if odd_threads:
        stack = odd_threads[0]
        name = names.get(stack)
        # the others' thread of the same name, else their first differing one
        other = next((s for s in their_threads if their_names.get(s) == name), their_threads[0] if their_threads else ())
    else:
        other = their_threads[0]
        name, stack = their_names.get(other), ()
    return Difference(member=odd, others=largest.size, thread=name, stack=stack, others_stack=other)


def analyse(merge):
    """The groups, largest first, and how each single process differs when
    the others agree (the largest group has two members or more)."""
    by = {}
    for m in merge.members:
        by.setdefault(m.signature, []).append(m)
    merge.groups = sorted((Group(members=ms, signature=sig) for sig, ms in by.items()),
                          key=lambda g: (-g.size, g.members[0].source, str(g.members[0].pid)))
    if len(merge.groups) > 1 and merge.groups[0].size >= 2:
        largest = merge.groups[0]
        merge.differences = [_difference(g.members[0], largest) for g in merge.groups[1:] if g.size == 1]
    return merge


def merge_files(paths):
    """The Merge of the files at `paths`; a file that cannot be opened is a problem."""
    merge = Merge()
    for path in paths:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError as exc:
            merge.problems.append(Problem(path, MergeProblem.UNREADABLE, {"error": str(exc.strerror or exc)}))
            continue
        read(merge, path, text)
    return analyse(merge)
