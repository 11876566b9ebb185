"""Examining several processes: a live process and its descendants, or one
core per process.  Each is examined by its own `gdb -batch` (in parallel,
bounded in count and time) that answers the analysis's questions
(pyhang.gdb_pipe), or, for the command line's live tree, stopped by pyhang
itself (pyhang.stopped: each process stopped, read and let go by one
thread of the pool); each is analysed here, and the tree analysis
(pyhang.analysis.tree) joins them.  A process that cannot be examined — it
exited, is a zombie, may not be traced — is one line, and the rest of the
tree is still reported.
"""
import concurrent.futures
import os
import types

from pyhang import gdb_batch, live_causes, nostop, procfs, stopped, transfers
from pyhang.analysis import tree as tree_analysis
from pyhang.analysis import tree_forks
from pyhang.model.tree import ProcessEntry, ProcessExit, TreeReport

MAX_PROCESSES = 64       # descendants examined; the rest are counted
# gdb sessions at once: one per core (each is busy on its own), two at least, eight at most
JOBS = max(2, min(8, os.cpu_count() or 2))
TIMEOUT = 120            # seconds for one gdb session


def _target(pid, core, sysroot, lib_search_path):
    """What gdb_batch.run needs to know of the process or core its gdb looks at."""
    return types.SimpleNamespace(pid=pid, core=core, executable=None, json=False, sysroot=sysroot,
                                 lib_search_path=lib_search_path)


# When a live process is stopped to be examined (the command line's --stop
# and --no-stop): AUTO stops it unless a thread is inside a transfer a stop
# would cut short (pyhang.transfers).
AUTO, ALWAYS, NEVER = "auto", "always", "never"


def cut_short(pid, stopping):
    """None when process `pid` is to be stopped (by gdb); else the transfers
    a stop would cut short, [] when none but it is not to be stopped anyway."""
    if pid is None or stopping == ALWAYS:
        return None
    found = transfers.cut_short(pid)
    return found if found or stopping == NEVER else None


def examine(pid=None, core=None, gdbext=gdb_batch.GDBEXT, sysroot=None, lib_search_path=None, stopping=AUTO,
            own_stop=False):
    """(Report, None) of one process or core, or (None, why not).
    `gdbext`: the pyhang.gdb the gdb sessions load; `sysroot`,
    `lib_search_path`: where a core's files are now (cores only);
    `stopping`: whether a live process may be stopped (AUTO, ALWAYS, NEVER);
    `own_stop`: a live process is stopped by pyhang itself, not by a gdb
    (never inside gdb, whose waits for its own tracee could take another's)."""
    because = cut_short(pid, stopping)
    if because is not None:
        try:
            return nostop.examine(pid, because=because)[1], None
        except Exception as exc:  # noqa: BLE001 — one line for this process, the rest of the tree goes on
            return None, "it could not be read without stopping it (%s)" % exc
    if own_stop and pid is not None:
        before = procfs.stat(pid)
        try:
            return stopped.examine(pid)[1], None
        except stopped.StopFailed as exc:
            return None, live_causes.not_stopped(pid, before, exc.problem, exc.error)[0]
        except Exception as exc:  # noqa: BLE001 — one line for this process, the rest of the tree goes on
            return None, "it could not be read while stopped (%s)" % exc
    target = _target(pid, core, sysroot, lib_search_path)
    try:
        return gdb_batch.examine(gdb_batch.open_gdb(target, timeout=TIMEOUT, gdbext=gdbext), target,
                                 timeout=TIMEOUT)[1], None
    except gdb_batch.Failure as f:
        reason = f.message + ("".join(": %s" % d for d in f.details[:1]))
        return None, reason
    except (ValueError, KeyError, TypeError) as exc:
        return None, "its gdb gave an answer pyhang cannot read (%s)" % exc


def lock_objects(addresses, pid=None, core=None, gdbext=gdb_batch.GDBEXT, sysroot=None, lib_search_path=None,
                 stopping=AUTO, own_stop=False):
    """{address: what is there} in one process or core (`pyhang lock-objects`
    in a gdb of its own, or read without stopping it), or None when it could
    not be asked."""
    if cut_short(pid, stopping) is not None or (own_stop and pid is not None):
        try:
            found = nostop.no_stop_facts(pid).lock_objects(addresses) if cut_short(pid, stopping) is not None \
                else stopped.lock_objects(pid, addresses)
        except Exception:  # noqa: BLE001 — not asked: the children's hazards stay as they are
            return None
        return {o.object: o for o in found}
    target = _target(pid, core, sysroot, lib_search_path)
    try:
        found = gdb_batch.ask(gdb_batch.open_gdb(target, timeout=TIMEOUT, gdbext=gdbext), target,
                              lambda facts: facts.lock_objects(addresses), timeout=TIMEOUT)
        return {o.object: o for o in found or ()}
    except (gdb_batch.Failure, ValueError, TypeError):
        return None


