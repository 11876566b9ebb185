"""`pyhang job` without Slurm: the rank processes of this machine (--local)
and of a list of hosts over a real ssh (--hosts, against Debian's sshd on
loopback, testdata/ssh_server.py), merged: the odd rank and its cause, a
host that cannot be reached named with why and the rest merged.  The job:
three plain processes of testdata/scenarios/local_ranks.py, RANK 0-2 of
WORLD_SIZE 3, the last in a Python deadlock while the others wait for it."""
import json
import os

import pytest

import harness
import ssh_server

PY = "/usr/bin/python3.11"
SCRIPT = os.path.join(harness.SCENARIOS, "local_ranks.py")
WORLD = 3
MERGE_SCHEMA = os.path.join(harness.ROOT, "docs", "pyhang-merge-1.schema.json")


@pytest.fixture(scope="module")
def ranks():
    started = []
    try:
        for rank in range(WORLD):
            s = harness.Scenario([PY, "-u", SCRIPT], env={"RANK": str(rank), "LOCAL_RANK": str(rank),
                                                          "WORLD_SIZE": str(WORLD)})
            started.append(s.start())
        yield [s.truth for s in started]
    finally:
        for s in started:
            s.stop()


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    why = ssh_server.why_not()
    if why:
        pytest.fail(why)   # the set-up installs it: a missing server is a broken set-up, not a skip
    with ssh_server.SshServer(str(tmp_path_factory.mktemp("sshd")), harness.build_dir()) as server:
        yield server


def _merged(out):
    doc = json.loads(out)
    import jsonschema
    with open(MERGE_SCHEMA) as f:
        jsonschema.validate(doc, json.load(f))
    return doc


def _odd_is_the_deadlocked_rank(doc, truth):
    (odd,) = [c for c in doc["classes"] if c["odd"]]
    assert odd["ranks"] == "rank %d" % (WORLD - 1), odd
    assert [m["pid"] for m in odd["members"]] == [truth[-1]["pid"]], odd
    usual = [c for c in doc["classes"] if not c["odd"]]
    assert [c["ranks"] for c in usual] == ["ranks 0-1"], usual


def test_local_finds_this_machines_ranks_and_names_the_deadlocked_one(ranks):
    status, out, err = harness.pyhang_cli("job", "--local", "--json")
    doc = _merged(out)
    _odd_is_the_deadlocked_rank(doc, ranks)
    assert status == doc["exit_status"] == 3, err
    status, text, err = harness.pyhang_cli("job", "--local")
    answer = text.splitlines()[2]
    assert answer.startswith("rank 2 (") and "PID %d" % ranks[-1]["pid"] in answer, text
    assert "deadlock" in answer and "prefetch" in answer, answer


def test_hosts_over_ssh_merge_the_ranks_and_name_a_host_that_cannot_be_reached(ranks, sshd, tmp_path):
    # GIVEN a host file with this machine's sshd and an address where no sshd listens
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1   # this machine, through sshd\n127.0.0.9\n")
    argv = ["job", "--hosts", str(hosts), "--deadline", "30",
            "--remote-pyhang", os.path.join(harness.ROOT, "python", "bin", "pyhang")]
    for a in sshd.client_args():
        argv.append("--ssh-arg=" + a)   # (=: an argument that starts with a dash)
    status, out, err = harness.pyhang_cli(*argv, "--json")
    doc = _merged(out)
    # THEN the ranks read over ssh are merged as --local merges them, the deadlocked rank odd
    _odd_is_the_deadlocked_rank(doc, ranks)
    nodes = {n["node"]: n for n in doc["nodes"]}
    assert nodes["127.0.0.1"]["complete"] is True and nodes["127.0.0.9"]["complete"] is False, doc["nodes"]
    # AND the host ssh could not reach is named with ssh's own reason; the deadlock found still decides (3)
    assert any("127.0.0.9" in p["file"] + p["problem"] and "Connection refused" in p["problem"] for p in doc["problems"]), \
        (doc["problems"], err)
    assert status == doc["exit_status"] == 3, err
