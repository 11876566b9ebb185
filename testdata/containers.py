"""Today's interpreters as their distributions ship them, run as a container
runtime runs them.

Debian's archive has CPython 3.14 and 3.15 in unstable (glibc 2.43) and
3.13.5 in trixie (glibc 2.41).  `ensure_roots()` makes one root file system
of each with mmdebstrap, once per machine, in a cache outside the checkout
($PYHANG_ROOTS, default /var/cache/pyhang-roots).  `launcher(root, exe)` is an
executable that runs `exe` inside that root the way a container runtime
does: a new mount namespace, the root bind-mounted on itself, the host's
/proc, /dev, /tmp and the checkout bound in (so scenarios and their truth
files are where the host expects them), `pivot_root`, the old root
detached, then exec.  Every step execs, so the pid the launcher is started
with is the interpreter's pid, as with `docker run --init=false`.

The interpreters are Debian's stripped builds: pyhang needs no debug info.
"""
import hashlib
import os
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# (root name, suite, packages, [(test id, interpreter inside the root)])
ROOTS = [
    ("sid", "sid", ["python3.14", "python3.15"],
     [("debian-sid-3.14", "/usr/bin/python3.14"), ("debian-sid-3.15", "/usr/bin/python3.15")]),
    # austin (a C stack dumper, 3.7 in trixie) is the peer native/bench/goals.py measures --no-stop against
    ("trixie", "trixie", ["python3.13", "austin"], [("debian-trixie-3.13", "/usr/bin/python3.13")]),
]
# Roots for the tests of one library only, not every interpreter test: unstable's PyTorch (2.x, for 3.14),
# the torch.distributed scenario on today's interpreter and torch (about 650 MB, a minute or two).
LIBRARY_ROOTS = [
    ("sid-torch", "sid", ["python3.14", "python3-torch"], [("debian-sid-3.14-torch", "/usr/bin/python3.14")]),
    # unstable's clients of the services' tests (psycopg2 2.9, SQLAlchemy 2.0, redis-py 6, grpcio 1.51,
    # urllib3 2), for 3.14; the servers they talk to stay the host's, on loopback (about 220 MB)
    ("sid-services", "sid", ["python3.14", "python3-psycopg2", "python3-sqlalchemy", "python3-redis",
                             "python3-grpcio", "python3-urllib3"],
     [("debian-sid-3.14-services", "/usr/bin/python3.14")]),
]

# Runs argv[2:] inside root argv[1], in the mount namespace `unshare --mount`
# made for it.  Written for the host's /usr/bin/python3: everything it needs
# is loaded before the pivot, and after `pivot_root . .` (the old root stacked
# on the new one) it detaches the old root and execs inside the new root.
_ENTER = r"""#!/usr/bin/python3 -I
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
MS_BIND, MS_REC, MS_PRIVATE, MNT_DETACH, SYS_pivot_root = 0x1000, 0x4000, 0x40000, 2, 155

def check(r, what):
    if r != 0:
        e = ctypes.get_errno()
        sys.exit("enter-root: %s: %s" % (what, os.strerror(e)))

def mount(src, dst, flags):
    check(libc.mount(src.encode(), dst.encode(), None, flags, None), "mount %s %s" % (src, dst))

root, argv = sys.argv[1], sys.argv[2:]
mount("none", "/", MS_REC | MS_PRIVATE)
mount(root, root, MS_BIND | MS_REC)
for d in ["/proc", "/dev", "/tmp", os.environ["PYHANG_CHECKOUT"]]:
    os.makedirs(root + d, exist_ok=True)
    mount(d, root + d, MS_BIND | MS_REC)
cwd = os.getcwd()
os.chdir(root)
check(libc.syscall(SYS_pivot_root, b".", b"."), "pivot_root")
check(libc.umount2(b".", MNT_DETACH), "umount the old root")
try:
    os.chdir(cwd)
except OSError:
    os.chdir("/")
os.execv(argv[0], argv)
"""


def cache_dir():
    return os.environ.get("PYHANG_ROOTS", "/var/cache/pyhang-roots")


def mirror():
    """The Debian mirror this machine's apt uses (deb822 or one-line form)."""
    for path in ["/etc/apt/sources.list.d/debian.sources", "/etc/apt/sources.list"]:
        try:
            text = open(path).read()
        except OSError:
            continue
        for line in text.splitlines():
            parts = line.split()
            if line.startswith("URIs:") and "debian-security" not in line:
                return parts[1]
            if parts[:1] == ["deb"] and "debian-security" not in line:
                return next(p for p in parts[1:] if "://" in p)
    return "http://deb.debian.org/debian"


