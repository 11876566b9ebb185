"""asyncio, from the snapshot's decoded tasks and loops (an AsyncioState:
model.asyncio_facts): each event loop with the thread running it and its
tasks; what each task awaits (another task, a gather, a sleep and its
deadline, an asyncio Lock/Event/Queue/Condition/Semaphore, an executor job
and its thread, a future chained to a concurrent one); await cycles;
loops whose thread is blocked inside a task step; and threads waiting on a
concurrent future that only a loop can complete, which then wait for that
loop's thread in the wait-for graph.

    analyse(report, snapshot)     # report.asyncio, verdicts' input, blocked_on owners
    loop_verdicts(report)         # a verdict per loop blocked inside a task step
    await_cycles(report, snapshot)  # Deadlocks of kind "await"
"""

from pyhang.model.asyncio_facts import LoopFacts
from pyhang.model.kinds import AwaitKind, Confidence, DeadlockKind, FutureState, GilState, OwnerSource, VerdictKind, \
    TargetWarning, WaitKind
from pyhang.model.record import replace
from pyhang.model.report import AsyncioLoop, AsyncioTask, Awaited, Deadlock, PythonFrame, Verdict, program_frame
from pyhang.model.verdict_facts import AsyncioLoopBlockedFacts
from pyhang.model.waits import ApiDetail, CodeLine, syscall_of
from pyhang.model.warning_facts import TargetIssue

PENDING = FutureState.PENDING
MAX_CYCLES = 64          # await cycles listed at most
MAX_CYCLE_LENGTH = 64    # tasks followed along one chain
MAX_STEPS = 100000       # edges followed in all by the cycle search

# asyncio primitives, recognised by the innermost frame of the coroutine
# chain (its file and function, qualified from 3.11) and the type of that
# frame's `self`: (file suffix, bare function names, self type suffixes, kind).
PRIMITIVES = (
    ("asyncio/locks.py", ("acquire",), ("Semaphore",), AwaitKind.SEMAPHORE),
    ("asyncio/locks.py", ("acquire",), ("Lock",), AwaitKind.LOCK),
    ("asyncio/locks.py", ("wait",), ("Event",), AwaitKind.EVENT),
    ("asyncio/locks.py", ("wait", "wait_for"), ("Condition",), AwaitKind.CONDITION),
    ("asyncio/queues.py", ("get",), ("Queue",), AwaitKind.QUEUE_GET),
    ("asyncio/queues.py", ("put",), ("Queue",), AwaitKind.QUEUE_PUT),
)


def _bare(function):
    return (function or "").rsplit(".", 1)[-1]


def _primitive(task):
    """(kind, self, self type) of the asyncio primitive the innermost frame is in, or None."""
    if not task.stack:
        return None
    f = task.stack[0]
    self_type = task.innermost_self_type or ""
    for suffix, functions, types, kind in PRIMITIVES:
        if f.file.endswith(suffix) and _bare(f.function) in functions and self_type.endswith(types):
            return kind, task.innermost_self, self_type
    return None


def task_name(t):
    return t.name or "task 0x%x" % (t.object or 0)


