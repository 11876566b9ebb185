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

from pyhang.analysis import collectives
from pyhang.model.kinds import ExitStatus, MergeProblem, VerdictKind, WaitKind
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
    node: object = None             # the node (host) it ran on, from a pyhang-rank/1 document
    rank: object = None             # its rank (RANK, SLURM_PROCID, ...; else its collective's locals), or None
    exit_status: object = None      # its own report's exit status (None: a report without one)
    headline: object = None         # its own report's headline
    main: object = None             # MainWait: where its main thread waits, and why

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


@record
class MainWait:
    """Where a process's main thread (its "MainThread", else its first
    thread) waits, and what its own report says of it: what the merge
    groups ranks by, and the cause it gives for an odd class."""
    name: object                    # the thread's name
    tid: object
    stack: tuple                    # its Python stack, innermost first
    collective: object              # the torch.distributed collective it waits in (blocked_on kind collective), or None
    detail: object                  # its blocked_on's detail sentence, or None
    deadlock: list = field(default_factory=list)   # [(name, tid, detail)]: the other threads of its deadlock
    confidence: object = None       # that deadlock's confidence
    verdict: object = None          # the text of the first verdict of its report that names it (not a wait on
    #                                 other processes, not idle), or None

    @property
    def key(self):
        return (self.collective, self.stack)


@record
class RankClass:
    """Ranks whose main threads wait at the same place (MainWait.key)."""
    members: list
    key: tuple
    odd: bool = False               # smaller than the largest class (which is alone in being the largest)

    @property
    def size(self):
        return len(self.members)


@record
class TreeNode:
    """A frame of the prefix tree of the main threads' stacks (outermost
    first), with the members whose stacks pass through it."""
    frame: object                   # (function, file, line); None at the root
    members: list = field(default_factory=list)
    children: dict = field(default_factory=dict)   # frame -> TreeNode, in insertion order


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
    classes: list = field(default_factory=list)       # [RankClass], largest first (the odd ones after)
    tree: object = None                               # TreeNode: the root of the main threads' prefix tree
    exit_status: int = 0                              # the worst of the members' own and the merge's findings
    mismatch: bool = False                            # ranks wait in different collectives
    nodes: list = field(default_factory=list)         # [NodeAnswer] of a job's nodes (pyhang-node/1), in order


def _frame(f):
    line = f.get("line")
    return (str(f.get("function")), str(f.get("file")), line if isinstance(line, int) else -1)


# The variables that name a process's rank, most specific first (proc_record.JOB_VARIABLES has them all).
RANK_VARIABLES = ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK")
# Verdicts that say no more of a rank than that it waits (for other ranks, for work): no cause.
_NO_CAUSE = frozenset((VerdictKind.WAITS_ON_PROCESS, VerdictKind.IDLE, VerdictKind.POOL_IDLE,
                       VerdictKind.UNACCOUNTED, VerdictKind.OWNERS_UNKNOWN))


class _Frame:
    __slots__ = ("function", "file")

    def __init__(self, frame):
        self.function, self.file = frame[0], frame[1]


def rank_of(environment):
    """The rank the job's variables give a process, or None."""
    for name in RANK_VARIABLES:
        value = (environment or {}).get(name)
        if isinstance(value, str) and value.strip().isdigit():
            return int(value)
    return None


def _main_wait(doc, threads):
    """The summary of a report document's main thread ("main" of summary()), or None when it has no thread."""
    listed = [t for t in threads if isinstance(t, dict)]
    main = next((t for t in listed if t.get("python_name") == "MainThread"), listed[0] if listed else None)
    if main is None:
        return None
    frames = main.get("python_frames") if isinstance(main.get("python_frames"), list) else []
    stack = [_frame(f) for f in frames[:MAX_FRAMES] if isinstance(f, dict)]
    b = main.get("blocked_on") if isinstance(main.get("blocked_on"), dict) else {}
    collective = stack[0][0] if stack and b.get("kind") == WaitKind.COLLECTIVE and \
        collectives.collective_frame([_Frame(stack[0])]) is not None else None
    tid = main.get("tid")
    out = {"name": main.get("python_name") or main.get("name"), "tid": tid, "stack": stack, "collective": collective,
           "detail": b.get("detail") if isinstance(b.get("detail"), str) else None, "deadlock": [],
           "confidence": None, "verdict": None}
    by_tid = {t.get("tid"): t for t in listed}
    for d in doc.get("deadlocks") or []:
        if isinstance(d, dict) and tid in (d.get("threads") or []):
            for other in d["threads"]:
                t = by_tid.get(other, {})
                ob = t.get("blocked_on") if isinstance(t.get("blocked_on"), dict) else {}
                if other != tid:
                    out["deadlock"].append([t.get("python_name") or t.get("name"), other, ob.get("detail")])
            out["confidence"] = d.get("confidence")
            break
    for v in doc.get("verdicts") or []:
        if isinstance(v, dict) and tid in (v.get("threads") or []) and v.get("kind") not in _NO_CAUSE \
                and isinstance(v.get("text"), str):
            out["verdict"] = v["text"]
            break
    return out


