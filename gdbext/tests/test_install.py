"""`cmake --install` and the Debian package from CPack lay out a pyhang that
works on its own: the installed `pyhang` command reports on a real deadlock,
sourcing the installed pyhang.gdb (by hand, or from the one ~/.gdbinit line
the README gives) loads the installed package and native module, not the
checkout's or the build's."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

import harness

PYTHON = sys.executable  # the Python gdb embeds (ctest runs pytest under it)


def _environment_without_checkout():
    """The environment with nothing that points pyhang at the checkout or
    the build, and with bytecode writing on (as a user's would be)."""
    env = dict(os.environ)
    for name in ("PYHANG_BUILD_DIR", "PYHANG_GDBEXT", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE"):
        env.pop(name, None)
    return env


def _package_field(deb, field):
    return subprocess.run(["dpkg-deb", "-f", deb, field], stdout=subprocess.PIPE, text=True, check=True).stdout.strip()


def _files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


@pytest.fixture(scope="module")
def prefix():
    d = tempfile.mkdtemp(prefix="pyhang-install-")
    try:
        r = subprocess.run(["cmake", "--install", harness.build_dir(), "--prefix", d], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=120)
        assert r.returncode == 0, r.stdout
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def deb():
    """(the .deb CPack makes, the directory it was extracted into: its /usr is DIR/usr)."""
    d = tempfile.mkdtemp(prefix="pyhang-deb-")
    try:
        r = subprocess.run(["cpack", "--config", os.path.join(harness.build_dir(), "CPackConfig.cmake"), "-B",
                            os.path.join(d, "out")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=300)
        assert r.returncode == 0, r.stdout
        (package,) = glob.glob(os.path.join(d, "out", "*.deb"))
        subprocess.run(["dpkg-deb", "-x", package, os.path.join(d, "root")], check=True, timeout=120)
        yield package, os.path.join(d, "root")
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(params=["cmake-install", "deb"])
def installation(request):
    """The root of an installation: a `cmake --install` prefix, or the
    extracted package's /usr."""
    if request.param == "deb":
        return os.path.join(request.getfixturevalue("deb")[1], "usr")
    return request.getfixturevalue("prefix")


def test_the_package_installs_under_usr_depends_on_gdb_and_python3_and_carries_pyhangs_version(deb):
    package, root = deb
    said = subprocess.run([os.path.join(root, "usr", "bin", "pyhang"), "--version"], stdout=subprocess.PIPE,
                          text=True, env=_environment_without_checkout(), timeout=60).stdout.split()
    assert _package_field(package, "Package") == "pyhang"
    assert said[0] == "pyhang" and _package_field(package, "Version") == said[1]
    depends = [d.strip().split()[0] for d in _package_field(package, "Depends").split(",")]
    assert {"gdb", "python3", "libpython%d.%d" % sys.version_info[:2]} <= set(depends), depends
    assert os.listdir(root) == ["usr"]
    # the native module is stripped for the package
    (module,) = glob.glob(os.path.join(root, "usr", "share", "pyhang", "python", "_pyhang_native*.so"))
    sections = subprocess.run(["readelf", "-S", module], stdout=subprocess.PIPE, text=True).stdout
    assert ".debug_info" not in sections and ".symtab" not in sections


def test_install_lays_out_the_command_the_gdb_extension_the_package_and_the_docs(installation):
    prefix = installation
    assert os.access(os.path.join(prefix, "bin", "pyhang"), os.X_OK)
    share = os.path.join(prefix, "share", "pyhang")
    for path in ("gdbext/pyhang.gdb", "gdbext/load_pyhang.py", "gdbext/pyhang_gdb/__init__.py",
                 "gdbext/pyhang_gdb/commands/__init__.py", "python/pyhang/__init__.py", "python/pyhang/cli.py",
                 "python/pyhang/model/report.py", "python/pyhang/analysis/report.py"):
        assert os.path.isfile(os.path.join(share, path)), path
    assert glob.glob(os.path.join(share, "python", "_pyhang_native*.so"))
    for doc in ("json-contract.md", "pyhang-report-1.schema.json"):
        assert os.path.isfile(os.path.join(prefix, "share", "doc", "pyhang", doc)), doc
    # byte-compiled for gdb's Python, as the build staged it
    tag = sys.implementation.cache_tag
    assert os.path.isfile(os.path.join(share, "python", "pyhang", "model", "__pycache__", "report.%s.pyc" % tag))
    assert os.path.isfile(os.path.join(share, "gdbext", "pyhang_gdb", "commands", "__pycache__",
                                       "report.%s.pyc" % tag))


def test_installed_pyhang_reports_a_real_deadlock_as_the_scenario_recorded_it(installation, scenario):
    prefix = installation
    # GIVEN two Python threads deadlocked on two RLocks (which record their owners)
    s = scenario([PYTHON, "-u", os.path.join(harness.SCENARIOS, "lock_abba.py"), "RLock"])
    a = next(t["tid"] for t in s.truth["threads"] if t["role"] == "holds-a-wants-b")
    b = next(t["tid"] for t in s.truth["threads"] if t["role"] == "holds-b-wants-a")
    before = _files(prefix)
    # WHEN the installed command reports on it, away from the checkout
    r = subprocess.run([os.path.join(prefix, "bin", "pyhang"), "report", "--json", "-p", str(s.pid)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300,
                       env=_environment_without_checkout(), cwd=prefix)
    assert r.returncode == 3, r.stderr  # the report was made and found a deadlock
    report = harness.validated_report(json.loads(r.stdout))
    # THEN the document is the scenario's: its process, its threads, its one certain cycle
    assert report["target"]["kind"] == "live" and report["target"]["pid"] == s.pid
    assert report["target"]["python_version"] == s.truth["python"]
    assert {a, b} <= {t["tid"] for t in report["threads"]}
    assert len(report["deadlocks"]) == 1, report["deadlocks"]
    d = report["deadlocks"][0]
    assert sorted(d["threads"]) == sorted([a, b]) and d["confidence"] == "certain"
    edges = {(e["waiter"], e["owner"]): e for e in d["edges"]}
    assert edges[(a, b)]["kind"] == "py-rlock" and edges[(a, b)]["address"] == s.truth["b"]
    assert edges[(b, a)]["kind"] == "py-rlock" and edges[(b, a)]["address"] == s.truth["a"]
    # AND the installed bytecode was used as it is: nothing was written into the installation
    assert _files(prefix) == before


@pytest.mark.parametrize("how", ["source", "gdbinit"])
def test_sourcing_the_installed_pyhang_gdb_loads_the_installed_modules(installation, how, tmp_path):
    prefix = installation
    gdbext = os.path.join(prefix, "share", "pyhang", "gdbext", "pyhang.gdb")
    if how == "source":
        argv = ["gdb", "-nx", "-batch", "-ex", "source " + gdbext]
        env = _environment_without_checkout()
    else:  # the README's one line in ~/.gdbinit: every gdb session has the commands
        (tmp_path / ".gdbinit").write_text("source %s\n" % gdbext)
        argv = ["gdb", "-batch"]
        env = dict(_environment_without_checkout(), HOME=str(tmp_path))
    r = subprocess.run(argv + ["-ex", "pyhang version",
                        "-ex", "python import pyhang, pyhang_gdb, _pyhang_native; "
                               "print('FROM', pyhang.__file__, pyhang_gdb.__file__, _pyhang_native.__file__)"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120,
                       env=env, cwd=prefix)
    assert "could not load" not in r.stdout and "native module" in r.stdout, r.stdout
    line = next((l for l in r.stdout.splitlines() if l.startswith("FROM ")), None)
    assert line is not None, r.stdout
    share = os.path.realpath(os.path.join(prefix, "share", "pyhang"))
    for path in line.split()[1:]:
        assert os.path.realpath(path).startswith(share + os.sep), (path, r.stdout)


def test_an_installed_module_for_another_python_says_so_and_how_to_install_again_not_a_checkouts_script(prefix,
                                                                                                     tmp_path):
    # GIVEN an installed tree (relocatable: copied) whose native module was built for another Python
    tree = str(tmp_path / "inst")
    shutil.copytree(prefix, tree, symlinks=True)
    (module,) = glob.glob(os.path.join(tree, "share", "pyhang", "python", "_pyhang_native*.so"))
    os.rename(module, os.path.join(os.path.dirname(module), "_pyhang_native.cpython-39-x86_64-linux-gnu.so"))
    env = _environment_without_checkout()
    # WHEN gdb sources its pyhang.gdb, and its command line is run
    gdb_out = subprocess.run(["gdb", "-nx", "-batch", "-ex", "source " + os.path.join(
        tree, "share", "pyhang", "gdbext", "pyhang.gdb")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, timeout=120, env=env, cwd=tree).stdout
    cli = subprocess.run([os.path.join(tree, "bin", "pyhang"), "report", "--no-stop", "-p", str(os.getpid())],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120, env=env, cwd=tree)
    # THEN each says in one line that the installation's module is for another Python, and to build and install
    # again, naming no script an installation does not have
    said = [l for l in gdb_out.splitlines() if l.startswith("pyhang:")]
    assert len(said) == 1, gdb_out
    assert cli.returncode == 1 and cli.stderr.splitlines()[0].startswith("pyhang: "), cli.stderr
    for line in (said[0], cli.stderr.splitlines()[0]):
        assert "_pyhang_native.cpython-39-x86_64-linux-gnu.so was built for another Python" in line, line
        assert "cmake --install build --prefix %s" % tree in line, line
        assert "demo.sh" not in line and "setup.sh" not in line and "run-tests.sh" not in line, line


def test_install_lays_out_the_manual_page_and_the_bash_completion_and_they_work(installation):
    # GIVEN the installed manual page and completion
    man = os.path.join(installation, "share", "man", "man1", "pyhang.1")
    completion = os.path.join(installation, "share", "bash-completion", "completions", "pyhang")
    assert os.path.isfile(man) and os.path.isfile(completion)
    # THEN man renders the page, and bash, given the completion, completes pyhang's commands
    page = subprocess.run(["man", "-l", man], stdout=subprocess.PIPE, text=True, timeout=60,
                          env=dict(os.environ, MANWIDTH="100")).stdout
    assert "pyhang - why is this Python program stuck?" in re.sub(".\b", "", page), page[:400]
    said = subprocess.run(["bash", "--norc", "-c", "source %s; COMP_WORDS=(pyhang rep); COMP_CWORD=1; _pyhang; "
                                                   "echo ${COMPREPLY[@]}" % completion],
                          stdout=subprocess.PIPE, text=True, timeout=60).stdout.split()
    assert said == ["report"]


def test_a_plain_configure_builds_for_the_python_gdb_embeds_not_the_first_python3_on_the_path(tmp_path):
    # GIVEN a PATH whose first python3 is another version than the one gdb embeds (pyenv's, say)
    other = next((p for p in sorted(glob.glob("/root/.pyenv/versions/3.1[02]*/bin/python3")) +
                  ["/usr/bin/python3.13", "/usr/bin/python3.12"] if os.path.exists(p)), None)
    if other is None:
        pytest.skip("no Python of another version than gdb's on this machine")
    (tmp_path / "bin").mkdir()
    os.symlink(other, str(tmp_path / "bin" / "python3"))
    # WHEN cmake configures the checkout, told nothing of gdb's Python
    r = subprocess.run(["cmake", "-S", harness.ROOT, "-B", str(tmp_path / "build"), "-DPYHANG_TESTS=OFF"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
                       env=dict(os.environ, PATH="%s:%s" % (tmp_path / "bin", os.environ["PATH"])))
    assert r.returncode == 0, r.stdout
    # THEN it asked gdb, says so, and builds for the Python gdb embeds (this test runs under it)
    cache = (tmp_path / "build" / "CMakeCache.txt").read_text()
    chosen = re.search(r"^Python_EXECUTABLE:\w+=(.*)$", cache, re.M) or re.search(
        r"^PYHANG_GDB_PYTHON:\w+=(.*)$", cache, re.M)
    assert os.path.realpath(chosen.group(1)) == os.path.realpath(PYTHON), (chosen.group(1), r.stdout)
    assert "embeds Python %d.%d: building for" % sys.version_info[:2] in r.stdout, r.stdout
