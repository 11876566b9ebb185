"""Start hang scenarios and look at them through gdb, for the integration
tests, the demo and the benchmarks.

A scenario program writes what it knows about itself (its TIDs, lock
addresses, the Python stack it parked in) as JSON to the file named by
$PYHANG_TRUTH, then prints READY.  Scenario waits for that, checks that every
reported thread is really asleep in the kernel, can make a core with gcore,
and always kills what it started.
"""
import ast
import glob
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GDBEXT = os.path.join(ROOT, "gdbext", "pyhang.gdb")
SCENARIOS = os.path.join(ROOT, "testdata", "scenarios")
REPORT_SCHEMA = os.path.join(ROOT, "docs", "pyhang-report-1.schema.json")

import containers  # noqa: E402  (testdata/, next to this file)


def build_dir():
    return os.environ.get("PYHANG_BUILD_DIR") or os.path.join(ROOT, "build")


def fixture_path(name):
    """A fixture built by CMake (testdata/fixtures) in the build directory."""
    return os.path.join(build_dir(), "testdata", name)


class ScenarioError(Exception):
    pass


def thread_state(pid, tid):
    try:
        with open("/proc/%d/task/%d/stat" % (pid, tid)) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


# The system calls a scenario thread may say it parks in (x86_64 numbers):
# `parked_in` is one name, or a list of the names any of which will do
# (time.sleep is select(2) / pselect6(2) before 3.11, clock_nanosleep(2) after; select.poll's poll() is
# poll(2) up to 3.14, ppoll(2) from 3.15).
SYSCALLS = {"vfork": 58, "poll": 7, "ppoll": 271, "recvfrom": 45, "futex": 202, "select": 23, "nanosleep": 35, "clock_nanosleep": 230, "pselect6": 270}


def parked_in(pid, thread):
    """Whether a thread that says where it parks (`parked_in`) is in that call."""
    want = thread.get("parked_in")
    if not want:
        return True
    names = [want] if isinstance(want, str) else want
    return thread_syscall(pid, thread["tid"]) in {SYSCALLS[n] for n in names}


def thread_syscall(pid, tid):
    """The number of the system call a thread is in, or None."""
    try:
        with open("/proc/%d/task/%d/syscall" % (pid, tid)) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


class Scenario:
    """A hang program, started and parked.  Use as a context manager."""

    def __init__(self, argv, env=None, ready_timeout=60, settle=0.2):
        self.argv = [str(a) for a in argv]
        self.env = dict(os.environ, **(env or {}))
        self.ready_timeout = ready_timeout
        self.settle = settle
        self.proc = None
        self.truth = None
        self.tmp = tempfile.mkdtemp(prefix="pyhang-scenario-")
        self.cores = []

    @property
    def pid(self):
        return self.proc.pid

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        truth_path = os.path.join(self.tmp, "truth.json")
        self.env["PYHANG_TRUTH"] = truth_path
        self.env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
        self.log = open(os.path.join(self.tmp, "output.txt"), "w+")
        def allow_core():
            resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        self.proc = subprocess.Popen(self.argv, env=self.env, stdout=subprocess.PIPE, stderr=self.log,
                                     start_new_session=True, text=True, cwd=self.tmp, preexec_fn=allow_core)
        deadline = time.monotonic() + self.ready_timeout
        line = ""
        self.lines = []  # what the program printed before READY
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            if line.strip() == "READY":
                break
            self.lines.append(line)
        if line.strip() != "READY":
            self.stop()
            self.log.seek(0)
            raise ScenarioError("%s did not get ready: %s" % (" ".join(self.argv), self.log.read()[-2000:]))
        try:
            self._read_truth(truth_path, deadline)
        except BaseException:
            self.stop()  # never leave a scenario running behind a failed start
            raise
        return self

    def _read_truth(self, truth_path, deadline):
        if os.path.exists(truth_path):
            with open(truth_path) as f:
                self.truth = json.load(f)
        else:  # C fixtures print one JSON record per line instead
            self.truth = {"records": [json.loads(l) for l in self.lines if l.startswith("{")], "threads": []}
        self.wait_parked(deadline)

    def wait_parked(self, deadline):
        """Every thread the program reported must be asleep (state S), and a
        thread that says where it parks (`parked_in`: a system call) asleep in
        that call: a sleep on the way to it is no hang yet.  The threads are those of the process that
        recorded the truth (its "pid"), which may be a child of the program started."""
        threads = [t for t in self.truth.get("threads", []) if t.get("parked", True)]
        pid = self.truth.get("pid") or self.pid   # the process that recorded them (a child of the program's own)
        while time.monotonic() < deadline:
            if all(thread_state(pid, t["tid"]) in ("S", "D") and parked_in(pid, t) for t in threads):
                time.sleep(self.settle)
                return
            time.sleep(0.05)
        raise ScenarioError("threads did not park: %s" % [t["tid"] for t in threads])

    def gcore(self):
        """A core of the parked program, made by gdb's gcore (see gcore())."""
        path = gcore(self.pid, self.tmp)
        self.cores.append(path)
        return path

    def kernel_core(self):
        """A core written by the kernel (notes first, then memory), made by
        killing the program with SIGABRT; None when the machine pipes cores
        to a handler instead of writing them to the working directory."""
        with open("/proc/sys/kernel/core_pattern") as f:
            pattern = f.read().strip()
        if pattern.startswith("|") or "/" in pattern:
            return None
        os.kill(self.pid, signal.SIGABRT)
        self.proc.wait(timeout=60)
        for name in sorted(os.listdir(self.tmp)):
            if name.startswith(pattern.split("%")[0]) and name != "output.txt":
                path = os.path.join(self.tmp, name)
                self.cores.append(path)
                return path
        return None

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=30)
        if self.proc is not None and self.proc.stdout:
            self.proc.stdout.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


