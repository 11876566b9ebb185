"""`pyhang merge` and `pyhang report --snapshot` need no compiled module:
they run as `python -m pyhang` with only python/ on the path, under the
Python 3 gdb embeds and under another Python 3 (pyenv's, when installed),
and give the report gdb printed for the same snapshot.  A build directory
whose `_pyhang_native` fails on import is named by PYHANG_BUILD_DIR, so
that a path that still loaded the module would fail, not pass by luck."""
import glob
import json
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASE = os.path.join(ROOT, "testdata", "snapshots", "driver_rwlock_read.json")   # a likely deadlock
REPORTS = sorted(glob.glob(os.path.join(ROOT, "testdata", "reports", "*.json")))


def _pythons():
    found = ["/usr/bin/python3.11"]
    try:
        pyenv = subprocess.run(["pyenv", "root"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        pyenv = ""
    found += sorted(glob.glob(os.path.join(pyenv, "versions", "3.8*", "bin", "python3")))[:1] if pyenv else []
    return found


@pytest.fixture(params=_pythons())
def pyhang(request, tmp_path):
    """Runs `python -m pyhang ARGS` in tmp_path: (exit status, stdout, stderr)."""
    if not os.access(request.param, os.X_OK):
        pytest.skip("no %s" % request.param)
    build = tmp_path / "build"
    (build / "python").mkdir(parents=True)
    (build / "python" / "_pyhang_native.py").write_text(
        "raise RuntimeError('the native module was imported')\n")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": os.path.join(ROOT, "python"),
           "PYHANG_BUILD_DIR": str(build), "PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.UTF-8"}

    def run(*args):
        r = subprocess.run([request.param, "-s", "-m", "pyhang"] + [str(a) for a in args], cwd=str(tmp_path),
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        return r.returncode, r.stdout, r.stderr
    return run


def _recorded():
    with open(CASE) as f:
        return json.load(f)


def test_a_saved_snapshot_gives_the_report_gdb_printed_without_the_native_module(pyhang, tmp_path):
    doc = _recorded()
    snapshot = tmp_path / "hang.json"
    snapshot.write_text(json.dumps(doc["snapshot"]))
    status, out, err = pyhang("report", "--snapshot", snapshot, "--json")
    assert (status, err) == (3, "")   # 3: a deadlock was found
    got, expected = json.loads(out), dict(doc["report"])
    got.pop("pyhang_version"), expected.pop("pyhang_version")
    assert got == expected
    status, text, err = pyhang("report", "--snapshot", snapshot)
    (guess,) = [e for e in expected["edges"] if e["source"] == "heuristic"]
    assert (status, err) == (3, "") and "likely holder, not recorded by the lock: %s" % guess["evidence"] in text


def test_reports_are_merged_without_the_native_module(pyhang, tmp_path):
    ours = tmp_path / "driver.json"
    ours.write_text(json.dumps(_recorded()["report"]))
    status, out, err = pyhang("merge", "--json", ours, *REPORTS)
    # (the exit status is the worst of the reports': the driver deadlock's)
    assert (status, err) == (3, "")
    doc = json.loads(out)
    assert doc["processes"] == 1 + len(REPORTS) and sum(g["size"] for g in doc["groups"]) == doc["processes"]
    assert doc["exit_status"] == 3
    status, text, err = pyhang("merge", ours, *REPORTS)
    assert (status, err) == (3, "") and str(ours) in text