class _Facts:
    """The snapshot's asyncio facts, indexed."""

    def __init__(self, state):
        self.tasks = {t.object: t for t in state.tasks if t.object}
        # future → the tasks whose completion completes it (gather children, shield, chained futures)
        self.completed_by = {}
        for t in self.tasks.values():
            for c in t.completes:
                self.completed_by.setdefault(c.object, []).append(t.object)
        self.jobs = {j.future: j.tid for j in state.jobs if j.future}
        self.clock = state.clock

    def awaited(self, t):
        """The Awaited of a pending task, or None when it awaits nothing readable."""
        w = t.awaits
        prim = _primitive(t)
        stack = t.stack
        if w is None and prim is None:
            return None
        a = Awaited(kind=AwaitKind.FUTURE)
        if w is not None:
            a.address, a.type, a.state = w.object, w.type, w.state
        if w is not None and w.object in self.tasks:
            a.kind = AwaitKind.TASK
            a.task_addresses = [w.object]
        elif w is not None and w.children:
            a.kind = AwaitKind.GATHER
            a.task_addresses = [c for c in w.children if c in self.tasks]
        elif prim is not None:
            a.kind, a.obj, a.obj_type = prim
        elif stack and stack[0].file.endswith("asyncio/tasks.py") and _bare(stack[0].function) == "sleep":
            a.kind = AwaitKind.SLEEP
            a.when = w.when if w is not None else None
            if a.when is not None and self.clock is not None:
                a.remaining = a.when - self.clock
        else:
            for c in w.chained if w is not None else ():
                if c.object in self.jobs:
                    a.kind, a.chained, a.thread = AwaitKind.EXECUTOR, c.object, self.jobs[c.object]
                    break
                if a.chained is None and c.object not in self.tasks:
                    a.kind, a.chained = AwaitKind.THREAD_FUTURE, c.object
            # a future another task completes (shield's outer future, a chained task)
            if a.kind == AwaitKind.FUTURE and w is not None:
                a.task_addresses = list(self.completed_by.get(w.object, []))
        a.tasks = [task_name(self.tasks[x]) for x in a.task_addresses]
        return a

    def waits_for(self, t):
        """The tasks a pending task cannot go on without: the task it awaits, a
        gather's children, the tasks that complete the future it awaits."""
        w = t.awaits
        if w is None:
            return []
        out = []
        if w.object in self.tasks:
            out.append(w.object)
        out += [c for c in w.children if c in self.tasks]
        out += self.completed_by.get(w.object, [])
        return [x for i, x in enumerate(out) if x not in out[:i] and self.tasks[x].state == PENDING]


def _task_model(t, facts, running):
    m = AsyncioTask(name=task_name(t), address=t.object or 0, state=t.state or FutureState.UNKNOWN,
                    native=bool(t.native), running=running,
                    stack=[PythonFrame(f.function, f.file, f.line) for f in t.stack],
                    exception_type=t.exception_type,
                    exception_unretrieved=bool(t.exception_unretrieved), problem=t.problem)
    if m.state == PENDING and not running:
        m.awaits = facts.awaited(t)
    return m


_BUSY = (GilState.RELEASED, GilState.WAITING)

_NO_LOOP = LoopFacts()   # the loop of tasks whose loop was not found: nothing known of it

def _frame_facts(f):
    return CodeLine(f.function, f.file, f.line) if f is not None else None


def _blocked(loop, thread, running, pending):
    """Facts of a loop whose thread is blocked inside a task's step, or None."""
    if thread is None or running is None:
        return None
    b = thread.blocked_on
    if b is None and thread.gil not in _BUSY:
        return None   # stepping a task with the GIL: busy, not blocked
    frame = thread.python_frames[0] if thread.python_frames else None
    caller = program_frame(thread.python_frames)
    return AsyncioLoopBlockedFacts(
        task=running.name, tid=thread.tid, ready=loop.ready, pending=pending, frame=_frame_facts(frame),
        program_frame=_frame_facts(caller) if caller is not frame else None,
        wait=b.kind if b is not None else None, wait_address=b.address if b is not None else None,
        wait_call=syscall_of(b).name)