def python_scenario(interpreter, script, *args, **kw):
    return Scenario([interpreter, "-u", os.path.join(SCENARIOS, script)] + list(args), **kw)


# ---------------------------------------------------------------- gdb ----

BEGIN, END = "@@PYHANG-BEGIN@@", "@@PYHANG-END@@"


def gdb_command(commands, pid=None, core=None, executable=None, load=True):
    """argv of a batch gdb that loads no debug info and runs `commands`."""
    argv = ["gdb", "-nx", "-batch", "-iex", "set debug-file-directory /nonexistent",
            "-iex", "set auto-load no", "-iex", "set pagination off"]
    inside = containers.inside(executable) if executable else None
    if inside:
        # A container's interpreter: its core names files of the container's
        # root, which a user gives gdb as the sysroot.
        root, executable = inside[0], inside[0] + inside[1]
        argv += ["-iex", "set sysroot " + root]
    if executable:
        argv.append(executable)
    if pid is not None:
        argv += ["-p", str(pid)]
    if core is not None:
        argv += ["-c", core]
    if load:
        argv += ["-ex", "source " + GDBEXT]
    for c in commands:
        argv += ["-ex", c]
    return argv


def run_gdb(commands, timeout=300, env=None, **target):
    r = subprocess.run(gdb_command(commands, **target), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=timeout, env=dict(os.environ, **(env or {})))
    return r.stdout


def run_gdb_marked(command, **kw):
    """Output of one pyhang command, without gdb's own chatter."""
    out = run_gdb(["echo %s\\n" % BEGIN, command, "echo %s\\n" % END], **kw)
    m = re.search(re.escape(BEGIN) + r"\n(.*?)" + re.escape(END), out, re.S)
    if not m:
        raise AssertionError("no pyhang output in gdb's output:\n" + out[-4000:])
    return m.group(1), out


def report_json(env=None, **target):
    """The pyhang-report/1 document of a target, checked against its schema."""
    text, out = run_gdb_marked("pyhang report --json", env=env, **target)
    try:
        start = text.index("{")
        doc = json.loads(text[start:])
    except ValueError:
        raise AssertionError("pyhang report --json printed no JSON:\n" + out[-4000:])
    return validated_report(doc)


def live_and_core_reports(s, executable):
    """("live", report) of the scenario's running process through gdb, then ("core", report) of a
    gcore core of it, opened with `executable`."""
    yield "live", report_json(pid=s.pid)
    yield "core", report_json(executable=executable, core=s.gcore())


