"""A real gunicorn (Debian's python3-gunicorn) run with --preload whose
application module starts a thread at import that holds the module's global
lock MODEL_LOCK: the worker, forked from the arbiter, inherits it locked and
its request handler blocks on it for ever.  pyhang names the lock by its
module global, `app.MODEL_LOCK`, under gunicorn's hundreds of imports, and
gives gunicorn's advice (no threads or locks at import with --preload; a
post_fork hook), not multiprocessing's spawn: in the worker's own report,
live and from a core, and in the tree of the arbiter, which names the
arbiter's thread that holds the lock.  Debian's 3.11 and pyenv's 3.10 (the
Debian package imported through PYTHONPATH: gunicorn is pure Python, and
needs pkg_resources, which pyenv's 3.12 and 3.13 lack)."""
import json
import os

import pytest

import harness

GUNICORN = "/usr/lib/python3/dist-packages/gunicorn"
APP = os.path.join(harness.SCENARIOS, "gunicorn_app")
pytestmark = pytest.mark.skipif(not os.path.isdir(GUNICORN), reason="python3-gunicorn is not installed")


def params():
    found = dict(harness.interpreters(today=False))
    names = ["debian-3.11"] + [n for n in sorted(found) if n.startswith("pyenv-3.10")]
    return [pytest.param(found[n], id=n) for n in names if n in found]


@pytest.fixture(scope="module", params=params())
def server(request, tmp_path_factory):
    exe, env = harness.stripped_interpreter(request.param)
    path = [APP]
    if exe != "/usr/bin/python3.11":   # only gunicorn of Debian's packages, not all of dist-packages
        packages = tmp_path_factory.mktemp("gunicorn-path")
        os.symlink(GUNICORN, str(packages / "gunicorn"))
        path.append(str(packages))
    env = dict(env or {}, PYTHONPATH=":".join(path))
    s = harness.Scenario([exe, "-u", "-m", "gunicorn", "--preload", "-w", "1", "--timeout", "3600",
                          "-b", "unix:gunicorn.sock", "app:application"], env=env)
    s.start()
    s.exe = exe
    yield s
    s.stop()


def check_worker(where, doc, truth):
    worker = truth["worker"]
    b = {t["tid"]: t for t in doc["threads"]}[worker["tid"]]["blocked_on"]
    assert (b["kind"], b["address"], b["name"]) == ("py-lock", truth["lock"], "app.MODEL_LOCK"), (where, b)
    (h,) = [h for h in doc["fork_hazards"] if h["kind"] == "orphaned-lock"]
    assert h["threads"] == [worker["tid"]] and h["confidence"] == "likely", (where, h)
    assert "threading.Lock 0x%x (app.MODEL_LOCK)" % truth["lock"] in h["evidence"], (where, h)
    assert "--preload" in h["advice"] and "post_fork" in h["advice"] and "spawn" not in h["advice"], (where, h)
    threads_at_fork = [h for h in doc["fork_hazards"] if h["kind"] == "threads-at-fork"]
    assert all("post_fork" in h["advice"] and "spawn" not in h["advice"] for h in threads_at_fork), where
    assert doc["exit_status"] == 5, where


def test_a_preloaded_lock_held_at_fork_is_named_with_gunicorns_advice_in_the_worker(server):
    t = server.truth
    for where, target in (("live", ["-p", t["worker"]["pid"]]),
                          ("core", [harness.gcore(t["worker"]["pid"], server.tmp), server.exe])):
        status, out, err = harness.pyhang_cli("report", "--json", *target)
        doc = harness.validated_report(json.loads(out))
        check_worker(where, doc, t)
        assert status == 5, (where, err)
    _, text, _ = harness.pyhang_cli("report", "-p", t["worker"]["pid"])
    assert "app.MODEL_LOCK" in text and "post_fork" in text and "get_context('spawn')" not in text, text


def test_the_arbiters_tree_names_its_thread_holding_the_lock_and_gives_gunicorns_advice(server):
    t = server.truth
    holder = harness.role_tid(server, "holds-lock")
    status, out, err = harness.pyhang_cli("report", "--tree", "--json", "-p", t["arbiter"])
    doc = harness.validated_tree(json.loads(out))
    (h,) = [h for h in doc["fork_hazards"] if h["kind"] == "orphaned-lock"]
    assert h["processes"] == [t["worker"]["pid"], t["arbiter"]], h
    assert [r["tid"] for r in h["parent_references"]] == [holder], h
    assert "post_fork" in h["advice"] and "spawn" not in h["advice"], h
    assert status == doc["exit_status"] == 5, err
    _, text, _ = harness.pyhang_cli("report", "--tree", "-p", t["arbiter"])
    assert "get_context('spawn')" not in text and "post_fork" in text, text
