"""`source gdbext/pyhang.gdb` loads the native module built for gdb's Python
and registers the commands; when it cannot, it says what to do in one line."""
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile

import harness

ALIVE = "@@GDB-STILL-RUNNING@@"


def test_source_registers_the_commands():
    out = harness.run_gdb(["help pyhang", "pyhang version"])
    assert "pyhang report" in out
    assert "native module" in out


def test_missing_module_is_one_line_with_the_fix():
    empty = tempfile.mkdtemp()
    try:
        out = harness.run_gdb(["echo %s\\n" % ALIVE], env={"PYHANG_BUILD_DIR": empty})
    finally:
        shutil.rmtree(empty)
    lines = [l for l in out.splitlines() if l.startswith("pyhang:")]
    assert len(lines) == 1 and "not built" in lines[0] and "demo.sh" in lines[0], out
    assert "Traceback" not in out and ALIVE in out


def test_module_for_another_python_is_one_line_with_the_fix():
    # GIVEN a build directory holding the module under another ABI's name
    build = tempfile.mkdtemp()
    try:
        os.makedirs(os.path.join(build, "python"))
        real = os.path.join(harness.build_dir(), "python",
                            "_pyhang_native" + sysconfig.get_config_var("EXT_SUFFIX"))
        shutil.copy(real, os.path.join(build, "python", "_pyhang_native.cpython-39-x86_64-linux-gnu.so"))
        out = harness.run_gdb(["echo %s\\n" % ALIVE], env={"PYHANG_BUILD_DIR": build})
    finally:
        shutil.rmtree(build)
    lines = [l for l in out.splitlines() if l.startswith("pyhang:")]
    assert len(lines) == 1 and "another Python" in lines[0], out
    assert "Traceback" not in out and ALIVE in out


def test_sourcing_from_a_python_script_registers_the_commands():
    # gdb sets __file__ only for the outermost sourced script: a .gdbinit-style
    # Python script that sources pyhang.gdb must still load pyhang.
    d = tempfile.mkdtemp()
    try:
        script = os.path.join(d, "setup_debugging.py")
        with open(script, "w") as f:
            f.write("import gdb\ngdb.execute('source %s')\n" % harness.GDBEXT)
        r = subprocess.run(["gdb", "-nx", "-batch", "-ex", "source " + script, "-ex", "pyhang version"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    finally:
        shutil.rmtree(d)
    assert "native module" in r.stdout and "could not load" not in r.stdout, r.stdout


def test_show_pyhang_says_each_setting_as_gdb_says_its_own_switches_on_or_off():
    # WHEN each setting is shown on its own and in the list, before and after `set`
    names = ("unwinder", "reader", "native-depth", "frame-filter")
    shown = ["show pyhang " + n for n in names]
    out = harness.run_gdb(["echo @@1\\n", "show pyhang"] + shown +
                          ["echo @@2\\n", "set pyhang frame-filter off", "set pyhang native-depth 3", "show pyhang"] +
                          shown + ["echo @@3\\n"])
    before, after = (out.split("@@%d\n" % i, 1)[1].split("@@%d\n" % (i + 1), 1)[0].splitlines() for i in (1, 2))
    # THEN `show pyhang NAME` says what `show pyhang` lists for it, word for word
    assert before[:4] == before[4:] and after[:4] == after[4:], (before, after)
    # AND the switch says on and off, as gdb's own do (never Python's True or False)
    assert "Python frames in backtraces is on." in before and "Python frames in backtraces is off." in after
    assert not any("True" in l or "False" in l for l in before + after), before + after
    assert "Native frames per thread is 0 (automatic" in before[2] and after[2] == "Native frames per thread is 3."


# The commands a user types, as `help pyhang` must name them (pyhang_gdb/commands registers them).
USER_COMMANDS = ("pyhang report", "pyhang snapshot", "pyhang gcore", "pyhang version", "py-bt", "pyhang-py-bt", "py-bt-full",
                 "py-locals", "py-print", "py-list", "py-up", "py-down", "gil-holder", "lock-owner", "py-tasks",
                 "fork-hazards")


def test_help_pyhang_names_every_user_command_and_no_internal_one_which_still_runs():
    # GIVEN the commands gdb knows once pyhang is loaded
    out = harness.run_gdb(["echo @@1\\n", "help pyhang", "echo @@2\\n"] + ["help " + c for c in USER_COMMANDS] +
                          ["echo @@3\\n", "pyhang lock-objects", "pyhang serve-facts", "pyhang frobnicate"])
    help_text = out.split("@@1\n", 1)[1].split("@@2\n", 1)[0]
    # THEN `help pyhang` names each user command, each of which gdb has
    assert "Undefined command" not in out.split("@@2\n", 1)[1].split("@@3\n", 1)[0], out
    words = set(re.findall(r"[\w-]+(?: [\w-]+)?", help_text)) | set(re.findall(r"[\w-]+", help_text))
    assert all(c in words for c in USER_COMMANDS), [c for c in USER_COMMANDS if c not in words]
    # AND not what only pyhang itself asks (the command line, --tree) ...
    assert "lock-objects" not in help_text and "serve-facts" not in help_text, help_text
    # ... which still runs: its own argument errors, not an unknown command
    tail = out.split("@@3\n", 1)[1]
    assert "pyhang: pyhang lock-objects: the following arguments are required" in tail, tail
    assert "pyhang: pyhang serve-facts: the following arguments are required" in tail, tail
    assert "pyhang: pyhang: no subcommand 'frobnicate' (help pyhang lists them)" in tail, tail


def test_pyhang_report_completes_its_options_from_the_one_table():
    sys.path.insert(0, os.path.join(harness.ROOT, "python"))
    from pyhang import options
    out = harness.run_gdb(["echo @@1\\n", "complete pyhang report --", "echo @@2\\n", "complete pyhang report --js",
                           "echo @@3\\n", "complete pyhang report --json --n", "echo @@4\\n"])
    part = lambda i: out.split("@@%d\n" % i, 1)[1].split("@@%d\n" % (i + 1), 1)[0].splitlines()
    assert sorted(part(1)) == sorted("pyhang report " + f for f in options.report_flags()), part(1)
    assert part(2) == ["pyhang report --json"] and part(3) == ["pyhang report --json --native-depth"], out


def test_a_failing_command_is_a_gdb_error_of_one_line_and_under_thread_apply_the_other_threads_still_run(scenario):
    s = scenario(["/usr/bin/python3.11", "-u", os.path.join(harness.SCENARIOS, "lock_abba.py")])
    # GIVEN a pyhang command that fails (its argument is wrong), last in a batch gdb
    r = subprocess.run(harness.gdb_command(["pyhang report --native-depth nope"], pid=s.pid),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    # THEN gdb says why in one line on its error stream, no traceback, and exits non-zero
    said = [l for l in r.stderr.splitlines() if l.startswith("pyhang: ")]
    assert len(said) == 1 and "native-depth" in said[0] and "Traceback" not in r.stderr + r.stdout, r.stderr
    assert r.returncode != 0
    # AND under thread apply all, a failure of one thread's command ends no other thread's
    out = harness.run_gdb(["thread apply all lock-owner --no-such-option"], pid=s.pid)
    threads = len(os.listdir("/proc/%d/task" % s.pid))
    assert len([l for l in out.splitlines() if l.startswith("pyhang: lock-owner")]) == threads, out
