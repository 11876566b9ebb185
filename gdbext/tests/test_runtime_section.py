"""CPython 3.14+ places _PyRuntime in a section of its own, .PyRuntime, so
that tools find the interpreter where the symbol is not exported: a copy of
Debian unstable's python3.14 whose .dynsym no longer names _PyRuntime (its
name rewritten in .dynstr) is still read whole, live and from a core."""
import os

import pytest

import containers
import harness


def hidden_runtime_copy(root):
    """ROOT/usr/local/bin/python3.14-hidden-runtime: python3.14 with the
    .dynsym name "_PyRuntime" rewritten to "_PyRuntimX" (same length)."""
    path = "/usr/local/bin/python3.14-hidden-runtime"
    dest = root + path
    if not os.path.exists(dest):
        data = bytearray(open(root + "/usr/bin/python3.14", "rb").read())
        at = data.find(b"\0_PyRuntime\0")
        assert at >= 0 and data.find(b"\0_PyRuntime\0", at + 1) < 0, "one _PyRuntime name in .dynstr"
        data[at + 1:at + 12] = b"_PyRuntimX\0"
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest + ".tmp", "wb") as f:
            f.write(data)
        os.chmod(dest + ".tmp", 0o755)
        os.rename(dest + ".tmp", dest)
    return path


# An RLock ABBA that needs no extension module (the copy cannot load those
# that import _PyRuntime, _ctypes among them, which testdata/scenarios/truth.py uses).
ABBA = """
import json, os, sys, threading
a, b, ready = threading.RLock(), threading.RLock(), threading.Barrier(3)
threads = []
def take(first, second, name):
    threads.append({"tid": threading.get_native_id(), "name": name, "role": name})
    with first:
        ready.wait()
        with second:
            pass
for first, second, name in ((a, b, "holds-a"), (b, a, "holds-b")):
    threading.Thread(target=take, args=(first, second, name), daemon=True).start()
ready.wait()
with open(os.environ["PYHANG_TRUTH"], "w") as f:
    json.dump({"python": sys.version.split()[0], "threads": threads, "a": id(a), "b": id(b)}, f)
print("READY", flush=True)
threading.Event().wait()
"""


def test_the_interpreter_is_found_through_its_pyruntime_section_when_the_symbol_is_not_exported(scenario):
    sid = next((r for n, _, r in containers.interpreters() if n == "debian-sid-3.14"), None)
    if sid is None:
        pytest.skip("no Debian unstable root here (testdata/containers.py)")
    python = containers.launcher(sid, hidden_runtime_copy(sid))
    # GIVEN two threads in an RLock ABBA under that copy
    s = scenario([python, "-u", "-c", ABBA])
    assert s.truth["python"].startswith("3.14")
    for where in ("live", "core"):
        target = {"pid": s.pid} if where == "live" else {"executable": python, "core": s.gcore()}
        report = harness.report_json(**target)
        # THEN the interpreter is found and read, and the deadlock is certain
        assert report["target"]["python_version"] == s.truth["python"], (where, report["warnings"])
        (d,) = report["deadlocks"]
        assert d["confidence"] == "certain" and sorted(d["threads"]) == sorted(t["tid"] for t in s.truth["threads"])
        assert {e["address"] for e in d["edges"]} == {s.truth["a"], s.truth["b"]}, (where, d)
