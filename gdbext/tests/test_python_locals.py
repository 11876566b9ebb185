"""libpython.py's frame commands on stripped builds: py-locals, py-print,
py-list, py-up/py-down (with their bounds), py-bt-full, on every
interpreter present, live and from a core, against what
testdata/scenarios/py_locals.py recorded about its own frames (every kind of
local value), and next to CPython's own libpython.py when both are loaded.
One scenario process and one core per interpreter serve every test here."""
import json
import os
import re

import pytest

import harness

INTERPRETERS = harness.interpreters()


@pytest.fixture(scope="module", params=INTERPRETERS, ids=[n for n, _ in INTERPRETERS])
def parked(request):
    """(Scenario, stripped executable, core) of py_locals.py under one interpreter."""
    exe, env = harness.stripped_interpreter(request.param[1])
    s = harness.python_scenario(exe, "py_locals.py", env=env).start()
    try:
        s.original = request.param[1]  # the interpreter before stripping, with what it ships
        yield s, exe, s.gcore()
    finally:
        s.stop()


def sections(commands, **target):
    """Run gdb commands in one session; the output of each, in order."""
    marked = []
    for i, c in enumerate(commands):
        marked += ["echo @@%d@@\\n" % i, c]
    marked.append("echo @@%d@@\\n" % len(commands))
    out = harness.run_gdb(marked, **target)
    parts = []
    for i in range(len(commands)):
        m = re.search(r"@@%d@@\n(.*?)@@%d@@" % (i, i + 1), out, re.S)
        assert m, "no output for %r:\n%s" % (commands[i], out[-4000:])
        parts.append(m.group(1))
    return parts


def switch_to(tid):
    return "python [t.switch() for t in gdb.selected_inferior().threads() if t.ptid[1] == %d]" % tid


def as_locals(text):
    """{name: repr} of py-locals output."""
    out = {}
    for line in text.splitlines():
        name, sep, value = line.partition(" = ")
        if sep:
            out[name] = value
    return out


def check_value(got, want, where):
    if want["how"] == "exact":
        assert got == want["text"], where
    elif want["how"] == "prefix":
        assert got is not None and got.startswith(want["text"]), (where, got)
    else:  # a thread: its name, and its address at the end
        assert got.startswith(want["text"]) and got.endswith(want["suffix"]), (where, got)


def check_frame_locals(text, frame, where):
    got = as_locals(text)
    for name, _kind, want in frame["locals"]:
        check_value(got.get(name), want, (where, frame["function"], name, text))
    for name in frame.get("unbound", []):
        assert name not in got, (where, name)


def worker_and_main(truth):
    by_role = {t["role"]: t for t in truth["threads"]}
    return by_role["worker"], by_role["main"]