def _ask_parents(tree, ask, here=None):
    """The second look, only when a fork child waits on a lock that records
    no owner (tree_forks.lock_objects_wanted): each such parent is asked what
    it has at those addresses.  `ask(entry, addresses)`: {address: entry} or
    None, by a gdb of its own; `here`: (PID, lock_objects(addresses)) of the
    process this gdb is attached to, asked in this thread (gdb's API is not
    for other threads)."""
    wanted = tree_forks.lock_objects_wanted(tree)
    entries = {p.pid: p for p in tree.processes if p.pid in wanted}
    if here is not None and here[0] in wanted:
        entries[here[0]].lock_objects = {o.object: o for o in here[1](wanted.pop(here[0]))}
    if not wanted:
        return
    with concurrent.futures.ThreadPoolExecutor(max_workers=JOBS) as pool:
        futures = {pool.submit(ask, entries[pid], addresses): pid for pid, addresses in wanted.items()}
        for fut in concurrent.futures.as_completed(futures):
            entries[futures[fut]].lock_objects = fut.result()


ZOMBIE = "a zombie: it exited and its parent has not reaped it"


def _why_not(pid):
    """(why a live process is not worth a gdb session, or None; its
    ProcessExit when it is a zombie, else None)."""
    s = procfs.stat(pid)
    if s is None:
        return "it exited before pyhang could examine it", None
    if s["state"] == "Z" and len(procfs.task_ids(pid)) > 1:
        # the main thread ended (pthread_exit) while others run: alive, and no exit to tell
        return "its main thread exited while its other threads run", None
    if s["state"] == "Z":
        return ZOMBIE, ProcessExit(wait_status=procfs.zombie_status(pid, s))
    return None, None


def _recorded_zombies(tree):
    """The zombie children the cores' records of /proc name (pyhang gcore writes none of a zombie, which has
    no memory), each an entry as a live tree has it, with its wait status: the death that explains the waits
    on what it served, as it does live.  A child of which a core is given is that core's."""
    pids = {p.pid for p in tree.processes}
    for p in list(tree.processes):
        summary = p.report.target.proc_record if p.report is not None else None
        for c in (summary.children if summary is not None else []):
            if c.state == "Z" and c.pid not in pids:
                pids.add(c.pid)
                tree.processes.append(ProcessEntry(pid=c.pid, parent_pid=p.pid, problem=ZOMBIE, comm=c.comm,
                                                   exit=ProcessExit(wait_status=c.exit_status)))


def _run_all(jobs, gdbext, **where):
    """{key: (report, problem)} for [(key, pid, core)], JOBS at a time;
    `where`: examine()'s sysroot, lib_search_path, stopping and own_stop."""
    out = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=JOBS) as pool:
        futures = {pool.submit(examine, pid, core, gdbext, **where): key for key, pid, core in jobs}
        for fut in concurrent.futures.as_completed(futures):
            out[futures[fut]] = fut.result()
    return out


def live_tree(root, root_report=None, limit=MAX_PROCESSES, gdbext=gdb_batch.GDBEXT, root_lock_objects=None,
              stopping=AUTO, look_interval=None, own_stop=False):
    """The TreeReport of live process `root` and its descendants.
    `root_report`: the root's Report when the caller made it (pyhang in gdb
    attached to it), else the root is examined like the others;
    `root_lock_objects(addresses)`: then the root's lock objects, asked there;
    `stopping`: whether each process may be stopped (AUTO, ALWAYS, NEVER);
    `look_interval`: seconds between the two looks of a second look at every
    process examined, taken together once every stop is over (None: one look);
    `own_stop`: each process is stopped by pyhang itself, not by a gdb (examine)."""
    found, more = procfs.descendants(root, limit)
    tree = TreeReport(root_pid=root, truncated=0)
    if more:
        tree.truncated = max(1, len(procfs.descendants(root, limit * 16)[0]) - limit)
    members = [(root, procfs.parent_pid(root))] + found
    jobs, problems, exits = [], {}, {}
    for pid, parent in members:
        if pid == root and root_report is not None:
            continue
        problems[pid], exits[pid] = _why_not(pid)
        if problems[pid] is None:
            jobs.append((pid, pid, None))
    results = _run_all(jobs, gdbext, stopping=stopping, own_stop=own_stop)
    for pid, parent in members:
        report, problem = (root_report, None) if pid == root and root_report is not None else \
            results.get(pid, (None, problems.get(pid)))
        tree.processes.append(ProcessEntry(pid=pid, parent_pid=parent, report=report, problem=problem,
                                           comm=(procfs.stat(pid) or {}).get("comm"), exit=exits.get(pid)))
    here = (root, root_lock_objects or (lambda addresses: [])) if root_report is not None else None
    _ask_parents(tree, lambda entry, addresses: lock_objects(addresses, pid=entry.pid, gdbext=gdbext,
                                                             stopping=stopping, own_stop=own_stop), here)
    if look_interval is not None:
        second_looks(tree, look_interval)
    return tree_analysis.analyse(tree)


