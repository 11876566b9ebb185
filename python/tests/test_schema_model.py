"""The report's JSON Schema (docs/pyhang-report-1.schema.json) and the model's
records (pyhang.model.report) agree field by field: every field of a record
the JSON carries is in the schema's object for it, every property of that
object is a field of the record, and each difference is listed here with
its reason.  A field added on one side only fails until the other side (or
this list, with a reason) says so."""
import json
import os

from pyhang.model import report as model

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# schema $defs name → (record, {field the JSON leaves out: why}, {JSON property not a field: why})
AGREEMENT = {
    "thread": (model.ThreadReport, {
        "python_at": "pairs native with Python frames; the JSON puts native_frame on each Python frame instead",
        "hidden_interpreters": "3.12's thread states of other interpreters on the thread, worded into `problem`",
        "python_problem": "what of its Python thread state could not be read, worded into `problem`",
    }, {"python_recursion": "render's fold of python_frames (render.recursion)"}),
    "blocked_on": (model.BlockedOn, {
        "glibc": "the decoded glibc lock, worded into `detail`",
        "python": "a Python lock's details, worded into `detail`",
        "api": "a Python-level API's `self` and its attributes, worded into `detail` and `evidence`",
        "join": "a join's Thread names, worded into `detail` and `evidence`",
        "collective": "a torch.distributed collective's rank and backend, worded into `detail` and `evidence`",
        "condvar_mutex": "worded into `detail` (\"it must then reacquire mutex 0x…\")",
        "symbol": "the ELF symbol holding the lock, worded into `detail` (\"(drv_lock in libdriver.so)\")",
        "grpc": "a gRPC client call's method, channel and connection, worded into `detail` and `evidence`",
    }, {
        "detail": "the sentence render.locks words from the record",
    }),
    "python_frame": (model.PythonFrame, {
        "entry_frame": "internal: which frames one evaluation-loop call runs",
        "source_indent": "render's: the text's columns are the source line's",
    }, {"native_frame": "the index of the native frame running it, from ThreadReport.python_at"}),
    "native_frame": (model.NativeFrame, {"from_debug_file": "render's: the text marks such names"}, {}),
    "edge": (model.Edge, {}, {}),
    "thread_deadlock": (model.Deadlock, {
        "kind": "only an await deadlock carries it (the thread kind is the default)",
        "tasks": "an await deadlock's",
    }, {"advice": "render.verdicts' words for the kind of cycle"}),
    "await_deadlock": (model.Deadlock, {"component": "only a thread cycle standing for guessed ones carries it"}, {}),
    "verdict": (model.Verdict, {}, {"text": "the sentence render words", "advice": "render.verdicts' advice"}),
    "fork_hazard": (model.Hazard, {
        "facts": "worded into `evidence`",
        "variant": "which sentence of its kind render words",
    }, {"evidence": "the sentence render words from `facts`", "advice": "render.verdicts' advice"}),
    "gil_summary": (model.GilSummary, {}, {}),
    "target": (model.TargetInfo, {"parent_pid": "the process tree's (pyhang-tree/1 names each process's parent)"}, {}),
    "gc_run": (model.GcRun, {}, {}),
}


def schema_defs():
    with open(os.path.join(ROOT, "docs", "pyhang-report-1.schema.json")) as f:
        return json.load(f)["$defs"]


def test_every_record_field_is_a_schema_property_or_left_out_with_a_reason():
    defs = schema_defs()
    for name, (cls, left_out, _) in AGREEMENT.items():
        properties = set(defs[name]["properties"])
        missing = set(cls.__record_fields__) - properties - set(left_out)
        assert not missing, "%s: fields of %s not in the schema: %s" % (name, cls.__name__, sorted(missing))


def test_every_schema_property_is_a_record_field_or_made_by_render_with_a_reason():
    defs = schema_defs()
    for name, (cls, _, added) in AGREEMENT.items():
        extra = set(defs[name]["properties"]) - set(cls.__record_fields__) - set(added)
        assert not extra, "%s: properties %s is no field of: %s" % (name, cls.__name__, sorted(extra))


def test_the_reasons_name_real_differences():
    # a listed difference that no longer is one is taken out of the list
    defs = schema_defs()
    for name, (cls, left_out, added) in AGREEMENT.items():
        properties, fields = set(defs[name]["properties"]), set(cls.__record_fields__)
        assert not (set(left_out) & properties) and set(left_out) <= fields, name
        assert not (set(added) & fields) and set(added) <= properties, name
