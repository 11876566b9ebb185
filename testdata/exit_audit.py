#!/usr/bin/env python3
"""The exit-status audit: every scenario program of testdata/scenarios, in each of its modes, looked at
with four reports, each exit status judged against what the scenario's own docstring says the program is.

  live        `pyhang report -p PID` (its default second look)
  tree        `pyhang report --tree -p PID` (from the scenario's top process)
  pyhang-core a core written by `pyhang gcore -p PID`, read by `pyhang report CORE EXE`
  gdb-core    a core written by gdb's gcore (harness.gcore), read the same way

A judgement is `hung` (every report must exit non-zero), `healthy` (every report must exit 0),
`borderline` (the docstring leaves it open, for the reason given: shown, never a mismatch) or `truth`
(hung or healthy as the scenario's recorded truth says).  A case may judge its top process alone and its
tree apart (a fork parent that sleeps while its child is stuck: the parent alone is healthy, the tree hung).

Prints one markdown table (scenario, mode, the four exit statuses, judgement, reason, MISMATCH marks) and
exits 1 when any report contradicts its judgement or could not be made (status 1, a crash, a timeout, a
scenario that did not start).  Far too slow for the suite (minutes): run it by hand (docs/developing.md).

usage: testdata/exit_audit.py [--python EXE] [--only KEY...] [-j N] [--json FILE] [--table-from FILE] [--list]
  --python  the interpreter the scenarios run on (default Debian's /usr/bin/python3.11): a pyenv one, or a
            launcher of testdata/containers.py (its cores are read with the root as the sysroot)
  --only    these keys only (SCENARIO or SCENARIO:MODE; a bare scenario name takes all its modes)
  -j N      N cases at once (default 1; on this 2-core machine use -j2 with nice)
  --json    also write every report's exit status, headline and thread accounts to FILE (for a fix)
  --table-from  no run: the table of the reports a --json FILE kept, judged by today's table (after a
            judgement is corrected)
"""
import argparse
import collections
import concurrent.futures
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402
import servers  # noqa: E402

DEBIAN_PY = "/usr/bin/python3.11"
HUNG, HEALTHY, BORDERLINE, TRUTH = "hung", "healthy", "borderline", "truth"
JUDGEMENTS = (HUNG, HEALTHY, BORDERLINE, TRUTH)
MODES = ("live", "tree", "pyhang-core", "gdb-core")
F = harness.fixture_path


class Case(collections.namedtuple("Case", "key script args judge reason tree env needs fresh minimum start "
                                           "modes")):
    """One scenario program in one mode.  judge: its top process alone (live and the two cores); tree: the
    `--tree` report's (None: the same); modes: {report: (judgement, why)} for a report that cannot know what
    the others can (a core gdb writes records no fd table); needs: Debian packages of python3.11 only, or a service
    ("redis", "postgres") or what the audit cannot start ("slurm"); fresh: a stop (an attach) changes the
    hang, so each report gets a start of its own; minimum: the lowest Python; start: a function(python,
    env) -> [Scenario...] for programs started otherwise (the last one is looked at)."""


def case(key, script, args, judge, reason, tree=None, env=None, needs=(), fresh=False, minimum=(3, 6),
         start=None, modes=None):
    return Case(key, script, [str(a) for a in args], judge, reason, tree, env or {}, tuple(needs), fresh,
                minimum, start, modes or {})


def judge_of(c, mode):
    """The judgement of case `c`'s report `mode`."""
    if mode in c.modes:
        return c.modes[mode][0]
    return (c.tree or c.judge) if mode == "tree" else c.judge


READY_TIMEOUT = 90   # s: Scenario.start reads the program's lines with no deadline of its own


def started(s):
    """s.start(), its program killed when it has not got ready in READY_TIMEOUT (one that hangs before it
    prints READY, on an interpreter it does not support, would hold the audit for ever)."""
    done = threading.Event()

    def kill():
        if not done.is_set() and s.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(s.proc.pid, signal.SIGKILL)
    timer = threading.Timer(READY_TIMEOUT, kill)
    timer.start()
    try:
        return s.start()
    finally:
        done.set()
        timer.cancel()


