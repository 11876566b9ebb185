import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "testdata"))

import harness  # noqa: E402


def pytest_report_header(config):
    return "pyhang build dir: %s; interpreters: %s" % (
        harness.build_dir(), ", ".join(n for n, _ in harness.interpreters()))


@pytest.fixture
def scenario():
    """Start scenarios inside a test; every one is killed at the end."""
    started = []

    def start(argv, **kw):
        s = harness.Scenario(argv, **kw).start()
        started.append(s)
        return s
    yield start
    for s in started:
        s.stop()
