"""A real Slurm cluster on this machine, for the tests of `pyhang job`:
munged, slurmctld and two slurmd (`slurmd -N node1`, `slurmd -N node2`),
both nodes this host (NodeAddr 127.0.0.1, a port each), every state, spool
and log directory under a directory of its own, stopped by their pids at
the end.  Debian 12's slurm-wlm (22.05) and munge (testdata/setup.sh
--tests installs them).

usage (by hand): python3 testdata/slurm_cluster.py DIR   starts one and
prints the SLURM_CONF to export; Ctrl-C stops it."""
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

NODES = ("node1", "node2")
CPUS = 6          # per node, over what the host has (SlurmdParameters=config_overrides)


def available():
    """Why a cluster cannot be started here, or None."""
    for tool in ("munged", "slurmctld", "slurmd", "srun", "scontrol"):
        if shutil.which(tool) is None:
            return "%s is not installed (apt-get install slurm-wlm munge)" % tool
    if os.geteuid() != 0:
        return "the test cluster runs as root (SlurmUser=root)"
    return None


def _free_ports(n):
    """n TCP ports free now, consecutive (slurm.conf's Port=[A-B])."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + n >= 65535:
            continue
        ok = True
        for p in range(base, base + n):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", p))
                except OSError:
                    ok = False
                    break
        if ok:
            return list(range(base, base + n))
    raise RuntimeError("no %d consecutive free ports" % n)


def config(top, ctld_port, node_ports):
    host = socket.gethostname()
    return "\n".join([
        "ClusterName=pyhangtest",
        "SlurmctldHost=%s(127.0.0.1)" % host,
        "SlurmctldPort=%d" % ctld_port,
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        "AuthInfo=socket=%s/munge/munge.socket" % top,
        "StateSaveLocation=%s/state" % top,
        "SlurmdSpoolDir=%s/spool/%%n" % top,
        "SlurmctldPidFile=%s/run/slurmctld.pid" % top,
        "SlurmdPidFile=%s/run/slurmd-%%n.pid" % top,
        "SlurmctldLogFile=%s/log/slurmctld.log" % top,
        "SlurmdLogFile=%s/log/slurmd-%%n.log" % top,
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "SlurmdParameters=config_overrides",
        "MpiDefault=none",
        "ReturnToService=2",
        "SchedulerType=sched/builtin",
        "AccountingStorageType=accounting_storage/none",
        "JobAcctGatherType=jobacct_gather/none",
        "JobCompType=jobcomp/none",
        "MailProg=/bin/true",
        "KillWait=2",
        "InactiveLimit=0",
        "SlurmctldTimeout=30",
        "SlurmdTimeout=30",
        "NodeName=node[1-%d] NodeHostname=%s NodeAddr=127.0.0.1 CPUs=%d RealMemory=1000 Port=[%d-%d] State=UNKNOWN"
        % (len(NODES), host, CPUS, node_ports[0], node_ports[-1]),
        "PartitionName=test Nodes=node[1-%d] Default=YES MaxTime=INFINITE State=UP" % len(NODES),
        ""])


class Cluster:
    def __init__(self, top):
        self.top = top
        self.conf = os.path.join(top, "slurm.conf")
        self.pids = {}
        self.env = dict(os.environ, SLURM_CONF=self.conf)

    def _log(self, name):
        try:
            with open(os.path.join(self.top, "log", name), errors="replace") as f:
                return f.read()[-3000:]
        except OSError:
            return ""

    def _pidfile(self, name, timeout=20):
        path = os.path.join(self.top, "run", name)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                with open(path) as f:
                    pid = int(f.read().split()[0])
                if os.path.exists("/proc/%d" % pid):
                    return pid
            except (OSError, ValueError, IndexError):
                pass
            time.sleep(0.1)
        raise RuntimeError("%s did not start: %s" % (name, self._log(name.replace(".pid", ".log"))))

    def start(self):
        for d in ("munge", "state", "run", "log", "spool"):
            os.makedirs(os.path.join(self.top, d), mode=0o700, exist_ok=True)
        os.chmod(self.top, 0o755)
        key = os.path.join(self.top, "munge", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(128))
        os.chmod(key, 0o400)
        ctld, *nodes = _free_ports(1 + len(NODES))
        with open(self.conf, "w") as f:
            f.write(config(self.top, ctld, nodes))
        m = os.path.join(self.top, "munge")
        subprocess.run(["munged", "--force", "--socket=%s/munge.socket" % m, "--key-file=%s" % key,
                        "--pid-file=%s/run/munged.pid" % self.top, "--log-file=%s/log/munged.log" % self.top,
                        "--seed-file=%s/munged.seed" % m], check=True, env=self.env)
        self.pids["munged"] = self._pidfile("munged.pid")
        subprocess.run(["slurmctld", "-i"], check=True, env=self.env)
        self.pids["slurmctld"] = self._pidfile("slurmctld.pid")
        for n in NODES:
            os.makedirs(os.path.join(self.top, "spool", n), exist_ok=True)
            subprocess.run(["slurmd", "-N", n], check=True, env=self.env)
            self.pids["slurmd-" + n] = self._pidfile("slurmd-%s.pid" % n)
        self.wait_idle()
        return self

    def run(self, *argv, timeout=30, check=True):
        return subprocess.run(list(argv), env=self.env, capture_output=True, text=True, timeout=timeout, check=check)

    def wait_idle(self, timeout=40):
        end = time.monotonic() + timeout
        out = ""
        while time.monotonic() < end:
            out = self.run("sinfo", "-h", "-N", "-o", "%N %t", check=False).stdout
            states = dict(line.split() for line in out.splitlines() if len(line.split()) == 2)
            if all(states.get(n) == "idle" for n in NODES):
                return
            time.sleep(0.3)
        raise RuntimeError("the nodes are not idle: %r\nslurmctld: %s\nslurmd: %s" % (
            out, self._log("slurmctld.log"), self._log("slurmd-node1.log")))

    def job_id(self, name, timeout=30):
        """The id of the job named `name` once it runs."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            out = self.run("squeue", "-h", "-n", name, "-o", "%i %T", check=False).stdout.split()
            if len(out) == 2 and out[1] == "RUNNING":
                return int(out[0])
            time.sleep(0.2)
        raise RuntimeError("job %s did not start: %r" % (name, self.run("squeue", check=False).stdout))

    def stop(self):
        """The daemons, by their pids (slurmd first), and every step they left."""
        order = ["slurmd-" + n for n in NODES] + ["slurmctld", "munged"]
        for name in order:
            pid = self.pids.pop(name, None)
            if pid is None:
                continue
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            end = time.monotonic() + 10
            while os.path.exists("/proc/%d" % pid) and time.monotonic() < end:
                time.sleep(0.05)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def cluster(top):
    c = Cluster(top)
    try:
        yield c.start()
    finally:
        c.stop()


if __name__ == "__main__":
    with cluster(os.path.abspath(sys.argv[1])) as c:
        print("export SLURM_CONF=%s" % c.conf, flush=True)
        try:
            signal.pause()
        except KeyboardInterrupt:
            pass