def second_looks(tree, interval):
    """Each examined process of `tree` looked at twice more without stopping it, all in one interval, and
    what that means for its report (analysis.progress); the tree's analysis then reads the reports so
    concluded."""
    from pyhang import second_look
    from pyhang.analysis import completeness, progress
    reports = {p.pid: p.report for p in tree.processes if p.report is not None and p.report.target.kind == "live"}
    looks = second_look.look_many({pid: [t.tid for t in r.threads] for pid, r in reports.items()}, interval)
    for pid, report in reports.items():
        progress.apply(report, looks[pid])
        report.exit_status = completeness.report_status(report)


def core_tree(cores, gdbext=gdb_batch.GDBEXT, sysroot=None, lib_search_path=None):
    """The TreeReport of one core per process; parents from the cores'
    own records (NT_PRPSINFO).  `sysroot`, `lib_search_path`: where the
    cores' executables and libraries are now, for every core."""
    results = _run_all([(core, None, core) for core in cores], gdbext, sysroot=sysroot,
                       lib_search_path=lib_search_path)
    tree = TreeReport(root_pid=None)
    core_of = {}
    for core in cores:
        report, problem = results[core]
        if report is not None:
            t = report.target
            core_of[t.pid] = core
            tree.processes.append(ProcessEntry(pid=t.pid, parent_pid=t.parent_pid, report=report,
                                               comm=os.path.basename(t.executable or "") or None))
        else:
            tree.processes.append(ProcessEntry(pid=0, problem="%s: %s" % (core, problem)))
    _recorded_zombies(tree)
    _ask_parents(tree, lambda entry, addresses: lock_objects(
        addresses, core=core_of[entry.pid], gdbext=gdbext, sysroot=sysroot, lib_search_path=lib_search_path))
    pids = {p.pid for p in tree.processes}
    roots = [p.pid for p in tree.processes if p.report is not None and p.parent_pid not in pids]
    tree.root_pid = roots[0] if len(roots) == 1 else None
    # parents before children, as for a live tree
    parents = {p.pid: p.parent_pid for p in tree.processes}

    def depth(pid):
        d, seen = 0, {pid}
        while parents.get(pid) in parents and parents[pid] not in seen:
            pid = parents[pid]
            seen.add(pid)
            d += 1
        return d
    tree.processes.sort(key=lambda p: (depth(p.pid), p.pid))
    return tree_analysis.analyse(tree)


def _quoted(path):
    """`path` as one argument of a gdb command (gdb.string_to_argv)."""
    return '"%s"' % path.replace("\\", "\\\\").replace('"', '\\"')


def gcore(pid, path, gdbext=gdb_batch.GDBEXT, stopping=AUTO):
    """(pyhang gcore's line, None) once a gdb of its own has written the core of live process `pid`
    to `path` (`pyhang gcore`: every thread's stack, the record of /proc), or (None, why not): it
    exited, is a zombie, cannot be traced, or (`stopping` AUTO) a stop would cut a transfer short."""
    why, _ = _why_not(pid)
    if why is not None:
        return None, why
    because = cut_short(pid, stopping)
    if because:
        from pyhang.render.gcore import cut_short_text
        return None, cut_short_text(because)
    try:
        said = gdb_batch.run_command(_target(pid, None, None, None), "pyhang gcore " + _quoted(path),
                                     timeout=TIMEOUT, gdbext=gdbext)
    except gdb_batch.Failure as f:
        return None, f.message + "".join(": %s" % d for d in f.details[:1])
    return said[-1], None


def gcore_tree(root, prefix, limit=MAX_PROCESSES, gdbext=gdb_batch.GDBEXT, stopping=AUTO):
    """[(pid, pyhang gcore's line or None, why not or None, whether it is a zombie)] of live process
    `root` and its descendants (as `report --tree` finds them), each core written to PREFIX.PID by a
    gdb of its own, JOBS at a time; parents first.  A zombie has no memory to write."""
    found, _ = procfs.descendants(root, limit)
    pids = [root] + [pid for pid, _ in found]
    out = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=JOBS) as pool:
        futures = {pool.submit(gcore, pid, "%s.%d" % (prefix, pid), gdbext, stopping): pid for pid in pids}
        for fut in concurrent.futures.as_completed(futures):
            out[futures[fut]] = fut.result()
    return [(pid,) + out[pid] + ((procfs.stat(pid) or {}).get("state") == "Z",) for pid in pids]