def analyse(report, snapshot):
    """report.asyncio from the snapshot (None when it has no asyncio facts);
    threads waiting on a concurrent future that only a loop's task or ready
    callback completes get that loop's thread as owner (before the
    wait-for graph is built)."""
    state = snapshot.asyncio
    if state is None:
        return
    report.asyncio = []
    report.warnings += state.warnings   # its objects were read otherwise than pyhang's own row says
    if not state.imported:   # (its problem then says only that)
        return
    if state.problem:
        report.warnings.append(TargetIssue(TargetWarning.ASYNCIO_INCOMPLETE, problem=state.problem))
    facts = _Facts(state)
    loops = {}
    for raw in state.loops:
        if raw.loop:
            loops[raw.loop] = (raw, AsyncioLoop(address=raw.loop, type=raw.type, thread=raw.tid,
                                                ready=raw.ready, scheduled=raw.scheduled))
    running = {raw.current_task: addr for addr, (raw, _) in loops.items() if raw.current_task}
    by_address = {}
    for t in sorted(facts.tasks.values(), key=lambda t: (t.state != PENDING, task_name(t))):
        if t.loop not in loops:
            loops[t.loop or 0] = (_NO_LOOP, AsyncioLoop(address=t.loop or 0, type=None))
        loop = loops[t.loop or 0][1]
        m = _task_model(t, facts, running.get(t.object) == t.loop)
        if m.running:
            loop.running_task = m.name
        loop.tasks.append(m)
        by_address[m.address] = m
    for raw, loop in loops.values():
        thread = report.thread(loop.thread) if loop.thread is not None else None
        run = next((t for t in loop.tasks if t.running), None)
        pending = sum(1 for t in loop.tasks if t.state == PENDING and not t.running)
        loop.blocked = _blocked(loop, thread, run, pending)
        # futures the loop's ready callbacks complete, to be run once the loop goes on
        for c in raw.ready_chained:
            _owned_by_loop(report, c.object, loop, None)
    for t in facts.tasks.values():
        loop = loops.get(t.loop or 0, (_NO_LOOP, None))[1]
        for c in t.completes:
            _owned_by_loop(report, c.object, loop, by_address.get(t.object))
    report.asyncio = sorted((loop for _, loop in loops.values()),
                            key=lambda l: (l.thread is None, l.thread or 0, l.address))


def _owned_by_loop(report, future, loop, task):
    """A thread waiting on `future` (a concurrent.futures.Future) waits for
    the thread of `loop`, which completes it through `task` (None: a ready
    callback that will create the task).  The loop's own thread waiting on
    it waits for itself (run_coroutine_threadsafe(..., loop).result() on
    that loop's thread): the loop cannot run while its thread waits;
    api.asyncio's "self" says so."""
    if loop is None or loop.thread is None:
        return
    for th in report.threads:
        b = th.blocked_on
        if b is None or b.kind != WaitKind.PY_FUTURE or b.address != future or b.owners:
            continue
        b.owners = [loop.thread]
        b.owner_source = OwnerSource.ASYNCIO_LOOP
        b.owner_alive = True
        b.api = b.api or ApiDetail()
        b.api.asyncio = {"task": task.name if task else None, "loop": loop.address, "thread": loop.thread,
                         **({"self": True} if th.tid == loop.thread else {})}
        if task is not None:
            task.completes_for.append(th.tid)


def loop_verdicts(report):
    """A verdict per loop whose thread is blocked inside a task's step."""
    return [Verdict(kind=VerdictKind.ASYNCIO_LOOP_BLOCKED, threads=[loop.thread], facts=replace(loop.blocked))
            for loop in report.asyncio or [] if loop.blocked]


def await_cycles(report, snapshot):
    """Deadlocks of kind "await": tasks that await each other in a cycle
    (directly, through a gather's children or a future another task
    completes).  Each cycle once, from its lowest task address; the search
    is bounded (MAX_CYCLES, MAX_CYCLE_LENGTH, MAX_STEPS)."""
    if snapshot.asyncio is None or not snapshot.asyncio.imported:
        return []
    facts = _Facts(snapshot.asyncio)
    edges = {a: facts.waits_for(t) for a, t in facts.tasks.items() if t.state == PENDING}
    models = {t.address: t for loop in report.asyncio or [] for t in loop.tasks}
    cycles, steps = [], [0]

    def walk(start, path, on_path):
        for nxt in edges.get(path[-1], []):
            steps[0] += 1
            if len(cycles) >= MAX_CYCLES or steps[0] > MAX_STEPS:
                return
            if nxt == start:
                cycles.append(list(path))
            elif nxt > start and nxt not in on_path and len(path) < MAX_CYCLE_LENGTH:
                on_path.add(nxt)
                path.append(nxt)
                walk(start, path, on_path)
                path.pop()
                on_path.discard(nxt)
    for start in sorted(edges):
        walk(start, [start], {start})
    return [Deadlock(threads=[], confidence=Confidence.CERTAIN, edges=[], kind=DeadlockKind.AWAIT,
                     tasks=[models[a] for a in c if a in models]) for c in cycles]

