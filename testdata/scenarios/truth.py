"""What a scenario program records about itself, for the tests to compare
with pyhang's answer.  Works on every Python from 3.6 on."""
import ctypes
import json
import os
import sys
import threading
import traceback

_libc = ctypes.CDLL(None, use_errno=True)
_SYS_gettid = 186  # x86_64
_PR_SET_NAME = 15


def gettid():
    return _libc.syscall(_SYS_gettid)


def set_os_thread_name(name):
    """The name the kernel shows (comm), which gdb reports for live threads."""
    _libc.prctl(_PR_SET_NAME, ctypes.c_char_p(name.encode()[:15]), 0, 0, 0)


def in_futex_wait(tid):
    """Whether thread `tid` of this process sleeps in futex (x86_64 202): parked on a lock."""
    try:
        with open("/proc/self/task/%d/syscall" % tid) as f:
            return f.read().split()[0] == "202"
    except OSError:
        return False


def python_stack(skip=1):
    """The caller's stack, innermost first, as (function, file, line)."""
    frames = traceback.extract_stack(sys._getframe(skip))
    return [{"function": f.name, "file": f.filename, "line": f.lineno} for f in reversed(frames)]


class Truth:
    def __init__(self):
        self.data = {"pid": os.getpid(), "python": "%d.%d.%d" % sys.version_info[:3],
                     "executable": sys.executable, "threads": []}
        self.lock = threading.Lock()

    def thread(self, **info):
        with self.lock:
            self.data["threads"].append(info)

    def write_and_signal_ready(self, **extra):
        self.data.update(extra)
        path = os.environ["PYHANG_TRUTH"]
        with open(path + ".tmp", "w") as f:
            json.dump(self.data, f, indent=1)
        os.rename(path + ".tmp", path)
        sys.stdout.write("READY\n")
        sys.stdout.flush()
