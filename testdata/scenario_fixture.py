"""The pytest fixture that starts hang scenarios, shared by every test
directory's conftest.py (imported there, so pytest finds it)."""
import pytest

import harness


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