def cli_live_and_core_reports(s, executable, text=False, look=False, recorded=False):
    """(where, JSON report[, text report]) of `pyhang report` on the scenario's process, then on a
    gcore core of it ("core"), and with `recorded` on the core `pyhang gcore` writes of it, with its
    record of /proc ("pyhang-gcore"); each JSON validated, its exit_status the command's (`look`:
    pyhang_cli's)."""
    targets = [("live", ["-p", s.pid]), ("core", [*core_options(executable), s.gcore(), executable])]
    if recorded:
        path = os.path.join(s.tmp, "recorded.%d" % s.pid)
        status, out, err = pyhang_cli("gcore", "-p", s.pid, "-o", path)
        assert status == 0, (out, err)
        targets.append(("pyhang-gcore", [*core_options(executable), path, executable]))
    for where, target in targets:
        status, out, err = pyhang_cli("report", "--json", *target, look=look)
        doc = validated_report(json.loads(out))
        assert doc["exit_status"] == status, (where, err)
        if text:
            yield where, doc, pyhang_cli("report", *target, look=look)[1]
        else:
            yield where, doc


_report_validator = None


def report_errors(doc):
    """Every way `doc` breaks docs/pyhang-report-1.schema.json, one line each."""
    global _report_validator
    if _report_validator is None:
        try:
            import jsonschema
        except ImportError:
            raise AssertionError("reports are checked against %s with jsonschema: apt-get install "
                                 "python3-jsonschema (testdata/setup.sh --tests does)" % REPORT_SCHEMA)
        with open(REPORT_SCHEMA) as f:
            schema = json.load(f)
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        _report_validator = cls(schema)
    return ["%s: %s" % ("/".join(str(p) for p in e.absolute_path) or "(document)", e.message[:300])
            for e in sorted(_report_validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))]


def validated_report(doc):
    """`doc`, or an AssertionError naming what breaks the JSON contract."""
    return _validated(doc, report_errors(doc), "the report", REPORT_SCHEMA)


def _validated(doc, errors, what, schema):
    if errors:
        raise AssertionError("%s breaks the %s schema (%s):\n  %s" % (
            what, os.path.basename(schema).replace("-1.schema.json", "/1"), os.path.relpath(schema, ROOT),
            "\n  ".join(errors[:20])))
    return doc


# In one gdb session (a live target must not move between the two walks):
# every thread's frame-0 registers and top pcs as pyhang collects them
# (natively where it can), then as gdb's own frames give them.
_STACKS_BOTH_WAYS = (
    "python from pyhang_gdb import collect, decoders; "
    "ours = collect.snapshot_threads(16, native=decoders.native_stacks()); "
    "gdbs = collect.snapshot_threads(16, native=None); "
    "print('STACKS', repr([[(x.tid, x.unwound_by, x.registers, x.pcs) for x in w] for w in (ours, gdbs)]))")


def stacks_both_ways(**target):
    """([(tid, unwound_by, registers, pcs)] as pyhang collects them, the same from gdb alone)."""
    out = run_gdb([_STACKS_BOTH_WAYS], **target)
    line = next((l for l in out.splitlines() if l.startswith("STACKS ")), None)
    if line is None:
        raise AssertionError("no stacks in gdb's output:\n" + out[-3000:])
    return ast.literal_eval(line[len("STACKS "):])


def core_options(executable):
    """The command line's options for cores of `executable`'s processes:
    --sysroot ROOT for a container's interpreter (containers.py), else none."""
    inside = containers.inside(executable)
    return ["--sysroot", inside[0]] if inside else []


def core_file(executable, path):
    """Where pyhang reads a file of a core of `executable`'s process: under
    the sysroot a container's interpreter's core is opened with when it is
    there (the standard library), then at the path itself (the program's
    files, bound in from this machine) (pyhang.sources)."""
    inside = containers.inside(executable)
    if inside and os.path.isfile(inside[0] + path):
        return inside[0] + path
    return path


def expected_lock_kind(record):
    """The wait kind pyhang should report for a lock record of the C lock
    fixture (testdata/fixtures/prog_locks.c)."""
    if record["lock"].startswith("mutex"):
        return "mutex"
    if record["lock"].startswith("rwlock"):
        return "rwlock-" + record["waiter_mode"]
    return record["lock"]


def interpreters(today=True):
    """(name, path) of every Python on this machine pyhang is tested against:
    Debian's 3.11, pyenv's 3.6 - 3.13 and, with `today`, the interpreters of
    today's distributions run in their root file systems (containers.py:
    the path is a launcher that keeps the pid)."""
    found = []
    if os.path.exists("/usr/bin/python3.11"):
        found.append(("debian-3.11", "/usr/bin/python3.11"))
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    for minor in range(6, 14):
        for path in sorted(glob.glob(os.path.join(root, "versions", "3.%d.*" % minor, "bin", "python3"))):
            found.append(("pyenv-" + path.split("/")[-3], path))
            break
    if today:
        found.extend((name, path) for name, path, _ in containers.interpreters())
    return found