def _grpc_client(python, env):
    server = harness.python_scenario(python, "grpc_call.py", "server", env=env)
    server.env["PYHANG_GRPC_ARRIVED"] = os.path.join(server.tmp, "arrived.json")
    started(server)
    try:
        client = started(harness.python_scenario(python, "grpc_call.py", "client", server.truth["port"],
                                                 env=dict(env, PYHANG_GRPC_ARRIVED=server.env["PYHANG_GRPC_ARRIVED"])))
    except BaseException:
        server.stop()
        raise
    return [server, client]


def _gunicorn(python, env):
    app = os.path.join(harness.SCENARIOS, "gunicorn_app")
    env = dict(env, PYTHONPATH=app)
    return [started(harness.Scenario([python, "-u", "-m", "gunicorn", "--preload", "-w", "1", "--timeout", "3600",
                                      "-b", "unix:gunicorn.sock", "app:application"], env=env))]


def _ranks(rank, world):
    return {"RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": str(world)}


# Every scenario program and mode, with the judgement its docstring gives and the reason in one line.
CASES = [
    case("lock_abba:Lock", "lock_abba.py", ["Lock"], HUNG, "two threads take two Locks in opposite orders: ABBA"),
    case("lock_abba:RLock", "lock_abba.py", ["RLock"], HUNG, "the same ABBA with RLocks (owners recorded)"),
    case("idle_server", "idle_server.py", [], HEALTHY, "a server between requests: every thread idle by design"),
    case("timed_waits", "timed_waits.py", [], HEALTHY, "every wait has a 3600 s timeout; main holds LOCK and sleeps",
         modes={"gdb-core": (BORDERLINE, "gdb's core has no fd table: its timed poll on a pipe has the facts of "
                                         "fork_dataloader's hung parent (exit 4: an fd a core does not describe)")}),
    case("parked_threads", "parked_threads.py", [3, 5], HEALTHY, "main and N workers parked in time.sleep"),
    case("deep_recursion", "deep_recursion.py", [], HEALTHY, "threads deep in recursion, parked in time.sleep"),
    case("gil_contention", "gil_contention.py", [4], HEALTHY, "K threads spin in pure Python; main sleeps"),
    case("switching", "switching.py", [], HEALTHY, "threads that never stay parked (spin, 1 ms sleeps)"),
    case("py_locals", "py_locals.py", [], HEALTHY, "a worker parked three frames deep in time.sleep; main sleeps"),
    case("bad_frames", "bad_frames.py", [], HEALTHY, "threads sleep; only their frame data is damaged"),
    case("subinterpreters", "subinterpreters.py", [], HEALTHY, "every thread of every interpreter in time.sleep",
         minimum=(3, 12)),
    case("idle_threads", "idle_threads.py", [24], HUNG,
         "main waits on RESULT, never set; joiner joins a thread waiting on DONE, never set"),
    case("moving_threads", "moving_threads.py", [], HUNG,
         "a thread waits on an Event nothing sets while another spins"),
    case("many_threads", "many_threads.py", [256, 5], HUNG, "T threads and main all parked on one Event, never set"),
    case("own_locks", "own_locks.py", [100], HUNG, "N threads each wait for a Lock the main thread holds for ever"),
    case("source_lines", "source_lines.py", [], HUNG, "workers wait in Event.wait on an Event nothing sets"),
    case("py_locks", "py_locks.py", [], HUNG,
         "lock waiters behind holders that sleep; Condition waiters never notified"),
    case("py_names", "py_names.py", [], HUNG, "waiters on Locks whose holders wait on an Event nobody sets"),
    case("py_objects", "py_objects.py", [], HUNG,
         "Queue/Semaphore/Event/Barrier/Future waits nothing ends; a pool starves"),
    case("c_calls", "c_calls.py", [], HUNG,
         "threads in C calls: acquire of a Lock main holds, select/read of dead pipes"),
    case("gc_finalizer", "gc_finalizer.py", [], HUNG, "a collection whose finalizer waits for a Lock held for ever"),
    case("gil_held_in_native", "gil_held_in_native.py", [3], HUNG,
         "pause() through PyDLL holds the GIL; the rest wait for it"),
    case("import_cycle", "import_cycle.py", [], HUNG, "an import lock and an RLock taken in opposite orders"),
    case("lock_join:with", "lock_join.py", ["with"], HUNG, "main joins a worker that waits for the Lock main holds"),
    case("lock_join:exit", "lock_join.py", ["exit"], HUNG,
         "the exiting interpreter joins a worker waiting on an Event nobody sets"),
    case("self_deadlock:with", "self_deadlock.py", ["with"], HUNG, "a method takes self._lock its caller holds"),
    case("self_deadlock:signal", "self_deadlock.py", ["signal"], HUNG,
         "a signal handler takes the Lock the frame beneath holds"),
    case("queue_join:skipped", "queue_join.py", ["skipped"], HUNG, "Queue.join after a consumer skipped task_done()"),
    case("queue_join:busy", "queue_join.py", ["busy"], HUNG,
         "Queue.join on a consumer that waits on an Event nothing sets"),
    case("queue_join:full", "queue_join.py", ["full"], HUNG, "put() on a full queue no consumer reaches any more"),
    case("queue_join:atexit", "queue_join.py", ["atexit"], HUNG, "skipped's join, run by an atexit callback"),
    case("loop_blocked:sleep", "loop_blocked.py", [], HUNG,
         "an event loop blocked by time.sleep(3600) in a task while another task waits to run", minimum=(3, 7)),
    case("loop_blocked:socket", "loop_blocked.py", ["socket"], HUNG,
         "an event loop blocked reading a socket nothing sends to", minimum=(3, 7)),
    case("starved_pool:as_completed", "starved_pool.py", ["as_completed"], HUNG,
         "a ThreadPoolExecutor starving itself while main iterates as_completed over its futures"),
    case("starved_pool:wait", "starved_pool.py", ["wait"], HUNG, "the same, main in concurrent.futures.wait"),
    case("starved_pool:result", "starved_pool.py", ["result"], HUNG, "the same, main in one outer future's result()"),
    case("loop_self_wait", "loop_self_wait.py", [], HUNG,
         "the loop's thread waits on .result() of work for its own loop", minimum=(3, 7)),
    case("asyncio_tasks", "asyncio_tasks.py", [], HUNG, "await cycles; a second loop blocked by synchronous calls",
         minimum=(3, 8)),
    case("asyncio_tasks:pure", "asyncio_tasks.py", ["pure"], HUNG, "the same with pure-Python tasks", minimum=(3, 8)),
    case("sqlite_future", "sqlite_future.py", [], BORDERLINE,
         "main waits for a future whose SQLite busy handler waits on "
         "main's transaction: ends only when the busy timeout runs out (then the work item fails)"),
    case("own_backlog", "own_backlog.py", [], HUNG,
         "reads of connections to own listeners never accepted; main reads a dead pipe"),
    case("syscall_waits", "syscall_waits.py", [], HUNG,
         "parent waits for its child, which reads a pipe only the parent can write"),
    case("server_apart", "server_apart.py", [], HUNG,
         "a client waits for the answer of a daemon (its parent init) that never answers"),
    case("tcp_peers", "tcp_peers.py", [], HUNG,
         "recv from peers a child holds while it reads a dead pipe; main waitpid"),
    case("py_buffered:threads", "py_buffered.py", ["threads"], HUNG,
         "writes to pipes nobody reads; waiters on the writers' buffer locks", fresh=True),
    case("py_buffered:fork", "py_buffered.py", ["fork"], HUNG, "a child blocks on a buffer lock copied locked by fork",
         fresh=True),
    case("native_locks", "native_locks.py", [F("liblockfixture.so")], HUNG,
         "waiters on every glibc lock kind, each held by a holder that never lets go"),
    case("driver_deadlock:w", "driver_deadlock.py", [F("libdriverfixture.so"), "w"], HUNG,
         "the GIL against a driver's rwlock (write)"),
    case("driver_deadlock:r", "driver_deadlock.py", [F("libdriverfixture.so"), "r"], HUNG,
         "the GIL against a driver's rwlock (read)"),
    case("file_locks:cycle", "file_locks.py", ["cycle"], HUNG,
         "parent and child each hold one flock and wait for the other's"),
    case("file_locks:range", "file_locks.py", ["range"], HUNG,
         "parent waits for a range lock its child holds while it reads a dead pipe"),
    case("fork_mutex", "fork_mutex.py", [F("libforkfixture.so")], HEALTHY,
         "the child blocks for ever on a mutex copied locked; the parent alone only sleeps", tree=HUNG),
    case("vfork_wait", "vfork_wait.py", [F("libforkfixture.so")], HUNG,
         "a thread waits in vfork for a child that sleeps an hour: no ptrace stop reaches it (gdb's attach waits "
         "for it), pyhang's stop goes on without it and reads its wait from /proc"),
    case("fork_pool_lock:lock", "fork_pool_lock.py", [], HUNG,
         "Pool workers block on a Lock copied locked; parent in map"),
    case("fork_pool_lock:rlock", "fork_pool_lock.py", ["rlock"], HUNG, "the same with a Condition's RLock"),
    case("fork_cow", "fork_cow.py", [], BORDERLINE,
         "the Pool's workers park (sleep) in their task for ever: the parent's map waits on live workers that "
         "never return"),
    case("fork_cuda", "fork_cuda.py", [F("libcudafixture.so")], HEALTHY,
         "CUDA initialised before fork; child and parent park in sleep"),
    case("fork_dataloader", "fork_dataloader.py", [], HUNG,
         "workers read a shard pipe nobody writes; the parent polls for batches"),
    case("fork_torch", "fork_torch.py", [2], HEALTHY, "the child runs OpenMP ops after fork; hung as its truth says; "
         "the parent alone sleeps", tree=TRUTH, needs=["python3-torch"]),
    case("loader_worker_killed:killed", "loader_worker_killed.py", ["killed"], HUNG,
         "parent get() waits for a killed worker's result"),
    case("loader_worker_killed:sleeper", "loader_worker_killed.py", ["sleeper"], HUNG,
         "the same (worker 1 killed) while worker 2 sleeps an hour before its put"),
    case("pool_idle", "pool_idle.py", [3], HEALTHY,
         "a Pool between tasks: the parent sleeps, its workers wait for their next task"),
    case("pool_worker_killed", "pool_worker_killed.py", [], HUNG,
         "a Pool worker killed in a task: map waits for the lost task"),
    case("manager_lock", "manager_lock.py", [], HUNG, "a manager Lock held by a killed client; main asks for it"),
    case("manager_lock:simplequeue", "manager_lock.py", ["simplequeue"], HUNG,
         "the same, and a get on an empty SimpleQueue", minimum=(3, 7)),
    case("mp_feeder_exit", "mp_feeder_exit.py", [], HUNG,
         "the worker's exit joins its feeder, which writes a pipe the parent reads after join", minimum=(3, 8)),
    case("pipe_knot:knot", "pipe_knot.py", ["knot"], HUNG, "three readers, each the only writers of the others' pipes"),
    case("pipe_knot:free", "pipe_knot.py", ["free"], BORDERLINE,
         "the same with a fourth writer that wakes every half second: it could write (no deadlock), and never "
         "does; the parent alone waits for its children", tree=HEALTHY),
    case("pipe_knot:asleep", "pipe_knot.py", ["asleep"], HUNG,
         "the same with a fourth writer that sleeps an hour at a time: a likely deadlock until it wakes"),
    case("pipe_stderr", "pipe_stderr.py", [], HUNG, "parent reads stdout while the child blocks writing stderr",
         env={"PYTHONUNBUFFERED": "1"}, fresh=True),
    case("process_tree:pipe", "process_tree.py", ["pipe"], HUNG,
         "parent waitpid; child reads a pipe only the parent holds"),
    case("process_tree:subprocess", "process_tree.py", ["subprocess"], HUNG,
         "both pipes full, each writer waits for the other",
         fresh=True),
    case("process_tree:socketpair", "process_tree.py", ["socketpair"], HUNG, "parent and child each receive first"),
    case("process_tree:pool", "process_tree.py", ["pool"], HUNG,
         "Pool workers read a pipe only the joining parent can write"),
    case("process_tree:zombie", "process_tree.py", ["zombie"], HUNG,
         "the parent reads a pipe nobody writes; a zombie child"),
    case("process_tree:traced", "process_tree.py", ["traced"], HUNG, "every process reads a pipe nobody writes"),
    case("training_save", "training_save.py", [], HUNG, "torch.save writes a pipe to a child that stopped reading",
         needs=["python3-torch"], fresh=True),
    case("gloo_ranks", "gloo_ranks.py", [], HUNG,
         "gloo ranks diverged: barrier against all_reduce", needs=["python3-torch"]),
    case("aiohttp_self_call", "aiohttp_self_call.py", [], HUNG,
         "a handler calls its own blocked server through requests",
         needs=["python3-aiohttp", "python3-requests"]),
    case("grpc_call:server", "grpc_call.py", ["server"], HEALTHY,
         "a gRPC server with no call made: it only waits for requests",
         needs=["python3-grpcio"]),
    case("grpc_call:client", "grpc_call.py", ["client"], HUNG, "a call with no deadline to a server that never answers",
         needs=["python3-grpcio"], start=_grpc_client),
    case("grpc_fork", "grpc_fork.py", [], HUNG, "a forked worker's RPC never completes; the parent joins it",
         needs=["python3-grpcio"]),
    case("gunicorn_app", "gunicorn_app", [], BORDERLINE,
         "the arbiter alone: its loading thread holds MODEL_LOCK waiting on an Event never set (its worker is stuck)",
         tree=HUNG, needs=["python3-gunicorn"], start=_gunicorn),
    case("pg_row_lock", "pg_row_lock.py", [], HUNG, "a row lock held across a wait for the thread that waits for it",
         needs=["python3-psycopg2", "postgres"]),
    case("redis_blpop", "redis_blpop.py", [], HUNG, "BLPOP with no timeout on a list no producer pushes to",
         needs=["python3-redis", "redis"]),
    case("redis_pool_block", "redis_pool_block.py", [], HUNG, "a pool's only connection held by a BLPOP nothing ends",
         needs=["python3-redis", "redis"]),
    case("sa_pool_exhausted", "sa_pool_exhausted.py", [], HUNG, "a QueuePool whose holders wait for the waiter",
         needs=["python3-sqlalchemy"]),
    case("urllib3_pool_block", "urllib3_pool_block.py", [], HUNG,
         "a pool's only connection streams from a silent upstream",
         needs=["python3-urllib3"]),
    case("local_ranks:peers", "local_ranks.py", [], HUNG, "a rank waits for an Event only its peers would set",
         env=_ranks(0, 2)),
    case("local_ranks:odd", "local_ranks.py", [], HUNG, "the odd rank: ABBA between main and its prefetch thread",
         env=_ranks(1, 2)),
    case("slurm_ranks:collective", "slurm_ranks.py", ["collective"], HUNG,
         "one task of a Slurm job whose last rank calls barrier where the others all_reduce", needs=["slurm"]),
    case("slurm_ranks:deadlock", "slurm_ranks.py", ["deadlock"], HUNG,
         "one task of a Slurm job whose last rank deadlocks (ABBA) before its all_reduce", needs=["slurm"]),
]
BYKEY = {c.key: c for c in CASES}