def root_path(name):
    return os.path.join(cache_dir(), name)


def ensure_roots(log=print):
    """Makes every missing root (about a minute each); returns the problems
    of those that could not be made, one line each."""
    problems = []
    for name, suite, packages, _ in ROOTS + LIBRARY_ROOTS:
        dest = root_path(name)
        if os.path.exists(os.path.join(dest, ".pyhang-root")) and not missing_packages(dest, packages):
            continue
        if not shutil.which("mmdebstrap"):
            problems.append("mmdebstrap is not installed (apt-get install mmdebstrap)")
            continue
        tmp = dest + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(cache_dir(), exist_ok=True)
        log("pyhang: making the %s root (%s) in %s" % (name, ", ".join(packages), dest))
        argv = ["mmdebstrap", "--variant=apt", "--quiet",
                # unstable's Release file may be past its Valid-Until on a snapshot mirror
                "--aptopt=Acquire::Check-Valid-Until \"false\"",
                "--include=" + ",".join(packages), suite, tmp, mirror()]
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            problems.append("mmdebstrap %s failed: %s" % (suite, r.stdout.strip().splitlines()[-1:]))
            continue
        open(os.path.join(tmp, ".pyhang-root"), "w").close()
        shutil.rmtree(dest, ignore_errors=True)
        os.rename(tmp, dest)
    return problems


def missing_packages(root, packages):
    """Those of `packages` the root's dpkg has not installed (a root made before a package was added to its
    list is made again)."""
    info = os.path.join(root, "var", "lib", "dpkg", "info")
    return [p for p in packages
            if not any(os.path.exists(os.path.join(info, p + arch + ".list")) for arch in ("", ":amd64"))]


def launcher(root, exe):
    """An executable that runs `exe` (a path inside `root`) with the
    arguments it is given, inside the root, keeping its pid."""
    bindir = os.path.join(cache_dir(), "bin")
    os.makedirs(bindir, exist_ok=True)
    enter = os.path.join(bindir, "enter-root")
    if not os.path.exists(enter) or open(enter).read() != _ENTER:
        with open(enter + ".new", "w") as f:
            f.write(_ENTER)
        os.chmod(enter + ".new", 0o755)
        os.rename(enter + ".new", enter)
    # Named for the root, the exe's whole path and the checkout it binds: two
    # programs of one name (a fixture copied to two directories), or two
    # checkouts testing at once, must not share, and overwrite, one launcher.
    tag = hashlib.sha1(("%s\0%s\0%s" % (root, exe, ROOT)).encode()).hexdigest()[:8]
    path = os.path.join(bindir, "%s-%s-%s" % (os.path.basename(root), os.path.basename(exe), tag))
    text = ("#!/bin/sh\nPYHANG_CHECKOUT=%s exec unshare --mount %s %s %s \"$@\"\n"
            % (ROOT, enter, root, exe))
    if not os.path.exists(path) or open(path).read() != text:
        with open(path + ".new", "w") as f:
            f.write(text)
        os.chmod(path + ".new", 0o755)
        os.rename(path + ".new", path)
    return path


def interpreters(roots=None):
    """(test id, launcher, root) of every container interpreter whose root
    exists on this machine (of `roots`: ROOTS, or LIBRARY_ROOTS)."""
    found = []
    for name, _, _, pythons in ROOTS if roots is None else roots:
        root = root_path(name)
        if not os.path.exists(os.path.join(root, ".pyhang-root")):
            continue
        for test_id, exe in pythons:
            if os.path.exists(root + exe):
                found.append((test_id, launcher(root, exe), root))
    return found


def inside(launcher_path):
    """(root, program path inside it) of a launcher, read back from the
    launcher itself, or None for any other path: what a core of its process
    needs (gdb's sysroot, the executable under it)."""
    if not launcher_path or os.path.dirname(launcher_path) != os.path.join(cache_dir(), "bin"):
        return None
    try:
        words = open(launcher_path).read().split()
    except OSError:
        return None
    if "unshare" not in words or len(words) < words.index("unshare") + 5:
        return None
    at = words.index("unshare")
    return words[at + 3], words[at + 4]  # unshare --mount ENTER ROOT EXE


if __name__ == "__main__":
    import sys
    bad = ensure_roots()
    for line in bad:
        print("pyhang: " + line, file=sys.stderr)
    for test_id, path, root in interpreters() + interpreters(LIBRARY_ROOTS):
        print("%s %s (root %s)" % (test_id, path, root))
    sys.exit(1 if bad else 0)
