"""The `pyhang` command line runs gdb for the user and prints only pyhang's answer."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "testdata"))
import harness  # noqa: E402

CLI = os.path.join(ROOT, "python", "bin", "pyhang")


def test_cli_report_json_on_a_live_process_and_a_core():
    with harness.Scenario([harness.fixture_path("prog_parked"), "2"]) as s:
        out = subprocess.run([CLI, "report", "--json", "-p", str(s.pid)], stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ, PYHANG_BUILD_DIR=harness.build_dir())).stdout
        report = harness.validated_report(json.loads(out))
        assert {t["tid"] for t in report["threads"]} == {t["tid"] for t in s.truth["threads"]}
        core = s.gcore()
        out = subprocess.run([CLI, "report", "--json", core], stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ, PYHANG_BUILD_DIR=harness.build_dir())).stdout
        assert harness.validated_report(json.loads(out))["target"]["core"] == core


def test_cli_refuses_both_or_neither_target():
    r = subprocess.run([CLI, "report"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert r.returncode != 0 and "give either -p PID or a core file" in r.stderr