# Files of testdata/scenarios that are not hang programs of their own.
NOT_HANG_PROGRAMS = {
    "truth.py": "the scenarios' truth recorder",
    "fork_common.py": "helpers the scenarios share",
    "grpc_common.py": "the gRPC scenarios' server helper",
    "import_cycle_module.py": "imported by import_cycle.py",
    "py_names_module.py": "imported by py_names.py",
    "py_objects_slow_module.py": "imported by py_objects.py",
    "subinterpreter_child.py": "run inside a subinterpreter by subinterpreters.py",
}

SERVICES = ("redis", "postgres")
CANNOT = {"slurm": "needs the test Slurm cluster (gdbext/tests/test_slurm_job.py runs it)"}


def scenario_files():
    """Every entry of testdata/scenarios a table must hold: its .py files and its directories."""
    names = []
    for name in sorted(os.listdir(harness.SCENARIOS)):
        path = os.path.join(harness.SCENARIOS, name)
        if name.startswith((".", "__")):
            continue
        if name.endswith(".py") or os.path.isdir(path):
            names.append(name)
    return names


# ------------------------------------------------------------------ running ----

def python_version(python):
    out = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"], stdout=subprocess.PIPE,
                         text=True, timeout=120).stdout.split()
    return tuple(int(x) for x in out)


