"""A real OpenSSH server on loopback for `pyhang job --hosts`'s tests: Debian's
sshd (openssh-server) run in the foreground with a configuration, host key
and client key of its own in a temporary directory, listening on one port
of 127.0.0.1 only, accepting the client key for the user running the tests.
Its sessions get PYHANG_BUILD_DIR (sshd's SetEnv), as a cluster's login
environment would name where pyhang is, and PYTHONDONTWRITEBYTECODE, as the
tests' own environment has it: the pyhang an ssh session runs from the
checkout writes no bytecode into it.  Stopped by its pid.

    with SshServer(tmp, build_dir) as ssh:
        subprocess.run(["ssh", *ssh.client_args(), "127.0.0.1", "true"])
"""
import os
import shutil
import socket
import subprocess
import time

SSHD = "/usr/sbin/sshd"
SSH_KEYGEN = "ssh-keygen"


def why_not():
    """Why no server can be started here, or None."""
    if not os.path.exists(SSHD):
        return "openssh-server is not installed (testdata/setup.sh --tests installs it)"
    if shutil.which("ssh") is None or shutil.which(SSH_KEYGEN) is None:
        return "openssh-client is not installed"
    if os.geteuid() != 0:
        return "sshd runs as root here (its privilege separation needs it)"
    return None


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SshServer:
    def __init__(self, directory, build_dir):
        self.dir = directory
        self.build_dir = build_dir
        self.port = _free_port()
        self.proc = None

    def path(self, name):
        return os.path.join(self.dir, name)

    def client_args(self):
        """The ssh options that reach this server with the client key, trusting its host key."""
        return ["-p", str(self.port), "-i", self.path("client"), "-o", "IdentitiesOnly=yes",
                "-o", "UserKnownHostsFile=" + self.path("known_hosts"), "-o", "StrictHostKeyChecking=no",
                "-o", "LogLevel=ERROR"]

    def __enter__(self):
        for key in ("host", "client"):
            subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-f", self.path(key)], check=True)
        shutil.copy(self.path("client.pub"), self.path("authorized_keys"))
        os.chmod(self.path("authorized_keys"), 0o600)
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)   # its privilege separation directory
        with open(self.path("sshd_config"), "w") as f:
            f.write("Port %d\nListenAddress 127.0.0.1\nHostKey %s\nAuthorizedKeysFile %s\nPidFile %s\n"
                    "PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                    "UsePAM no\nStrictModes no\nSetEnv PYHANG_BUILD_DIR=%s PYTHONDONTWRITEBYTECODE=1\n" % (
                        self.port, self.path("host"), self.path("authorized_keys"), self.path("sshd.pid"),
                        self.build_dir))
        self.log = open(self.path("sshd.log"), "w")
        self.proc = subprocess.Popen([SSHD, "-D", "-e", "-f", self.path("sshd_config")], stdout=self.log,
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.1)
        self.__exit__()
        with open(self.path("sshd.log")) as f:
            raise RuntimeError("sshd did not start: %s" % f.read()[-2000:])

    def __exit__(self, *exc):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return False