def torch_interpreters():
    """(name, path) of the interpreters with PyTorch: Debian's 3.11 with its
    python3-torch (1.13), and Debian unstable's 3.14 with its own (2.x) in the
    root file system made for it (containers.LIBRARY_ROOTS)."""
    found = []
    if os.path.isdir("/usr/lib/python3/dist-packages/torch") and os.path.exists("/usr/bin/python3.11"):
        found.append(("debian-3.11", "/usr/bin/python3.11"))
    found.extend((name, path) for name, path, _ in containers.interpreters(containers.LIBRARY_ROOTS)
                 if name.endswith("-torch"))
    return found


def services_interpreters():
    """(name, path) of the interpreters with the services' clients (psycopg2, SQLAlchemy, redis-py, grpcio,
    urllib3): Debian's 3.11 with Debian 12's packages, and Debian unstable's 3.14 with its own in the root
    file system made for them (containers.LIBRARY_ROOTS).  The servers they talk to are the host's."""
    found = [("debian-3.11", "/usr/bin/python3.11")] if os.path.exists("/usr/bin/python3.11") else []
    found.extend((name, path) for name, path, _ in containers.interpreters(containers.LIBRARY_ROOTS)
                 if name.endswith("-services"))
    return found


# ------------------------------------------------ stripped interpreters ----

def interpreter_params():
    """interpreters() as pytest parameters (id: the interpreter's name)."""
    import pytest
    return [pytest.param(path, id=name) for name, path in interpreters()]


# Debian's own interpreter and today's newest in its root: the pair the tests of one class of hang run on.
DEBIAN_AND_SID = ("debian-3.11", "debian-sid-3.14")


def is_sid_314(python):
    """Whether `python` is Debian unstable's 3.14 in its root (today's interpreter, on which a test of many
    interpreters also reads the core `pyhang gcore` writes: cli_live_and_core_reports(recorded=...))."""
    return python == dict(interpreters()).get("debian-sid-3.14")


def interpreter_params_of(names=DEBIAN_AND_SID):
    """The interpreters of interpreters() named `names`, in that order, as pytest parameters (id: the name)."""
    import pytest
    found = dict(interpreters())
    return [pytest.param(found[n], id=n) for n in names if n in found]


def role_tid(s, role):
    """The TID of the thread a scenario recorded with `role`."""
    return next(t["tid"] for t in s.truth["threads"] if t["role"] == role)


def stripped_interpreter(python, cache_root=None):
    """(argv0, env) of a copy of a pyenv interpreter with no symbols beyond
    .dynsym and no debug info: `strip --strip-all` of python3 and of its
    libpython, the copy's RUNPATH pointing at the stripped libpython (a copy
    would otherwise load the original through its RUNPATH), and PYTHONHOME
    at the original prefix for the standard library.  Debian's python3.11 is
    stripped already and is returned as it is."""
    if not python.startswith(os.path.expanduser("~/.pyenv")) and "/.pyenv/" not in python:
        return python, {}
    prefix = os.path.dirname(os.path.dirname(os.path.realpath(python)))
    root = cache_root or os.path.join(tempfile.gettempdir(), "pyhang-stripped-%d" % os.getuid())
    dest = os.path.join(root, os.path.basename(prefix))
    exe = os.path.join(dest, "bin", "python3")
    env = {"PYTHONHOME": prefix}
    if os.path.exists(os.path.join(dest, ".done")):
        return exe, env
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(os.path.join(dest, "bin"))
    os.makedirs(os.path.join(dest, "lib"))
    shutil.copy(os.path.realpath(python), exe)
    libs = glob.glob(os.path.join(prefix, "lib", "libpython3*.so*"))
    for lib in libs:
        if os.path.islink(lib):
            os.symlink(os.readlink(lib), os.path.join(dest, "lib", os.path.basename(lib)))
        else:
            shutil.copy(lib, os.path.join(dest, "lib", os.path.basename(lib)))
    for f in [exe] + [os.path.join(dest, "lib", os.path.basename(l)) for l in libs if not os.path.islink(l)]:
        subprocess.run(["strip", "--strip-all", f], check=True)
    if libs:
        subprocess.run(["patchelf", "--set-rpath", os.path.join(dest, "lib"), exe], check=True)
        ldd = subprocess.run(["ldd", exe], stdout=subprocess.PIPE, text=True).stdout
        if os.path.join(dest, "lib") not in ldd:
            raise ScenarioError("the stripped copy does not load its stripped libpython:\n" + ldd)
    open(os.path.join(dest, ".done"), "w").close()
    return exe, env


