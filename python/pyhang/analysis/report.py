"""The report of one process: what each thread runs and waits on, the GIL,
the wait-for graph with its deadlocks, verdicts for blocked processes
without a cycle (and for processes pyhang could not read whole:
analysis.completeness), and fork hazards.

`analyse(facts)` asks a collector (pyhang.model.facts.Facts) for what it
needs and makes the report in steps:

    snapshot = gather.process(facts)    # threads and what each sleeps on
    report = threads(snapshot)          # per thread: frames, GIL, blocked_on
    sources.add_sources(...)            # the source line of each Python frame
    gc.analyse(...)                     # a garbage collection in progress, and its thread
    gather.deepen(...)                  # deeper native frames, when a lock records no owner
    conclude(report, snapshot)          # edges, deadlocks, verdicts, hazards

`build_report(snapshot)` makes it from a ProcessSnapshot already assembled;
`from_snapshot(document)` replays a saved snapshot's answers through analyse().
"""
from pyhang.analysis import account, asyncio, completeness, deadlocks, forks, gather, gc, holders, locks, python_api, sources, \
    syscalls
from pyhang.analysis.threading import PythonThreads, exiting
from pyhang.analysis.eval_frames import pair_indices
from pyhang.analysis.python_state import PythonView, frames_omitted, gil_state, gil_summary, holder_blocked, main_gil, \
    python_frames
from pyhang.model.facts import Replay
from pyhang.model.kinds import GilState, PythonStatus, TargetWarning, severity
from pyhang.model.record import replace
from pyhang.model.report import Report, ThreadReport
from pyhang.model.unread import read_problem
from pyhang.model.warning_facts import TargetIssue

# Deep enough to see a driver library below a Python callback
# (PyGILState_Ensure, ctypes, libffi, the driver): the driver-lock heuristics
# look this deep at blocked threads when some lock records no owner.
HEURISTIC_NATIVE_DEPTH = deadlocks.HEURISTIC_NATIVE_DEPTH


def gil_holder(view):
    """The TID holding the main interpreter's GIL, or None."""
    main = main_gil(view)
    return view.holder_tid(main) if main else None


def _python_problem(problem):
    """A thread state's problem as a record, or those of the several states a thread runs in (3.13+ nested
    interpreters: python_state.one_thread) as a list of them."""
    if isinstance(problem, list):
        return [read_problem(p) for p in problem]
    return read_problem(problem)


def threads(snapshot, view=None):
    """The report's target, warnings and threads (with GIL state and what
    each waits on) and its `gil` summary."""
    view = view or PythonView(snapshot.python)
    report = Report(target=snapshot.target)
    report.target.python_version = view.version
    report.warnings = list(snapshot.warnings) + list(view.warnings)
    report.python_status = view.status
    report.lock_problem = snapshot.lock_problem
    report.lock_caveat = snapshot.lock_caveat
    alive = {t.tid for t in snapshot.threads}
    bases = locks.sorted_bases(locks.thread_bases(snapshot.threads))
    holder = gil_holder(view)
    python_threads = PythonThreads(snapshot.threading, view)
    if snapshot.threading is not None and snapshot.threading.imported and snapshot.threading.problem:
        report.warnings.append(TargetIssue(TargetWarning.THREADING_INCOMPLETE, problem=snapshot.threading.problem))
    gil_states = {}
    for snap in snapshot.threads:
        th = ThreadReport(tid=snap.tid, gdb_num=snap.num, name=snap.name, problem=snap.problem,
                          python_name=python_threads.name(snap.tid), host_tid=snap.host_tid)
        th.native_frames = snap.frames
        th.gil = gil_states[snap.tid] = gil_state(view, snap.tid, snap.registers)
        pt = view.thread(snap.tid)
        th.interpreter = pt.interp_id if pt is not None else None
        th.python_frames = python_frames(view, snap.tid, shared=not snap.python_locals, gil=th.gil)
        th.python_frames_omitted = frames_omitted(view, snap.tid)
        th.python_at = pair_indices([f.function for f in snap.frames], th.python_frames, th.python_frames_omitted)
        for k, number in sorted((snap.signal_frames or {}).items()):
            if k < len(th.python_frames):   # frames may be shared between threads: this one's is a copy
                th.python_frames[k] = replace(th.python_frames[k], signal=number)
        for frame, collected in zip(th.python_frames, snap.python_locals or ()):
            frame.locals, frame.locals_problem = collected.locals, read_problem(collected.problem)
        th.blocked_on = locks.settle(locks.blocked_on(view, snap, th.gil, view.holder_of_wait(snap.registers, holder),
                                                      bases, python_threads,
                                                      snapshot.files), alive, bases)
        if th.blocked_on is not None and th.blocked_on.address is not None:
            th.blocked_on.name = snapshot.names.get(th.blocked_on.address)
        th.python_problem = _python_problem(pt.problem) if pt is not None else None
        th.hidden_interpreters = view.hidden_interpreters(snap.tid)
        report.threads.append(th)
    exiting(report, snapshot.threading)
    if view.status == PythonStatus.NOT_PYTHON and completeness.python_evidence(
            snapshot.python, snapshot.target.executable, completeness.frame_libraries(snapshot.threads)):
        # A Python process whose runtime was not found: what its threads do with the GIL is not known.
        for th in report.threads:
            th.gil = gil_states[th.tid] = GilState.UNKNOWN
    report.gil = gil_summary(view, gil_states)
    return report


