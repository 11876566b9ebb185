"""docs/pyhang-report-1.schema.json holds pyhang-report/1 to its contract
(docs/json-contract.md): it accepts real reports and what the contract lets
grow, and rejects documents that break what is fixed.  No gdb here: the
reports are ones recorded from real scenario runs (testdata/reports)."""
import copy
import glob
import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "testdata"))
import harness  # noqa: E402

RECORDED = sorted(glob.glob(os.path.join(ROOT, "testdata", "reports", "*.json")))


def recorded(name):
    with open(os.path.join(ROOT, "testdata", "reports", name)) as f:
        return json.load(f)


@pytest.fixture
def report():
    """A real report with a deadlock, blocked threads, edges and the GIL held."""
    return copy.deepcopy(recorded("lock_abba_rlock.json"))


def blocked(doc):
    return next(t for t in doc["threads"] if t["blocked_on"] is not None)


def errors(doc):
    return harness.report_errors(doc)


def test_the_schema_is_a_valid_json_schema():
    import jsonschema
    with open(harness.REPORT_SCHEMA) as f:
        schema = json.load(f)
    jsonschema.validators.validator_for(schema).check_schema(schema)


@pytest.mark.parametrize("path", RECORDED, ids=[os.path.basename(p) for p in RECORDED])
def test_reports_recorded_from_real_scenarios_are_valid(path):
    with open(path) as f:
        doc = json.load(f)
    assert errors(doc) == []
    assert doc["threads"] and any(t["blocked_on"] for t in doc["threads"])


def test_the_recorded_reports_cover_the_python_lock_kinds_and_a_deadlock():
    docs = [json.load(open(p)) for p in RECORDED]
    kinds = {t["blocked_on"]["kind"] for d in docs for t in d["threads"] if t["blocked_on"]}
    assert {"py-lock", "py-rlock", "py-condition"} <= kinds
    assert any(d["deadlocks"] for d in docs)


def test_a_document_without_threads_is_rejected(report):
    del report["threads"]
    assert errors(report) == ["(document): 'threads' is a required property"]


@pytest.mark.parametrize("key", ["schema", "target", "gil", "deadlocks", "edges", "fork_hazards", "verdicts",
                                 "warnings"])
def test_a_document_missing_any_top_level_key_is_rejected(report, key):
    del report[key]
    assert errors(report) == ["(document): %r is a required property" % key]


def test_another_schema_name_is_rejected(report):
    report["schema"] = "pyhang-report/2"
    assert any(e.startswith("schema:") for e in errors(report))


@pytest.mark.parametrize("value", ["maybe", "HOLDS", "", None])
def test_a_gil_state_outside_the_five_is_rejected(report, value):
    report["threads"][0]["gil"] = value
    assert [e.split(":")[0] for e in errors(report)] == ["threads/0/gil"]


def test_owners_that_are_not_integers_are_rejected(report):
    t = blocked(report)
    t["blocked_on"]["owners"] = [str(o) for o in t["blocked_on"]["owners"]] or ["1234"]
    i = report["threads"].index(t)
    assert errors(report) and all(e.startswith("threads/%d/blocked_on" % i) for e in errors(report))


def test_a_tid_of_zero_or_less_is_rejected(report):
    report["threads"][0]["tid"] = 0
    assert [e.split(":")[0] for e in errors(report)] == ["threads/0/tid"]


@pytest.mark.parametrize("where", ["blocked_on", "deadlock", "hazard"])
def test_a_confidence_outside_certain_likely_guess_is_rejected(report, where):
    if where == "blocked_on":
        blocked(report)["blocked_on"]["confidence"] = "sure"
    elif where == "deadlock":
        report["deadlocks"][0]["confidence"] = "sure"
    else:
        report["fork_hazards"] = [{"kind": "orphaned-lock", "threads": [], "evidence": "e", "advice": "a",
                                   "confidence": "sure"}]
    assert errors(report)


def test_an_owner_source_outside_the_contract_is_rejected(report):
    report["edges"][0]["source"] = "lock word"
    assert [e.split(":")[0] for e in errors(report)] == ["edges/0/source"]


def test_a_blocked_on_without_owner_source_is_rejected(report):
    t = blocked(report)
    del t["blocked_on"]["owner_source"]
    assert errors(report)


def test_null_where_the_contract_promises_a_list_is_rejected(report):
    report["edges"] = None
    report["threads"][0]["python_frames"] = None
    assert {e.split(":")[0] for e in errors(report)} == {"edges", "threads/0/python_frames"}


def test_a_native_frame_without_a_pc_is_rejected(report):
    del report["threads"][0]["native_frames"][0]["pc"]
    assert [e.split(":")[0] for e in errors(report)] == ["threads/0/native_frames/0"]


def test_keys_the_contract_does_not_list_yet_are_accepted(report):
    # keys may be added at every level, never renamed
    report["added"] = {"anything": 1}
    report["target"]["added"] = True
    report["threads"][0]["added"] = []
    report["threads"][0]["native_frames"][0]["added"] = "x"
    blocked(report)["blocked_on"]["added"] = None
    report["deadlocks"][0]["edges"][0]["added"] = 3
    assert errors(report) == []


def test_new_kinds_are_accepted_when_they_are_hyphenated_lower_case_words(report):
    blocked(report)["blocked_on"]["kind"] = "py-semaphore"
    report["edges"][0]["kind"] = "spinlock2"
    report["verdicts"].append({"kind": "io-wait-forever", "threads": [report["threads"][0]["tid"]], "text": "t"})
    report["fork_hazards"].append({"kind": "mpi-after-fork", "threads": [], "evidence": "e", "advice": "a",
                                   "confidence": "likely"})
    report["target"]["kind"] = "remote"
    assert errors(report) == []


@pytest.mark.parametrize("kind", ["", "Mutex", "rw lock", "-mutex", "mutex-", "py_lock", 7, None])
def test_kinds_that_are_not_hyphenated_lower_case_words_are_rejected(report, kind):
    blocked(report)["blocked_on"]["kind"] = kind
    assert errors(report)


def test_a_broken_report_fails_the_test_with_the_key_that_breaks_the_contract(report):
    report["threads"][0]["gil"] = "maybe"
    with pytest.raises(AssertionError) as exc:
        harness.validated_report(report)
    assert "docs/pyhang-report-1.schema.json" in str(exc.value)
    assert "threads/0/gil: 'maybe' is not one of" in str(exc.value)
