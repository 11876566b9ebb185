"""Each Python frame's source line, read from the target's own files (a live
process's root, a core's sysroot), and on 3.11+ the columns of the
instruction it runs: in the JSON, under each frame of the text report and
of py-bt, from gdb and from the collector that never stops the process, on
every interpreter present (stripped pyenv copies, Debian's 3.11, today's
distributions' interpreters in their own root file systems)."""
import json
import os

import pytest

import harness

MAX_LINE_CHARS = 240   # docs/json-contract.md: a source line is cut to 240 characters

INTERPRETERS = harness.interpreters()


@pytest.fixture(scope="module", params=INTERPRETERS, ids=[name for name, _ in INTERPRETERS])
def python(request):
    return harness.stripped_interpreter(request.param[1])


def start(scenario, python):
    exe, env = python
    return scenario([exe, "-u", os.path.join(harness.SCENARIOS, "source_lines.py")], env=env)


def shown(text):
    """A source line as a report shows it: stripped, cut when long."""
    text = text.rstrip()
    if len(text) > MAX_LINE_CHARS:
        text = text[:MAX_LINE_CHARS - 3] + "..."
    return text.strip() or None


def expected_source(frame, readable):
    """What pyhang must show for a frame the scenario recorded; `readable`:
    whether the file is where this target's files are read from."""
    if frame["source"] is None or not readable(frame["file"]):
        return None
    return shown(frame["source"])


def position(frame):
    return [-1 if frame[k] is None else frame[k] for k in ("end_line", "col", "end_col")]


def check_frames(report, truth, readable, where):
    threads = {t["tid"]: t for t in report["threads"]}
    for t in truth["threads"]:
        got = threads[t["tid"]]["python_frames"]
        assert [(f["file"], f["line"]) for f in got] == [(f["file"], f["line"]) for f in t["stack"]], where
        for g, w in zip(got, t["stack"]):
            assert g["source"] == expected_source(w, readable), (where, t["role"], g, w)
            assert [g["end_line"], g["col"], g["end_col"]] == position(w), (where, t["role"], g, w)


def core_readable(executable):
    """Whether a core's file is readable (harness.core_file)."""
    return lambda path: os.path.isfile(harness.core_file(executable, path))


def test_each_frame_has_the_line_its_file_holds_and_its_columns_live_and_from_a_core(scenario, python):
    # GIVEN threads blocked in threading's Event.wait, reached from a line with non-ASCII names, a line
    # longer than a report shows, code compiled from a string and a module whose file is gone
    s = start(scenario, python)
    roles = {t["role"]: t for t in s.truth["threads"]}
    assert roles["generated"]["stack"][2]["source"] is None and roles["deleted"]["stack"][2]["source"] is None
    # WHEN pyhang reports on the live process
    live = harness.report_json(pid=s.pid)
    # THEN every frame has the line the process itself reads (through its own root: a container's
    # interpreter's standard library is not on this machine's), none where it has none; and on
    # 3.11+ the instruction's columns, as co_positions() gives them
    check_frames(live, s.truth, lambda path: True, "live")
    # AND from a core, in gdb and on the command line alike, each file is read under the sysroot given
    # (a container's root: its standard library), else where the core names it (the program's files,
    # bound into the container from this machine)
    core = s.gcore()
    check_frames(harness.report_json(executable=python[0], core=core), s.truth, core_readable(python[0]), "gdb core")
    exe = [] if harness.core_options(python[0]) else [python[0]]   # a container's: the one its core names
    status, out, err = harness.pyhang_cli("report", "--json", *harness.core_options(python[0]), core, *exe)
    check_frames(harness.validated_report(json.loads(out)), s.truth, core_readable(python[0]), "command line core")


def test_the_text_report_and_py_bt_show_the_line_under_each_frame_with_carets_on_3_11(scenario, python):
    s = start(scenario, python)
    nested = next(t for t in s.truth["threads"] if t["role"] == "nested")
    frame = nested["stack"][2]   # état_réveil = WAKE.wait()
    header = 'File "%s", line %d, in ' % (frame["file"], frame["line"])
    text, _ = harness.run_gdb_marked("pyhang report", pid=s.pid)
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if header in line)
    # THEN the line is under its frame, two columns deeper, as a Python traceback shows it
    indent = lines[at].index("File")
    assert lines[at + 1] == " " * (indent + 2) + "état_réveil = WAKE.wait()"
    if frame["col"] is not None:
        # AND on 3.11+ carets under the call (columns are bytes: "état_réveil" is 13 of them)
        assert lines[at + 2] == " " * (indent + 2) + " " * len("état_réveil = ") + "^" * len("WAKE.wait()")
    # AND py-bt shows the same line under the same frame
    bt, _ = harness.run_gdb_marked("thread apply all pyhang-py-bt", pid=s.pid)
    bt_lines = bt.splitlines()
    at = next(i for i, line in enumerate(bt_lines) if header in line)
    assert bt_lines[at + 1] == "    état_réveil = WAKE.wait()"


def test_the_command_line_without_stopping_and_a_replayed_snapshot_give_the_same_lines(scenario, tmp_path):
    s = start(scenario, ("/usr/bin/python3.11", {}))
    # WHEN the process is read without stopping it
    status, out, err = harness.pyhang_cli("report", "--json", "--no-stop", "-p", s.pid)
    assert status in (0, 4, 5), err
    check_frames(harness.validated_report(json.loads(out)), s.truth, lambda path: True, "no-stop")
    # AND a snapshot gdb saved, replayed with no target, has them too
    path = tmp_path / "snapshot.json"
    harness.run_gdb(["pyhang snapshot %s" % path], pid=s.pid)
    status, out, err = harness.pyhang_cli("report", "--snapshot", path, "--json")
    assert status in (0, 4, 5), err
    check_frames(json.loads(out), s.truth, lambda path: True, "snapshot")