def why_not(c, python, version):
    """Why the case cannot run on `python` here, or None."""
    if version < c.minimum:
        return "needs Python %d.%d+" % c.minimum
    for need in c.needs:
        if need in CANNOT:
            return CANNOT[need]
        if need.startswith("python3-") and python != DEBIAN_PY:
            return "needs Debian's %s (python3.11 only)" % need
    return None


def judgement_of(judge, truth):
    if judge == TRUTH:
        finished = (truth or {}).get("child_finished")
        return HEALTHY if finished else HUNG
    return judge


def mismatch(judge, status):
    if not isinstance(status, int) or status in (1, 2) or status > 5:
        return True   # could not be made, or wrong
    if judge == HUNG:
        return status == 0
    if judge == HEALTHY:
        return status != 0
    return False


def summary(status, out, err):
    """What the table and the --json file keep of one report."""
    r = {"status": status}
    try:
        doc = json.loads(out)
    except ValueError:
        r["error"] = (err or out).strip()[-800:]
        return r
    r["headline"] = doc.get("headline")
    if doc.get("exit_status") != status:
        r["json_status"] = doc.get("exit_status")
    if "Traceback" in (err or ""):
        r["error"] = err[-800:]
    procs = doc["processes"] if "processes" in doc else [doc]
    r["processes"] = [{"pid": (p.get("target") or {}).get("pid"), "exit_status": p.get("exit_status"),
                       "headline": p.get("headline"),
                       "threads": [[t.get("tid"), t.get("name"), (t.get("account") or {}).get("state"),
                                    (t.get("account") or {}).get("reason")] for t in p.get("threads", [])]}
                      for p in procs if "schema" in p]
    return r