def summary(doc):
    """What the merge takes of one pyhang-report/1 document, as JSON's types:
    {"pid", "threads": [[name, [[function, file, line], ...]]] (the threads
    with Python frames), "main" (its main thread's wait, _main_wait),
    "headline", "exit_status", "environment" (a gcore core's job variables,
    else null)}.  A node's pyhang job-node writes it ahead of the report in
    each pyhang-rank/1 document, so that the merge of a large job decodes it
    alone (read_stream); _Foreign when the document has no threads list."""
    threads = doc.get("threads")
    if not isinstance(threads, list):
        raise _Foreign(MergeProblem.NO_THREADS)
    target = doc.get("target") if isinstance(doc.get("target"), dict) else {}
    out = []
    for t in threads[:MAX_THREADS]:
        if not isinstance(t, dict) or not isinstance(t.get("python_frames"), list):
            continue
        stack = [_frame(f) for f in t["python_frames"][:MAX_FRAMES] if isinstance(f, dict)]
        if stack:
            out.append([t.get("python_name") or t.get("name"), stack])
    record_ = target.get("proc_record") if isinstance(target.get("proc_record"), dict) else {}
    status, headline = doc.get("exit_status"), doc.get("headline")
    return {"pid": target.get("pid"), "threads": out, "main": _main_wait(doc, threads[:MAX_THREADS]),
            "headline": headline if isinstance(headline, str) else None,
            "exit_status": status if isinstance(status, int) else None,
            "environment": record_.get("environment") if isinstance(record_.get("environment"), dict) else None}


def _stack(frames):
    return tuple((str(f[0]), str(f[1]), f[2] if isinstance(f[2], int) else -1) for f in frames[:MAX_FRAMES]
                 if isinstance(f, (list, tuple)) and len(f) == 3)


def _from_summary(source, s, node=None, environment=None):
    """A Member from a summary() (one written by a node, or made here)."""
    threads = [(t[0], _stack(t[1])) for t in s.get("threads") or [] if isinstance(t, (list, tuple)) and len(t) == 2
               and isinstance(t[1], list)][:MAX_THREADS]
    m = s.get("main") if isinstance(s.get("main"), dict) else None
    main = None if m is None else MainWait(
        name=m.get("name"), tid=m.get("tid"), stack=_stack(m.get("stack") or []), collective=m.get("collective"),
        detail=m.get("detail"), deadlock=[tuple(d) for d in m.get("deadlock") or [] if isinstance(d, (list, tuple))
                                          and len(d) == 3],
        confidence=m.get("confidence"), verdict=m.get("verdict"))
    env = environment if environment is not None else s.get("environment")
    status = s.get("exit_status")
    return Member(source=source, pid=s.get("pid"), threads=[t for t in threads if t[1]], node=node,
                  rank=rank_of(env if isinstance(env, dict) else None),
                  exit_status=status if isinstance(status, int) else None,
                  headline=s.get("headline") if isinstance(s.get("headline"), str) else None, main=main)


def _member(source, doc, node=None, environment=None):
    """A Member from one pyhang-report/1 document; _Foreign when it is not one."""
    return _from_summary(source, summary(doc), node=node, environment=environment)


RANK_SCHEMA = "pyhang-rank/1"
NODE_SCHEMA = "pyhang-node/1"


@record
class NodeAnswer:
    """What one node of a job answered: its pyhang-node/1 document's facts,
    or why the stream lacks it."""
    node: str
    ranks: int = 0                  # rank documents read from it
    complete: bool = False          # its pyhang-node/1 document came


def _rank(merge, source, doc, node):
    """One pyhang-rank/1 document: a member, or the problem it carries."""
    if isinstance(doc.get("summary"), dict):
        _summarised(merge, source, doc["summary"], node)
        return
    report = doc.get("report")
    environment = doc.get("environment") if isinstance(doc.get("environment"), dict) else {}
    if isinstance(report, dict) and report.get("schema") == REPORT_SCHEMA:
        merge.members.append(_member(source, report, node=doc.get("node") or node, environment=environment))
    elif isinstance(report, dict):
        merge.problems.append(Problem(source, MergeProblem.OTHER_VERSION, {
            "schema": report.get("schema"), "version": report.get("pyhang_version")}))
    else:
        merge.problems.append(Problem(source, MergeProblem.RANK_NOT_READ, {
            "pid": doc.get("pid"), "rank": rank_of(environment), "problem": str(doc.get("problem") or "no report")}))


