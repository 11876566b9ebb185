"""Runs under the interpreter being tested (3.6 - 3.13) and prints one JSON
document: what the running interpreter says about stack depths, to hold
pyhang's analysis of the code (cpython/bytecode.cpp) against.

  executed   every instruction a small workload ran (the standard library's
             json, argparse, difflib, tempfile, re ... and `shapes` below:
             try/finally, with, except-as, continue and return inside them,
             generators), with the depth of the frame's value stack just
             before it, read from the frame itself while the trace function
             runs (3.6 - 3.12: CPython saves the stack pointer for the
             tracer; 3.13's tracing does not, and it has none)
  compiled   code objects of standard library modules compiled here, with the
             co_stacksize the compiler gave each

usage: stack_depths.py MODULES   (how many standard library files to compile)
"""
import ctypes
import glob
import json
import os
import sys
import types

MINOR = sys.version_info[1]


def stack_depth(frame):
    """Values on the frame's stack, from CPython's own frame structs
    (Include/frameobject.h, Include/internal/pycore_frame.h of each version)."""
    a = id(frame)
    if MINOR <= 10:
        valuestack = ctypes.c_void_p.from_address(a + 64).value   # after the var header and 5 pointers
        if MINOR <= 9:
            top = ctypes.c_void_p.from_address(a + 72).value      # f_stacktop, set while tracing
            return None if not top else (top - valuestack) // 8
        return ctypes.c_int.from_address(a + 80).value           # f_stackdepth (after f_trace)
    if MINOR <= 12:
        iframe = ctypes.c_void_p.from_address(a + 24).value       # PyFrameObject.f_frame
        top = ctypes.c_int.from_address(iframe + 64).value        # stacktop, counted from localsplus
        c = frame.f_code
        cells = [x for x in c.co_cellvars if x not in c.co_varnames]
        return top - (len(c.co_varnames) + len(cells) + len(c.co_freevars))
    return None


executed = {}
codes = {}


def tracer(frame, event, arg):
    if MINOR >= 7:
        frame.f_trace_opcodes = True
    if event in ("opcode", "line"):
        depth = stack_depth(frame)
        if depth is not None:
            codes[id(frame.f_code)] = frame.f_code
            executed.setdefault(id(frame.f_code), {})[frame.f_lasti] = depth
    return tracer




def shapes(x):
    lock = __import__("threading").Lock()
    total = 0
    for i in range(3):
        try:
            if i == 1:
                continue
            total += int(x)
        except ValueError as e:
            total += len(repr(e))
            continue
        finally:
            total += abs(i)
    with lock:
        total += len(str(x))
    try:
        try:
            return sorted([3, 1]) + [total]
        finally:
            len("abc")
    except Exception:
        pass
    finally:
        repr(1)


def generator():
    for i in range(3):
        try:
            yield i
        finally:
            len("x")


def workload():
    import argparse, collections, difflib, fractions, json as json_, re, string, tempfile, textwrap
    for x in ("1", "x", [1]):
        try:
            shapes(x)
        except Exception:
            pass
    list(generator())
    json_.loads(json_.dumps({"a": [1, 2, {"b": None}], "c": "x" * 10}))
    textwrap.fill("hello world " * 20, width=30)
    list(difflib.unified_diff(["a\n", "b\n"], ["a\n", "c\n"]))
    p = argparse.ArgumentParser()
    p.add_argument("--x", type=int, default=3)
    p.parse_args(["--x", "5"])
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "f"), "w") as f:
            f.write("x")
    re.sub(r"(a)(b)?", lambda m: m.group(0) * 2, "abab ac")
    collections.Counter("hello").most_common(2)
    string.Template("$a $b").safe_substitute(a=1)
    fractions.Fraction(3, 4) + fractions.Fraction(1, 3)


def code_objects(co):
    yield co
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            for inner in code_objects(c):
                yield inner


def main():
    sys.settrace(tracer)
    try:
        workload()
    finally:
        sys.settrace(None)
    doc = {"minor": MINOR, "executed": [], "compiled": []}
    for key, c in codes.items():
        doc["executed"].append({"name": c.co_name, "code": c.co_code.hex(),
                                "exceptions": getattr(c, "co_exceptiontable", b"").hex(),
                                "depths": executed[key]})
    files = sorted(glob.glob(os.path.join(os.path.dirname(os.__file__), "*.py")))[:int(sys.argv[1])]
    for path in files:
        try:
            with open(path, encoding="utf-8") as f:
                top = compile(f.read(), path, "exec")
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for c in code_objects(top):
            doc["compiled"].append({"name": "%s:%s" % (os.path.basename(path), c.co_name), "code": c.co_code.hex(),
                                    "exceptions": getattr(c, "co_exceptiontable", b"").hex(),
                                    "stacksize": c.co_stacksize})
    json.dump(doc, sys.stdout)


main()