def cli(*args, look=False):
    try:
        return summary(*harness.pyhang_cli(*args, timeout=300, look=look))
    except subprocess.TimeoutExpired:
        return {"status": "timeout"}


class Audit:
    def __init__(self, python, services):
        self.python, self.services = python, services
        self.core_options = harness.core_options(python)

    def env(self, c):
        env = dict(c.env)
        if "redis" in c.needs:
            env["PYHANG_REDIS_PORT"] = str(self.services["redis"].port)
        if "postgres" in c.needs:
            env["PYHANG_PG_DSN"] = self.services["postgres"].dsn()
        return env

    def start(self, c):
        if c.start:
            return c.start(self.python, self.env(c))
        argv = [self.python, "-u", os.path.join(harness.SCENARIOS, c.script)] + c.args
        return [started(harness.Scenario(argv, env=self.env(c)))]

    def report(self, mode, s):
        if mode == "live":
            return cli("report", "--json", "-p", s.pid, look=True)
        if mode == "tree":
            return cli("report", "--json", "--tree", "-p", s.pid, look=True)
        if mode == "gdb-core":
            try:
                core = harness.gcore(s.pid, s.tmp)
            except (harness.ScenarioError, subprocess.TimeoutExpired) as e:
                return {"status": "gcore failed", "error": str(e)[-800:]}
        else:
            core = os.path.join(s.tmp, "pyhang.core")
            status, out, err = harness.pyhang_cli("gcore", "-p", s.pid, "-o", core, timeout=300)
            if status != 0 and "--stop" in err:   # refused to stop a thread in a system call a stop would end
                status, out, err = harness.pyhang_cli("gcore", "--stop", "-p", s.pid, "-o", core, timeout=300)
            if status != 0 or not os.path.exists(core):
                return {"status": "gcore %s" % status, "error": (err + out).strip()[-800:]}
        try:
            return cli("report", "--json", *self.core_options, core, self.python)
        finally:
            os.unlink(core)

    def run(self, c):
        result = {"key": c.key, "runs": {}}
        t0 = time.monotonic()
        started = []
        try:
            for mode in MODES:
                if not started:
                    started = self.start(c)
                    result["truth"] = started[-1].truth
                result["runs"][mode] = self.report(mode, started[-1])
                if c.fresh:
                    stop_all(started)
                    started = []
        except Exception:
            result["error"] = traceback.format_exc()[-1500:]
        finally:
            stop_all(started)
        result["seconds"] = round(time.monotonic() - t0, 1)
        return result