@pytest.mark.parametrize("where", ["live", "core"])
def test_py_locals_print_list_up_down_and_bt_full_show_what_the_frames_hold(parked, where):
    s, exe, core = parked
    target = {"pid": s.pid} if where == "live" else {"executable": exe, "core": core}
    worker, main = worker_and_main(s.truth)
    stack = worker["stack"]
    frames = s.truth["frames"]  # park, nested, settle: innermost first
    commands = [switch_to(worker["tid"]), "py-down", "py-locals", "py-up", "py-locals", "py-up", "py-locals",
                "py-list", "py-print count", "py-print CONFIG", "py-print len", "py-print no_such_name",
                "py-bt-full"]
    commands += ["py-up"] * (len(stack) - 2)  # from frame 2 to the outermost, then one more
    commands += [switch_to(main["tid"]), "py-up", "py-locals", switch_to(worker["tid"]), "bt",
                 "set pyhang frame-filter off", "bt", "set pyhang frame-filter on", "pyhang report --merged --json",
                 "pyhang report --locals --json", "pyhang report --locals"]
    out = sections(commands, **target)
    bt_on, bt_off, merged, report, report_text = out[-7], out[-5], out[-3], out[-2], out[-1]
    out = out[:-8]
    # THEN py-down at the innermost frame says there is none newer
    assert out[1].strip() == "Unable to find a newer python frame", out[1]
    # AND py-locals shows each frame's locals as the program recorded them, py-up moving outwards
    check_frame_locals(out[2], frames[0], where)
    assert out[3].startswith('#1 File "%s", line %d, in ' % (stack[1]["file"], stack[1]["line"])), out[3]
    check_frame_locals(out[4], frames[1], where)
    check_frame_locals(out[6], frames[2], where)
    # AND py-up's header names the frame's arguments, as py-bt-full does
    assert out[5].splitlines()[0].endswith(
        "in settle (count=5, name='invoice', rest=('extra', 2.5), options={'retry': True})"), out[5]
    # AND py-list marks the selected frame's line with the file's own text, read where the target's
    # files are (a core of a container's interpreter: under its root, which lacks the scenario)
    with open(stack[2]["file"]) as f:
        line = f.readlines()[stack[2]["line"] - 1].rstrip("\n")
    if where == "live" or os.path.isfile(harness.core_file(exe, stack[2]["file"])):
        assert ">%d    %s" % (stack[2]["line"], line) in out[7], out[7]
    else:
        assert out[7].startswith("Unable to open %s: No such file or directory (read at %s)" % (
            stack[2]["file"], harness.core_file(exe, stack[2]["file"]))), out[7]
    # AND py-print finds a local, then a global of the module, then a builtin
    assert out[8].strip() == "local 'count' = 5", out[8]
    assert out[9].strip() == "global 'CONFIG' = {'retries': 3, 'mode': 'strict'}", out[9]
    assert out[10].strip() == "builtin 'len' = <built-in function len>", out[10]
    assert out[11].strip() == "'no_such_name' not found", out[11]
    # AND py-bt-full says the thread and its GIL state as py-bt does, then lists every frame,
    # innermost first, with its arguments
    assert re.fullmatch(r"Thread \d+ \(LWP %d\), Python %s, GIL: released" % (worker["tid"], re.escape(s.truth["python"])),
                        out[12].splitlines()[0]), out[12]
    full = [l for l in out[12].splitlines() if l.startswith("#")]
    assert len(full) == len(stack)
    for i, (l, f) in enumerate(zip(full, stack)):
        assert l.startswith('#%d File "%s", line %d, in ' % (i, f["file"], f["line"])), (l, f)
    assert "(count=5, name='invoice', rest=('extra', 2.5), options={'retry': True})" in full[2]
    # AND py-up at the outermost frame says there is none older
    ups = out[13:13 + len(stack) - 2]
    assert ups[-1].strip() == "Unable to find an older python frame", ups
    assert all(u.startswith("#") for u in ups[:-1]), ups
    # AND the module-level frame of the main thread shows its globals through f_locals
    module = as_locals(out[-1])
    for name, want in s.truth["globals"]:
        check_value(module.get(name), want, (where, "<module>", name))
    # AND gdb's own `bt` shows the Python frames at the evaluation-loop frames that run them, in order
    check_merged_backtrace(bt_on, stack, where)
    assert "[Python]" not in bt_off, bt_off
    # AND `pyhang report --merged` pairs every Python frame with the evaluation-loop frame running it
    check_merged_report(harness.validated_report(json.loads(merged[merged.index("{"):])), worker, where)
    # AND `pyhang report --locals` gives every frame's locals, in JSON (schema-valid) and in text
    check_report_locals(harness.validated_report(json.loads(report[report.index("{"):])), s.truth, where)
    assert "    File \"%s\", line %d, in " % (stack[2]["file"], stack[2]["line"]) in report_text
    assert "\n      count = 5\n" in report_text, report_text


def eval_loop_levels(bt):
    """[gdb frame level of each Python frame], innermost first, from `bt` through pyhang's filter."""
    return [level for level, _ in python_frames_in_bt(bt)]