# A node's rank document begins with its summary (pyhang.jobs.rank_line): the merge decodes that alone.
RANK_PREFIX = '{"schema":"%s","summary":' % RANK_SCHEMA
_DECODER = json.JSONDecoder()
_READ = ("pyhang-report", "pyhang-tree", "pyhang-rank", "pyhang-node")


def _summarised(merge, source, s, node):
    """A pyhang-rank/1 document's summary: a member, or the problem it carries."""
    environment = s.get("rank_environment") if isinstance(s.get("rank_environment"), dict) else {}
    if s.get("report_schema") == REPORT_SCHEMA:
        merge.members.append(_from_summary(source, s, node=s.get("node") or node, environment=environment))
    elif s.get("report_schema") is not None:
        merge.problems.append(Problem(source, MergeProblem.OTHER_VERSION, {
            "schema": s.get("report_schema"), "version": s.get("report_version")}))
    else:
        merge.problems.append(Problem(source, MergeProblem.RANK_NOT_READ, {
            "pid": s.get("rank_pid"), "rank": rank_of(environment), "problem": str(s.get("problem") or "no report")}))


def _document(merge, source, doc, node=None):
    """Adds what one parsed document holds; True when it was a pyhang-node/1 document."""
    schema = doc.get("schema") if isinstance(doc, dict) else None
    try:
        if schema == REPORT_SCHEMA:
            merge.members.append(_member(source, doc, node=node))
        elif schema == RANK_SCHEMA:
            _rank(merge, source, doc, node)
        elif schema == NODE_SCHEMA:
            if doc.get("problem"):
                merge.problems.append(Problem(source, MergeProblem.NODE_PROBLEM, {"problem": str(doc["problem"])}))
            elif not doc.get("processes"):
                merge.problems.append(Problem(source, MergeProblem.NO_RANKS, {"found_by": doc.get("found_by")}))
            return True
        elif schema == TREE_SCHEMA:
            processes = doc.get("processes")
            if not isinstance(processes, list):
                raise _Foreign(MergeProblem.NO_PROCESSES)
            for p in processes:
                if isinstance(p, dict) and p.get("schema") == REPORT_SCHEMA:
                    merge.members.append(_member(source, p, node=node))
                elif isinstance(p, dict):
                    merge.problems.append(Problem(source, MergeProblem.NOT_EXAMINED,
                                                  {"pid": p.get("pid"), "problem": p.get("problem")}))
        elif isinstance(schema, str) and schema.split("/", 1)[0] in _READ:   # another version of one of ours
            merge.problems.append(Problem(source, MergeProblem.OTHER_VERSION, {
                "schema": schema, "version": doc.get("pyhang_version")}))
        else:
            merge.problems.append(Problem(source, MergeProblem.NOT_A_REPORT,
                                          {"schema": schema, "expected": [REPORT_SCHEMA, TREE_SCHEMA, RANK_SCHEMA]}))
    except _Foreign as exc:
        merge.problems.append(Problem(source, exc.kind, {"schema": schema}))
    return False


def read(merge, source, text):
    """Adds the processes of one file's text to `merge` (or a problem): one
    JSON document, or a node's stream of them (one a line, as `pyhang job
    --save` keeps it)."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        if "Extra data" in str(exc) or text.lstrip().startswith("{\"schema\": \"pyhang-rank/") or \
                text.lstrip().startswith('{"schema":"pyhang-'):
            read_stream(merge, None, text.splitlines(), source=source)
            return
        merge.problems.append(Problem(source, MergeProblem.NOT_JSON, {"error": str(exc)}))
        return
    _document(merge, source, doc)


def read_stream(merge, node, lines, complete=True, failure=None, source=None):
    """Adds one node's stream (its lines: a JSON document each, the last its
    pyhang-node/1 document) to `merge`, lines that are no document counted as
    one problem; `complete` False when the stream was cut (the caller says
    why in `failure`: a Problem's (kind, facts), or None when it ended without
    a cause: a truncated stream).  The node's NodeAnswer is added to
    merge.nodes; returns it."""
    source = source or node
    answer = NodeAnswer(node=node or source)
    garbage, first = 0, None
    before = len(merge.members)
    for line in lines:
        line = line.strip()
        if not line:
            continue
        if line.startswith(RANK_PREFIX):
            try:
                s, end = _DECODER.raw_decode(line, len(RANK_PREFIX))
            except ValueError:
                s, end = None, 0
            if isinstance(s, dict) and line.startswith(',"report":', end):
                _summarised(merge, source, s, node)
                continue
        try:
            doc = json.loads(line)
        except ValueError:
            garbage += 1
            first = first if first is not None else line[:80]
            continue
        if not isinstance(doc, dict):
            garbage += 1
            first = first if first is not None else line[:80]
            continue
        if _document(merge, source, doc, node=node):
            answer.complete = True
    answer.ranks = len(merge.members) - before
    if garbage:
        merge.problems.append(Problem(source, MergeProblem.GARBAGE, {"lines": garbage, "first": first}))
    if failure is not None:
        merge.problems.append(Problem(source, failure[0], dict(failure[1], ranks=answer.ranks)))
    elif not answer.complete:
        merge.problems.append(Problem(source, MergeProblem.TRUNCATED, {"ranks": answer.ranks}))
    answer.complete = answer.complete and failure is None and complete
    merge.nodes.append(answer)
    return answer


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
    the others agree (the largest group has two members or more); the rank
    classes, the prefix tree and the exit status.  The members of a job
    (with ranks or nodes) are taken in rank order."""
    if any(m.rank is not None or m.node for m in merge.members):
        merge.members.sort(key=member_order)
    by = {}
    for m in merge.members:
        by.setdefault(m.signature, []).append(m)
    merge.groups = sorted((Group(members=ms, signature=sig) for sig, ms in by.items()),
                          key=lambda g: (-g.size, g.members[0].source, str(g.members[0].pid)))
    if len(merge.groups) > 1 and merge.groups[0].size >= 2:
        largest = merge.groups[0]
        merge.differences = [_difference(g.members[0], largest) for g in merge.groups[1:] if g.size == 1]
    merge.classes = rank_classes(merge.members)
    merge.tree = prefix_tree(merge.members)
    found = {c.key[0] for c in merge.classes if c.key[0] is not None}
    merge.mismatch = len(found) > 1
    merge.exit_status = merge_status(merge)
    return merge