# ------------------------------------------------------------ trees ----

TREE_SCHEMA = os.path.join(ROOT, "docs", "pyhang-tree-1.schema.json")
_tree_validator = None


def tree_errors(doc):
    """Every way `doc` breaks docs/pyhang-tree-1.schema.json (whose processes
    are pyhang-report/1 documents), one line each."""
    global _tree_validator
    if _tree_validator is None:
        import jsonschema
        schemas = []
        for path in (REPORT_SCHEMA, TREE_SCHEMA):
            with open(path) as f:
                schemas.append(json.load(f))
        cls = jsonschema.validators.validator_for(schemas[1])
        cls.check_schema(schemas[1])
        # The processes are pyhang-report/1 documents: checked each with its own
        # schema (jsonschema before 4.18, Debian 12's, cannot follow the $ref
        # into another schema's $defs), the tree with the rest.
        # A tree's verdicts are the report's (its verdict definition): checked with the report's $defs.
        tree = json.loads(json.dumps(schemas[1]).replace('{"$ref": "urn:pyhang:schema:pyhang-report-1"}',
                                                             '{"required": ["schema"]}')
                          .replace('{"$ref": "urn:pyhang:schema:pyhang-report-1#/$defs/verdict"}', '{"required": ["kind"]}'))
        _tree_validator = (cls(tree), cls({"$schema": schemas[0].get("$schema"), "$defs": schemas[0]["$defs"],
                                           "$ref": "#/$defs/verdict"}))
    reports = [e for i, p in enumerate(doc.get("processes") or []) if "schema" in p
               for e in ("processes/%d/%s" % (i, line) for line in report_errors(p))]
    verdicts = ["verdicts/%d/%s: %s" % (i, "/".join(str(p) for p in e.absolute_path), e.message[:300])
                for i, v in enumerate(doc.get("verdicts") or []) if isinstance(v, dict)
                for e in _tree_validator[1].iter_errors(v)]
    return reports + verdicts + ["%s: %s" % ("/".join(str(p) for p in e.absolute_path) or "(document)", e.message[:300])
                                 for e in sorted(_tree_validator[0].iter_errors(doc),
                                                 key=lambda e: list(map(str, e.absolute_path)))]


def validated_tree(doc):
    """`doc`, or an AssertionError naming what breaks the tree's contract."""
    return _validated(doc, tree_errors(doc), "the tree", TREE_SCHEMA)


def kept(data, again):
    """Whether `again` holds every key of `data` with the same value, in lists of the same length (a
    record's data may add the fields `data` lacks, at their defaults)."""
    if isinstance(data, dict):
        return isinstance(again, dict) and all(k in again and kept(v, again[k]) for k, v in data.items())
    if isinstance(data, list):
        return isinstance(again, list) and len(data) == len(again) and all(map(kept, data, again))
    return data == again


# What a `report` of a live process is told about its second look: nothing (it takes one: the user's default).
_LOOK_OPTIONS = ("--once", "--interval")


def pyhang_cli(*args, env=None, timeout=600, look=False):
    """(exit status, stdout, stderr) of python/bin/pyhang.  A `report -p` (or `--tree -p`) takes one look
    (`--once` is added) unless `look` is true or the arguments say how to look: the second look costs half a
    second a report, and only the tests of the second look need one (test_progress_look and the tests that
    pass look=True)."""
    args = [str(a) for a in args]
    if not look and args[:1] == ["report"] and "-p" in args and not any(a in _LOOK_OPTIONS for a in args):
        args.insert(1, "--once")
    r = subprocess.run([os.path.join(ROOT, "python", "bin", "pyhang")] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout,
                       env=dict(os.environ, PYHANG_BUILD_DIR=build_dir(), **(env or {})))
    return r.returncode, r.stdout, r.stderr


def report_doc(*target, look=False):
    """(exit status, the validated pyhang-report/1 document) of `pyhang report --json TARGET`, whose exit
    status must be the document's own (`look`: pyhang_cli's)."""
    status, out, err = pyhang_cli("report", "--json", *target, look=look)
    assert "Traceback" not in err, err
    doc = validated_report(json.loads(out))
    assert doc["exit_status"] == status, err
    return status, doc


