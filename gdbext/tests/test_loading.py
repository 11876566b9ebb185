"""`source gdbext/pyhang.gdb` loads the native module built for gdb's Python
and registers the commands; when it cannot, it says what to do in one line."""
import os
import shutil
import subprocess
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