@pytest.mark.parametrize("where", ["live", "core"])
def test_bt_shows_each_python_frame_on_a_line_of_its_own_under_the_evaluation_loop_frame_running_it(parked, where):
    s, exe, core = parked
    target = {"pid": s.pid} if where == "live" else {"executable": exe, "core": core}
    worker, _ = worker_and_main(s.truth)
    bt = sections([switch_to(worker["tid"]), "bt"], **target)[1]
    # THEN every Python frame of the worker, innermost first, is a line "[Python] FUNCTION () at FILE:LINE"
    # indented under the evaluation-loop frame that runs it, whose own line is gdb's as without pyhang
    check_merged_backtrace(bt, worker["stack"], where)
    lines = [l for l in bt.splitlines() if "[Python]" in l]
    assert len(lines) == len(worker["stack"]) and all(len(l) < 200 for l in lines), bt
    # AND the frame levels stay gdb's: one per native frame, in order, none for a Python frame
    levels = [int(l[1:].split()[0]) for l in bt.splitlines() if l.startswith("#")]
    assert levels == list(range(len(levels))), bt


LEVEL = "python print('level', gdb.selected_frame().level())"


@pytest.mark.parametrize("where", ["live", "core"])
def test_py_up_and_py_down_move_gdbs_frame_with_them_and_gdbs_frame_moves_the_python_frame(parked, where):
    # GIVEN the worker's stack, and which evaluation-loop frame runs each Python frame (`bt`)
    s, exe, core = parked
    target = {"pid": s.pid} if where == "live" else {"executable": exe, "core": core}
    worker, _ = worker_and_main(s.truth)
    stack = worker["stack"]
    bt = sections([switch_to(worker["tid"]), "bt"], **target)[1]
    levels = eval_loop_levels(bt)
    assert len(levels) == len(stack), bt
    # the innermost Python frame of an outer evaluation-loop frame, not the outermost frame
    # (from 3.11 one loop runs several frames; on 3.12+ one may run this whole thread)
    inner = next((i for i in range(1, len(stack) - 1) if levels[i] != levels[i - 1]), None)
    # WHEN py-up walks outwards, and gdb's own `frame N` selects an evaluation-loop frame
    commands = [switch_to(worker["tid"])]
    commands += ["py-up", LEVEL] * (len(stack) - 1) + ["py-down", LEVEL]
    commands += ["frame 0", "py-print inner_local"]
    if inner is not None:
        commands += ["frame %d" % levels[inner], "py-locals", "py-up", LEVEL]
    out = sections(commands, **target)[1:]
    ups, rest = out[:2 * (len(stack) - 1)], out[2 * (len(stack) - 1):]
    # THEN each py-up selects the evaluation-loop frame that runs the new Python frame
    for i in range(1, len(stack)):
        assert ups[2 * (i - 1)].startswith('#%d File "%s", line %d' % (i, stack[i]["file"], stack[i]["line"]))
        assert ups[2 * (i - 1) + 1].strip() == "level %d" % levels[i], (where, i, ups)
    # AND py-down moves gdb's frame back with it
    assert rest[1].strip() == "level %d" % levels[-2], (where, rest)
    # AND `frame 0` brings the Python selection back to the innermost frame
    assert rest[3].startswith("local 'inner_local' = "), (where, rest[3])   # a local of frame 0 alone
    if inner is None:
        return
    # AND after `frame N`, the Python commands act on the innermost Python frame that frame runs
    assert rest[5].strip(), rest
    assert rest[6].startswith('#%d File "%s", line %d' % (inner + 1, stack[inner + 1]["file"], stack[inner + 1]["line"])), \
        (where, inner, rest)
    assert rest[7].strip() == "level %d" % levels[inner + 1], (where, rest)