def member_order(m):
    """Ranks in order; members without a rank after them, by node and PID."""
    return (m.rank is None, m.rank if m.rank is not None else 0, str(m.node or m.source),
            m.pid if isinstance(m.pid, int) else -1)


def rank_classes(members):
    """The members by where their main threads wait (MainWait.key), largest
    class first; the classes smaller than the largest are odd when it is
    the only one of its size."""
    by = {}
    for m in members:
        by.setdefault(m.main.key if m.main is not None else (None, ()), []).append(m)
    classes = [RankClass(members=sorted(ms, key=member_order), key=key) for key, ms in by.items()]
    classes.sort(key=lambda c: (-c.size, member_order(c.members[0])))
    if len(classes) > 1 and classes[0].size > classes[1].size:
        for c in classes[1:]:
            c.odd = True
    elif len(classes) > 1:
        # no class is the largest alone (a node's ranks missing, or two against two): those whose own
        # reports found a hang are the odd ones, against the others
        for c in classes:
            c.odd = all(m.exit_status in (ExitStatus.DEADLOCK, ExitStatus.HUNG) for m in c.members)
        if all(c.odd for c in classes):
            for c in classes:
                c.odd = False
        classes.sort(key=lambda c: c.odd)
    return classes


def prefix_tree(members):
    """The main threads' Python stacks as one tree, outermost frame first
    (STAT's prefix tree): each node with the members passing through it."""
    root = TreeNode(frame=None)
    for m in sorted(members, key=member_order):
        node = root
        node.members.append(m)
        for frame in reversed(m.main.stack if m.main is not None else ()):
            child = node.children.get(frame)
            if child is None:
                child = node.children[frame] = TreeNode(frame=frame)
            child.members.append(m)
            node = child
    return root


# Worst first: a deadlock, a hang, what could not be read; then no Python, an all-clear.
_SEVERITY = (ExitStatus.DEADLOCK, ExitStatus.HUNG, ExitStatus.INCOMPLETE, ExitStatus.NO_PYTHON, ExitStatus.OK)
# Problems that leave a job's answer incomplete (every one but a file merge was not asked to read as a report).
_INCOMPLETE = frozenset(v for k, v in vars(MergeProblem).items() if k.isupper())


def worst(statuses):
    """The worst of exit statuses (_SEVERITY; one pyhang could not make, FAILED, counts as incomplete)."""
    seen = {ExitStatus.INCOMPLETE if s == ExitStatus.FAILED else s for s in statuses}
    return next((s for s in _SEVERITY if s in seen), ExitStatus.OK)


def merge_status(merge):
    """The worst of the members' own exit statuses and the merge's own
    findings: ranks in different collectives are a hang; a node or rank that
    could not be read leaves the merge incomplete unless a hang was found
    among the rest."""
    statuses = [m.exit_status for m in merge.members if m.exit_status is not None]
    if merge.mismatch:
        statuses.append(ExitStatus.HUNG)
    if any(p.kind in _INCOMPLETE for p in merge.problems):
        statuses.append(ExitStatus.INCOMPLETE)
    return worst(statuses)


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