def frames_wanted(report, depth):
    """TIDs of the threads to unwind HEURISTIC_NATIVE_DEPTH deep, after a
    collection `depth` deep: the blocked ones, when some lock they wait on
    records no owner (deadlocks.needs_deeper_frames)."""
    if depth >= HEURISTIC_NATIVE_DEPTH or not deadlocks.needs_deeper_frames(report.threads):
        return []
    return [t.tid for t in report.threads if t.blocked_on is not None]


def conclude(report, snapshot):
    """Edges from every decoded owner and likely holders where a lock
    records none, every cycle, verdicts, and fork hazards when the snapshot
    has fork facts."""
    asyncio.analyse(report, snapshot)
    python_api.future_runners(report, snapshot.threads)
    report.edges, report.deadlocks, report.cycles_truncated = deadlocks.wait_for_graph(report.threads,
                                                                                      snapshot.threads)
    report.deadlocks += asyncio.await_cycles(report, snapshot)
    blocked = None
    holder = report.gil.holder_tid
    snap = next((s for s in snapshot.threads if s.tid == holder), None) if holder else None
    if snap is not None and PythonView(snapshot.python).gil_of_wait(syscalls.futex_address(snap.registers)) is None:
        # (a holder sleeping on the GIL's own condition or mutex is handing it over, not blocked elsewhere)
        blocked = holder_blocked(holder, snap.registers, report.thread(holder).native_frames,
                                 report.thread(holder).python_frames)
    # Most serious first (model.kinds.SEVERITY): the report's first lines are its answer.
    exited = holders.verdicts(report)
    report.verdicts = sorted(completeness.verdicts(report, snapshot) + exited +
                             deadlocks.explained_elsewhere(deadlocks.verdicts(report, blocked, snapshot.threads,
                                                                              snapshot.native_depth),
                                                           {tid for v in exited for tid in v.threads}) +
                             asyncio.loop_verdicts(report), key=lambda v: severity(v.kind))
    if snapshot.fork_facts is not None:
        report.fork_analysis = forks.analyse(report, snapshot.fork_facts)
        report.fork_hazards = report.fork_analysis.hazards
        # (a lock copied locked, a gRPC call or OpenMP region waiting for threads fork did not copy)
        orphaned = {tid for h in report.fork_hazards if h.hangs for tid in h.threads}
        report.verdicts = deadlocks.explained_elsewhere(report.verdicts, orphaned)
    account.analyse(report, {t.tid: t.registers for t in snapshot.threads})
    report.verdicts.sort(key=lambda v: severity(v.kind))
    report.exit_status = completeness.report_status(report)
    return report


def build_report(snapshot):
    return conclude(threads(snapshot), snapshot)


def analyse(facts, native_depth=None, fork_facts=True, locals=False):
    """(ProcessSnapshot, Report) of the target `facts` answers for.  Without
    an explicit `native_depth`, blocked threads are unwound deeper when a
    lock they wait on records no owner (frames_wanted).  With `locals`,
    every Python frame's locals too."""
    depth = native_depth or gather.DEFAULT_NATIVE_DEPTH
    snapshot, view = gather.process(facts, depth)
    if locals and view.ok:
        gather.add_python_locals(facts, snapshot, view)
    report = threads(snapshot, view)
    sources.add_sources(facts, report)
    if native_depth is None:
        wanted = frames_wanted(report, depth)
        if wanted:
            gather.deepen(facts, snapshot, report, wanted, HEURISTIC_NATIVE_DEPTH)
    gc.analyse(facts, report, view)
    if fork_facts:
        snapshot.fork_facts = gather.fork_facts(facts, report, snapshot.threads)
    conclude(report, snapshot)
    return snapshot, report


def from_snapshot(document):
    """(ProcessSnapshot, Report) of a saved snapshot: the answers of a
    pyhang-snapshot/2 document (model.facts.Recording) replayed through
    analyse() with the options it was made with.  A document of another
    schema is refused (ValueError)."""
    replay = Replay(document)
    options = replay.options
    snapshot, report = analyse(replay, native_depth=options.get("native_depth"), locals=bool(options.get("locals")))
    report.unanswered = len(replay.unanswered)
    return snapshot, report