def tree_doc(pid):
    """(exit status, the validated pyhang-tree/1 document) of `pyhang report --tree --json -p PID`, whose exit
    status must be the document's own."""
    status, out, err = pyhang_cli("report", "--tree", "--json", "-p", pid)
    assert "Traceback" not in err, err
    doc = validated_tree(json.loads(out))
    assert doc["exit_status"] == status, err
    return status, doc


def tree_pids(doc):
    """The PIDs of a pyhang-tree/1 document's processes, in its order."""
    return [p["target"]["pid"] if "target" in p else p["pid"] for p in doc["processes"]]


def print_tree_report(pid, what):
    """Prints `pyhang report --tree -p PID` as a user runs it (the examples)."""
    print("$ python/bin/pyhang report --tree -p %d   # %s" % (pid, what))
    status, out, err = pyhang_cli("report", "--tree", "-p", pid)
    print(out + err, end="")
    print("(exit status %d)" % status)


def gcore(pid, directory, complete=True):
    """A core of process `pid` (a scenario's child) in `directory`, as gdb's gcore writes it with
    every thread's stack: pyhang's own `pyhang gcore --no-record` (gdbext/pyhang_gdb/gcore.py reads
    again, page by page and with the process still stopped, each segment gcore left as zeros because
    its first page is a glibc 2.42+ guard page), without the record of /proc that `pyhang gcore` adds
    by default: the core gdb's gcore would make if it could read those stacks.  With complete=False
    the core is left as gdb's gcore writes it."""
    path = os.path.join(directory, "core.%d" % pid)
    argv = ["gdb", "-nx", "-batch", "-iex", "set debug-file-directory /nonexistent", "-iex", "set auto-load no",
            "-p", str(pid)]
    argv += ["-ex", "source " + GDBEXT, "-ex", "pyhang gcore --no-record " + path] if complete else \
        ["-ex", "gcore " + path]
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    if r.returncode != 0 or not os.path.exists(path) or (complete and "pyhang: core of process" not in r.stdout):
        raise ScenarioError("gcore failed: %s" % r.stdout[-2000:])
    return path


def _main_thread_syscall(pid):
    try:
        with open("/proc/%d/syscall" % pid) as f:
            return f.read().split()[0]
    except (OSError, IndexError):
        return None


def wait_processes_parked(pids, calls=None, timeout=60):
    """Every thread of the processes `pids` asleep (state S or D), as
    Scenario.wait_parked does for the scenario's own threads; and the main
    thread of each pid of `calls` ({pid: system call number}) in that call."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(_main_thread_syscall(pid) != str(nr) for pid, nr in (calls or {}).items()):
            time.sleep(0.05)
            continue
        states = []
        for pid in pids:
            try:
                tids = [int(t) for t in os.listdir("/proc/%d/task" % pid)]
            except OSError:
                tids = []
            states.extend(thread_state(pid, t) for t in tids)
        if states and all(s in ("S", "D") for s in states):
            return
        time.sleep(0.05)
    raise ScenarioError("processes did not park: %s" % pids)


def child_left_unreaped(argv, ready=False):
    """(pid, its parent's pid: this process, end) of a process started here and not reaped until `end()`:
    killed, it stays a zombie.  `ready`: wait for its first line (READY) first."""
    p = subprocess.Popen([str(a) for a in argv], stdout=subprocess.PIPE if ready else None, text=True)
    if ready:
        p.stdout.readline()
    return p.pid, os.getpid(), lambda: (p.kill(), p.wait())


def child_reaped_at_exit(argv, ready=False):
    """(pid, its parent's pid, end) of a process whose parent (started here) reaps it as soon as it exits.
    `ready`: the parent waits for its first line (READY) before it says the pid."""
    parent = subprocess.Popen([sys.executable, "-c", "import subprocess, sys\nready = %r\n"
                               "p = subprocess.Popen(%r, stdout=subprocess.PIPE if ready else None, text=True)\n"
                               "if ready:\n    p.stdout.readline()\nprint(p.pid, flush=True)\np.wait()"
                               % (ready, [str(a) for a in argv])], stdout=subprocess.PIPE, text=True)
    pid = int(parent.stdout.readline())

    def end():
        if os.path.exists("/proc/%d" % pid):
            os.kill(pid, signal.SIGKILL)
        parent.wait()
    return pid, parent.pid, end
