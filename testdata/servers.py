"""Real servers for the services' tests: a PostgreSQL and a redis-server
of Debian's packages, each on a port of its own on 127.0.0.1 with its own
data directory in a temporary one, started for a test module and stopped
by its pid (never by name: other sessions may run servers of their own).

PostgreSQL's initdb refuses to run as root: as root the cluster is made and
run as the `postgres` user the package creates (Popen's user=, so that the
server is our own child, reaped when stopped), with trust
authentication on loopback; else as the user running the tests."""
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

PG_BIN = "/usr/lib/postgresql/15/bin"
REDIS = "/usr/bin/redis-server"


class ServerError(Exception):
    pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_postgres():
    """Popen's keywords that run a command as the postgres user when the tests run as root."""
    return {"user": "postgres", "group": "postgres", "extra_groups": []} if os.geteuid() == 0 else {}


def _wait_port(port, proc, timeout, log):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerError("the server exited (%s): %s" % (proc.returncode, _tail(log)))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise ServerError("the server did not listen on port %d: %s" % (port, _tail(log)))


def _tail(path):
    try:
        with open(path) as f:
            return f.read()[-1500:]
    except OSError:
        return ""


def _stop(proc, sig=signal.SIGTERM):
    """Stops the server by its pid: `sig`, then SIGKILL after 10 s."""
    if proc.poll() is None:
        os.kill(proc.pid, sig)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


class Postgres:
    """A running PostgreSQL: `port`, `pid` (the postmaster), `dsn(dbname)`."""

    def __init__(self, port, proc, root):
        self.port, self.proc, self.root = port, proc, root
        self.pid = proc.pid

    def dsn(self, dbname="postgres"):
        return "host=127.0.0.1 port=%d user=postgres dbname=%s" % (self.port, dbname)

    def psql(self, sql):
        r = subprocess.run([os.path.join(PG_BIN, "psql"), "-X", "-q", "-h", "127.0.0.1", "-p",
                            str(self.port), "-U", "postgres", "-v", "ON_ERROR_STOP=1", "-c", sql], **_as_postgres(),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
        if r.returncode:
            raise ServerError("psql: %s" % r.stdout)
        return r.stdout


@contextlib.contextmanager
def postgres(timeout=60):
    """A PostgreSQL 15 cluster of its own, running until the block ends."""
    if not os.path.exists(os.path.join(PG_BIN, "initdb")):
        raise ServerError("PostgreSQL 15 is not installed (apt-get install postgresql)")
    root = tempfile.mkdtemp(prefix="pyhang-pg-")
    os.chmod(root, 0o755)
    data, run, log = os.path.join(root, "data"), os.path.join(root, "run"), os.path.join(root, "log.txt")
    for d in (data, run):
        os.mkdir(d, 0o700)
        if os.geteuid() == 0:
            shutil.chown(d, "postgres", "postgres")
    open(log, "w").close()
    if os.geteuid() == 0:
        shutil.chown(log, "postgres", "postgres")
    proc = None
    try:
        r = subprocess.run([os.path.join(PG_BIN, "initdb"), "-D", data, "-U", "postgres", "-A", "trust",
                            "--no-sync", "-E", "UTF8"], **_as_postgres(), cwd=root,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
        if r.returncode:
            raise ServerError("initdb: %s" % r.stdout[-1500:])
        port = free_port()
        with open(log, "a") as out:
            proc = subprocess.Popen([os.path.join(PG_BIN, "postgres"), "-D", data, "-p", str(port),
                                     "-h", "127.0.0.1", "-k", run, "-c", "fsync=off", "-c", "update_process_title=on"],
                                    **_as_postgres(), cwd=root, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        _wait_port(port, proc, timeout, log)
        yield Postgres(port, proc, root)
    finally:
        if proc is not None:
            _stop(proc, signal.SIGINT)   # the postmaster's fast shutdown: it ends its backends too
        shutil.rmtree(root, ignore_errors=True)


class Redis:
    def __init__(self, port, proc):
        self.port, self.proc, self.pid = port, proc, proc.pid


@contextlib.contextmanager
def redis(timeout=30):
    """A redis-server of its own (no persistence, its own directory), running until the block ends."""
    if not os.path.exists(REDIS):
        raise ServerError("redis-server is not installed (apt-get install redis-server)")
    root = tempfile.mkdtemp(prefix="pyhang-redis-")
    log = os.path.join(root, "log.txt")
    port = free_port()
    proc = None
    try:
        with open(log, "w") as out:
            proc = subprocess.Popen([REDIS, "--port", str(port), "--bind", "127.0.0.1", "--dir", root, "--save", "",
                                     "--appendonly", "no", "--daemonize", "no"],
                                    stdout=out, stderr=subprocess.STDOUT, start_new_session=True, cwd=root)
        _wait_port(port, proc, timeout, log)
        yield Redis(port, proc)
    finally:
        if proc is not None:
            _stop(proc)
        shutil.rmtree(root, ignore_errors=True)