def stop_all(scenarios):
    for s in reversed(scenarios):
        s.stop()


@contextlib.contextmanager
def services_for(cases):
    wanted = sorted({n for c in cases for n in c.needs if n in SERVICES})
    with contextlib.ExitStack() as stack:
        running = {}
        for name in wanted:
            running[name] = stack.enter_context(servers.redis() if name == "redis" else servers.postgres())
        yield running


# ------------------------------------------------------------------- table ----

def cell(judge, run):
    if run is None:
        return "-", False
    status = run.get("status")
    bad = mismatch(judge, status) or bool(run.get("error")) or "json_status" in run
    text = str(status)
    return ("**%s** !" % text) if bad else text, bad


def rows(cases, results, skipped):
    table, bad_any = [], False
    for c in cases:
        scenario, _, mode = c.key.partition(":")
        if c.key in skipped:
            table.append([scenario, mode or "-", "not run: " + skipped[c.key], "", "", "", c.judge, c.reason, ""])
            continue
        r = results[c.key]
        truth = r.get("truth")
        cells, marks = [], []
        for m in MODES:
            judge = judgement_of(judge_of(c, m), truth)
            text, bad = cell(judge, r["runs"].get(m))
            cells.append(text)
            if bad:
                marks.append(m)
        if r.get("error"):
            marks.append("error: " + r["error"].strip().splitlines()[-1][:120])
        judged = c.judge if not c.tree else "%s (tree: %s)" % (c.judge, c.tree)
        judged += "".join(" (%s: %s, %s)" % (m, j, why) for m, (j, why) in sorted(c.modes.items()))
        if TRUTH in (c.judge, c.tree):
            judged += " = %s" % judgement_of(TRUTH, truth)
        bad_any = bad_any or bool(marks)
        table.append([scenario, mode or "-", *cells, judged, c.reason,
                      ("MISMATCH " + ", ".join(marks)) if marks else ""])
    return table, bad_any


