"""Scenario: threads spread over subinterpreters (CPython 3.12+).

  main        the main thread (interpreter 0), parked in time.sleep
  main-worker a thread of the main interpreter, in time.sleep
  sub-own     a thread started inside interpreter A, which has its own GIL
  sub-shared  a thread started inside interpreter B, which shares the main
              interpreter's GIL (the legacy configuration)
  exec-into   a thread of the main interpreter that runs code in
              interpreter C (its own GIL) and parks there: one OS thread
              with a thread state in each of two interpreters

Every thread parks in time.sleep with the GIL it runs under released.
Truth: each thread's TID, interpreter id and Python stack where it sleeps
(`stack`, as traceback sees it inside its interpreter); exec-into also the
stack of its main-interpreter frames (`outer_stack`), parked in the call that
runs code in C; `interpreters`: {A, B, C: id}.  Subinterpreter threads
write their truth to files (subinterpreter_child.py), collected here.
Exits with status 3 on a Python without subinterpreters."""
import json
import os
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from truth import Truth, gettid, python_stack, set_os_thread_name  # noqa: E402

if sys.version_info < (3, 12):   # subinterpreters with a GIL of their own
    sys.stderr.write("no subinterpreters with their own GIL in Python %d.%d\n" % sys.version_info[:2])
    sys.exit(3)
try:
    import _interpreters as interpreters   # 3.13+

    def create(own_gil):
        return int(interpreters.create("isolated" if own_gil else "legacy"))

    def run(interp, code, record=None):
        # One line: the recorded line (`record`: of the stack here) is the line that runs the code.
        record and record(python_stack(1)); failure = interpreters.exec(interp, code)  # noqa: E702
        if failure is not None:
            raise RuntimeError("interpreter %d: %s" % (interp, failure))
except ImportError:
    try:
        import _xxsubinterpreters as interpreters   # 3.12

        def create(own_gil):
            handle = interpreters.create(isolated=own_gil)
            HANDLES[int(handle)] = handle   # run_string takes the InterpreterID, not its number
            return int(handle)

        def run(interp, code, record=None):
            record and record(python_stack(1)); interpreters.run_string(HANDLES[interp], code)  # noqa: E702

        HANDLES = {}
    except ImportError:
        sys.stderr.write("no subinterpreters in Python %d.%d\n" % sys.version_info[:2])
        sys.exit(3)

TRUTH = Truth()
DIR = tempfile.mkdtemp(prefix="subinterpreters-")
SLEEP = ["clock_nanosleep", "nanosleep"]


def child_code(call):
    return "import sys\nsys.path.insert(0, %r)\nimport subinterpreter_child\nsubinterpreter_child.%s\n" % (HERE, call)


def park_main_worker():
    set_os_thread_name("main-worker")
    # One line: the recorded line is the line the thread sleeps on.
    while True: TRUTH.thread(tid=gettid(), name="main-worker", role="main-worker", interpreter=0, stack=python_stack(1), parked_in=SLEEP); time.sleep(3600)  # noqa: E501,E701,E702


def exec_into(interp):
    set_os_thread_name("exec-into")
    code = child_code("park(%r, 'exec-into', %d)" % (DIR, interp))
    run(interp, code, record=lambda stack: TRUTH.data.update(outer_stack=stack))


def collect(roles):
    """Each subinterpreter thread's truth, once it wrote it."""
    for role in roles:
        path = os.path.join(DIR, role + ".json")
        while not os.path.exists(path):
            time.sleep(0.01)
        with open(path) as f:
            TRUTH.thread(**json.load(f))


def main():
    set_os_thread_name("subinterp-main")
    ids = {"A": create(True), "B": create(False), "C": create(True)}
    threading.Thread(target=park_main_worker, daemon=True).start()
    run(ids["A"], child_code("start_thread(%r, 'sub-own', %d, 2)" % (DIR, ids["A"])))
    run(ids["B"], child_code("start_thread(%r, 'sub-shared', %d, 1)" % (DIR, ids["B"])))
    threading.Thread(target=exec_into, args=(ids["C"],), daemon=True).start()
    collect(["sub-own", "sub-shared", "exec-into"])
    while len(TRUTH.data["threads"]) < 4:
        time.sleep(0.01)
    TRUTH.data["interpreters"] = ids
    while True: TRUTH.thread(tid=gettid(), name="subinterp-main", role="main", interpreter=0, stack=python_stack(1), parked_in=SLEEP); TRUTH.write_and_signal_ready(); time.sleep(3600)  # noqa: E501,E701,E702


main()
