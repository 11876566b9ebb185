"""The records a collector makes of the native module's answers keep every
key the native answer gives: a field the native side adds cannot be dropped
silently on its way to the analysis.  Asked of a live asyncio scenario with
threads (testdata/scenarios/asyncio_tasks.py), read without stopping it."""
import json
import os

import pytest

import harness
from pyhang.model.record import from_data, to_data
from pyhang.model.threading_facts import ThreadingState
from pyhang.nostop import NoStopFacts

PY = "/usr/bin/python3.11"


@pytest.fixture(scope="module")
def facts():
    s = harness.Scenario([PY, "-u", os.path.join(harness.SCENARIOS, "asyncio_tasks.py")]).start()
    try:
        yield NoStopFacts(s.pid)
    finally:
        s.stop()


def plain(data):
    return json.loads(json.dumps(data))


def assert_kept(cls, raw):
    """The record of `raw` gives back every key and value of it."""
    assert raw, "the native answer is empty: nothing was checked"
    assert plain(to_data(from_data(cls, raw))) == plain(raw)


def test_threading_state_keeps_every_key_of_the_native_answer(facts):
    raw = facts.python_locks_decoder().threading()
    assert len(raw["threads"]) >= 3
    assert_kept(ThreadingState, raw)
    assert facts.threading() == from_data(ThreadingState, raw)