def markdown(table):
    head = ["scenario", "mode", *MODES, "judgement", "reason (its docstring)", "marks"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(x).replace("|", "/") for x in row) + " |" for row in table]
    return "\n".join(lines)


def selected(only):
    if not only:
        return list(CASES)
    out = [c for c in CASES if c.key in only or c.key.partition(":")[0] in only]
    unknown = [k for k in only if k not in BYKEY and not any(c.key.partition(":")[0] == k for c in CASES)]
    if unknown:
        sys.exit("exit_audit: no such case: %s (--list names them)" % " ".join(unknown))
    return out


def run_all(cases, python, jobs):
    """(results, skipped, version) of running `cases` on `python`, `jobs` at once."""
    version = python_version(python)
    skipped = {c.key: why for c in cases for why in [why_not(c, python, version)] if why}
    todo = [c for c in cases if c.key not in skipped]
    results = {}
    with services_for(todo) as running:
        audit = Audit(python, running)
        with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
            for r in pool.map(audit.run, todo):
                results[r["key"]] = r
                print("exit_audit: %s %s s" % (r["key"], r["seconds"]), file=sys.stderr, flush=True)
    return results, skipped, version


def main(argv=None):
    ap = argparse.ArgumentParser(prog="exit_audit.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", default=DEBIAN_PY)
    ap.add_argument("--only", nargs="+", metavar="KEY")
    ap.add_argument("-j", type=int, default=1, dest="jobs")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--table-from", metavar="FILE", help="judge again the reports a --json FILE kept (no run)")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args(argv)
    cases = selected(a.only)
    if a.list:
        print("\n".join("%s  %s: %s" % (c.key, c.judge, c.reason) for c in cases))
        return 0
    if a.table_from:
        with open(a.table_from) as f:
            kept = json.load(f)
        python, results, skipped = kept["python"], kept["results"], kept["skipped"]
        version = tuple(kept.get("version") or python_version(python))
        cases = [c for c in cases if c.key in results or c.key in skipped]
    else:
        python = a.python
        results, skipped, version = run_all(cases, python, a.jobs)
    table, bad = rows(cases, results, skipped)
    print("Python: %s (%d.%d)\n" % (python, *version))
    print(markdown(table))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"python": python, "version": version, "results": results, "skipped": skipped}, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