def test_pyhangs_commands_work_next_to_cpythons_libpython(parked):
    # GIVEN CPython's own gdb extension of this version, when the interpreter ships one
    s, exe, _ = parked
    version = "%d.%d" % tuple(int(x) for x in s.truth["python"].split(".")[:2])
    libpython = os.path.join(os.path.dirname(os.path.realpath(s.original)), "python%s-gdb.py" % version)
    if not os.path.exists(libpython):
        pytest.skip("no libpython.py shipped with %s" % s.original)
    worker, _ = worker_and_main(s.truth)
    # one loading order per interpreter, alternating between versions: both orders are covered
    orders = (["source " + libpython, "source " + harness.GDBEXT],
              ["source " + harness.GDBEXT, "source " + libpython])
    for order in orders[int(version.split(".")[1]) % 2:][:1]:
        out = sections(order + [switch_to(worker["tid"]), "pyhang-py-locals", "pyhang-py-up", "py-bt"],
                       pid=s.pid, load=False)
        # THEN pyhang's own names still work whichever was loaded first, and nothing raised
        check_frame_locals(out[3], s.truth["frames"][0], order)
        assert out[4].startswith("#1 File "), out[4]
        assert "Traceback (most recent call last)" not in "".join(out), out


def check_report_locals(doc, truth, where):
    worker, main = worker_and_main(truth)
    threads = {t["tid"]: t for t in doc["threads"]}
    frames = threads[worker["tid"]]["python_frames"]
    for got, want in zip(frames, truth["frames"]):
        assert "locals_problem" not in got, (where, got)
        by_name = {v["name"]: v for v in got["locals"]}
        for name, kind, value in want["locals"]:
            assert by_name[name]["kind"] == kind, (where, want["function"], name, by_name[name])
            check_value(by_name[name]["repr"], value, (where, want["function"], name))
        for name in want.get("unbound", []):
            assert name not in by_name, (where, name)
    assert frames[2]["locals"][0] == {"name": "count", "kind": "argument", "type": "int", "repr": "5",
                                      "address": frames[2]["locals"][0]["address"]}
    module = {v["name"]: v for v in threads[main["tid"]]["python_frames"][-1]["locals"]}
    for name, value in truth["globals"]:
        assert module[name]["kind"] == "f_locals", (where, name)
        check_value(module[name]["repr"], value, (where, "<module>", name))


# A Python frame in `bt`: a line of its own, indented under the native frame running it.
PYTHON_IN_BT = re.compile(r"^ +\[Python\] (\S+) \(\) at (.+):(\d+)$")


def python_frames_in_bt(bt):
    """[(gdb level of the native frame, (function, file, line))] of each Python frame `bt` shows
    through pyhang's filter, innermost first; each native frame's line holds no Python frame."""
    out, native = [], None
    for line in bt.splitlines():
        assert "[Python]" not in line or not line.startswith("#"), line
        if line.startswith("#"):
            native = line
        m = PYTHON_IN_BT.match(line)
        if m:
            # under the evaluation loop, or the part gcc split off it (Debian's 3.14 and 3.15 run there)
            assert re.search(r" in _PyEval_EvalFrameDefault(\.cold)? ", native), (native, line)
            out.append((int(native[1:].split()[0]), (m.group(1), m.group(2), int(m.group(3)))))
    return out


def check_merged_backtrace(bt, stack, where):
    got = [frame for _, frame in python_frames_in_bt(bt)]
    assert [(p, l) for _, p, l in got] == [(f["file"], f["line"]) for f in stack], (where, bt)
    for (fn, _, _), f in zip(got, stack):
        assert fn == f["function"] or fn.endswith("." + f["function"]), (where, fn, f)


def check_merged_report(doc, worker, where):
    thread = next(t for t in doc["threads"] if t["tid"] == worker["tid"])
    frames, native = thread["python_frames"], thread["native_frames"]
    assert [(f["file"], f["line"]) for f in frames] == [(f["file"], f["line"]) for f in worker["stack"]]
    at = [f["native_frame"] for f in frames]
    assert at == sorted(at), (where, at)
    assert {native[i]["function"] for i in at} <= {"_PyEval_EvalFrameDefault", "_PyEval_EvalFrameDefault.cold"}, \
        (where, native)
