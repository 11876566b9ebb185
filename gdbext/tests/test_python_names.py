"""A lock no global of __main__ refers to is named by the variable of the
program that reaches it: an attribute of an instance a frame's local refers
to (`self._lock of Cache at 0x…`), a global of another module
(`py_names_module.LOCK`), an attribute of an instance such a global refers
to (`py_names_module.REGISTRY._lock`).  On every version, live and from
the core."""
import os

import pytest

import harness


@pytest.mark.parametrize("python", harness.interpreter_params())
def test_locks_reached_through_instances_and_other_modules_are_named_by_that_path(scenario, python):
    # GIVEN threads waiting for Locks held by others: CACHE._lock (both in Cache methods),
    # py_names_module.LOCK, and py_names_module.REGISTRY._lock (no frame refers to REGISTRY)
    exe, env = harness.stripped_interpreter(python)
    s = scenario([exe, "-u", os.path.join(harness.SCENARIOS, "py_names.py")], env=env)
    t = s.truth
    expected = {"cache-waiter": (t["cache_lock"], "self._lock of Cache at 0x%x" % t["cache"]),
                "module-waiter": (t["module_lock"], "py_names_module.LOCK"),
                "registry-waiter": (t["registry_lock"], "py_names_module.REGISTRY._lock")}
    for where, report in (("live", harness.report_json(pid=s.pid)),
                          ("core", harness.report_json(executable=exe, core=s.gcore()))):
        threads = {x["tid"]: x for x in report["threads"]}
        for waiter, (lock, name) in expected.items():
            b = threads[harness.role_tid(s, waiter)]["blocked_on"]
            # THEN the lock waited for is named by the path that reaches it, in JSON and in the detail line
            assert b["kind"] == "py-lock" and b["address"] == lock, (where, waiter, b)
            assert b["name"] == name, (where, waiter, b)
            assert b["detail"].startswith("waits to acquire threading.Lock 0x%x (%s): " % (lock, name)), \
                (where, b["detail"])
            # AND its likely holder is the thread inside `with` on it
            holder = harness.role_tid(s, waiter.replace("waiter", "holder"))
            (e,) = [e for e in report["edges"] if e["waiter"] == harness.role_tid(s, waiter)]
            assert e["owner"] == holder and e["source"] == "heuristic", (where, waiter, e)
