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


# --- a verdict's facts: each kind's record (model.verdict_facts) and its verdict_facts_KIND definition

def _json_types(annotation, never_null):
    """The JSON types a facts field annotated `annotation` takes."""
    base, nullable = annotation.split(" | None")[0], annotation.endswith(" | None")
    # (a variable's path, ObjectPath, is worded in the JSON: render.names.object_name)
    one = {"int": "integer", "str": "string", "bool": "boolean", "float": "number", "dict": "object",
           "ObjectPath": "string", "CodeLine": "object"}.get(base)
    if one is None and base.startswith("list["):
        one = "array"
    return None if base == "object" else {one, "null"} if nullable and not never_null else {one}


# records a verdict's facts hold whose JSON is typed as a plain value, not by a definition of their own
_PLAIN_RECORDS = ("ObjectPath", "CodeLine")


def entry_definition(cls, prefix="verdict_entry_"):
    """The schema's definition of a record a verdict's facts hold (model.verdict_facts: a wait, a worker, ...):
    verdict_entry_ and its class's name in snake case (IdleWait: verdict_entry_idle_wait); of one an edge's
    facts hold (model.edge_facts: a connection, a session, ...), edge_entry_ (`prefix`) and its name."""
    return prefix + "".join("_" + c.lower() if c.isupper() else c for c in cls.__name__).lstrip("_")


def _entry_ref(prop, listed, nullable):
    """The definition a property of an entry record refers to: its items' (`listed`), or its own, or, when it
    may be null, the one of its anyOf that is not null."""
    if listed:
        return prop["items"]["$ref"]
    if nullable:
        assert {"type": "null"} in prop["anyOf"], prop
        return next(c["$ref"] for c in prop["anyOf"] if "$ref" in c)
    return prop["$ref"]


def _agrees(d, cls, what, defs=None, prefix="verdict_entry_"):
    """Facts definition `d` of the schema has the fields of record `cls` in order, the optional ones not
    required, each of the JSON types its annotation says; a field holding records of an entry (`__nested__`:
    a wait, a worker) refers to the entry's own definition of `defs` (named with `prefix`), which agrees
    with it in turn."""
    assert list(d["properties"]) == list(cls.__record_fields__), \
        "%s: the schema's properties differ from the fields of %s" % (what, cls.__name__)
    optional = getattr(cls, "__optional__", {})
    assert set(d["required"]) == set(cls.__record_fields__) - set(optional), what
    nested = getattr(cls, "__nested__", {})
    for field in cls.__record_fields__:
        prop = d["properties"][field]
        annotation = cls.__annotations__[field]
        never_null = getattr(optional.get(field), "while_none", False)
        inner = nested.get(field)
        if defs is not None and inner is not None and inner.__name__ not in _PLAIN_RECORDS:
            ref = _entry_ref(prop, annotation.startswith("list["), annotation.endswith(" | None") and not never_null)
            assert ref == "#/$defs/" + entry_definition(inner, prefix), "%s.%s refers to %s" % (what, field, ref)
            _agrees(defs[entry_definition(inner, prefix)], inner, "%s.%s" % (what, field), defs, prefix)
            continue
        types = _json_types(annotation, never_null)
        if types is None or "$ref" in prop:   # any value, or a definition of its own (kind, text_or_null)
            continue
        got = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
        assert set(got) == types, "%s.%s: %s in the schema, %s in the record" % (what, field, got, types)


def test_each_verdict_kinds_facts_are_its_records_fields_the_optional_ones_not_required():
    from pyhang.model.verdict_facts import FACTS
    defs = schema_defs()
    verdict = defs["verdict"]
    routed = {c["if"]["properties"]["kind"]["const"]: c["then"] for c in verdict["allOf"]}
    assert set(routed) == set(FACTS), "verdict kinds without a facts definition: %s" % sorted(set(FACTS) ^ set(routed))
    for kind, cls in FACTS.items():
        name = "verdict_facts_" + kind.replace("-", "_")
        then = routed[kind]
        ref = (defs[then["$ref"].split("/")[-1]]["properties"]["facts"] if "$ref" in then else
               then["properties"]["facts"])["$ref"]
        assert ref == "#/$defs/" + name, kind
        _agrees(defs[name], cls, kind, defs)


def _entry_definitions(facts, prefix):
    """The definitions of every entry record the facts records `facts` hold, through their __nested__."""
    held, todo = set(), list(facts)
    while todo:
        for inner in getattr(todo.pop(), "__nested__", {}).values():
            if inner.__name__ not in _PLAIN_RECORDS and entry_definition(inner, prefix) not in held:
                held.add(entry_definition(inner, prefix))
                todo.append(inner)
    return held


def test_every_entry_definition_of_a_verdicts_facts_is_one_of_a_record_they_hold():
    # (a definition left behind by a record taken out, or named for none, fails here)
    from pyhang.model.verdict_facts import FACTS
    held = _entry_definitions(FACTS.values(), "verdict_entry_")
    assert {name for name in schema_defs() if name.startswith("verdict_entry_")} == held


# --- an edge's facts: each heuristic's record (model.edge_facts) and its edge_facts_NAME definition

def test_each_edge_heuristics_facts_are_its_records_fields_routed_by_a_key_it_always_has():
    from pyhang.model.edge_facts import FACTS, schema_name
    defs = schema_defs()
    routes = {c["then"]["properties"]["facts"]["$ref"].split("/")[-1]: c["if"]["properties"]["facts"]
              for c in defs["edge"]["allOf"]}
    names = {schema_name(cls): cls for cls in FACTS}
    assert set(routes) == set(names), "edge facts without a definition: %s" % sorted(set(routes) ^ set(names))
    for name, cls in names.items():
        _agrees(defs[name], cls, name, defs, "edge_entry_")
        # the key its edges are told by is one its JSON always carries
        assert set(routes[name]["required"]) <= set(defs[name]["required"]), name
    # and no other record's JSON always carries it, but where the route says not
    for name, route in routes.items():
        for other, cls in names.items():
            always = set(defs[other]["required"])
            excluded = route.get("not", {})
            excluded = [set(c["required"]) for c in excluded.get("anyOf", [excluded] if excluded else [])]
            if other != name and set(route["required"]) <= always:
                assert any(e <= always for e in excluded), "%s's facts are routed to %s too" % (other, name)


def test_every_entry_definition_of_an_edges_facts_is_one_of_a_record_they_hold():
    from pyhang.model.edge_facts import FACTS
    held = _entry_definitions(FACTS, "edge_entry_")
    assert {name for name in schema_defs() if name.startswith("edge_entry_")} == held


# --- a tree edge's facts: each kind's record (model.tree_edge_facts) and its tree_edge_facts_NAME definition
# of docs/pyhang-tree-1.schema.json, its fields beside the edge's own, each left out while None

def test_each_tree_edge_kinds_facts_are_its_records_fields_routed_by_the_edges_kind():
    from pyhang.model.tree_edge_facts import FACTS, schema_name
    with open(os.path.join(ROOT, "docs", "pyhang-tree-1.schema.json")) as f:
        schema = json.load(f)
    defs = schema["$defs"]
    edge = schema["properties"]["deadlocks"]["items"]["properties"]["edges"]["items"]
    routed = [c["then"]["$ref"].split("/")[-1] for c in edge["allOf"]]
    names = {schema_name(cls): cls for cls in FACTS}
    assert sorted(routed) == sorted(names), \
        "tree edge facts without a definition: %s" % sorted(set(routed) ^ set(names))
    for name, cls in names.items():
        d = defs[name]
        assert list(d["properties"]) == list(cls.__record_fields__), name
        # a field that may be None is left out then, never null: not required
        nullable = {f for f in cls.__record_fields__ if cls.__annotations__[f].endswith(" | None")}
        assert set(d["required"]) == set(cls.__record_fields__) - nullable, name
        for field in cls.__record_fields__:
            got = d["properties"][field]["type"]
            assert [got] == list(_json_types(cls.__annotations__[field], True)), "%s.%s: %s" % (name, field, got)
        # none of its fields is an edge's own key
        assert not set(d["properties"]) & set(edge["properties"]), name


# --- a fork hazard's facts: worded into `evidence` (fork_hazard leaves them out), but for the frames a tree's
# parent-reference hazard names, given as its `parent_references` in docs/pyhang-tree-1.schema.json

def test_a_trees_parent_references_are_the_frames_of_the_parent_threads_its_facts_name():
    from pyhang.model.hazard_facts import ParentReferenceFacts, ParentThread
    from pyhang.model.waits import CodeLine
    with open(os.path.join(ROOT, "docs", "pyhang-tree-1.schema.json")) as f:
        hazard = json.load(f)["properties"]["fork_hazards"]["items"]
    item = hazard["properties"]["parent_references"]["items"]
    # each is a ParentThread's `references` (a CodeLine), with that thread's tid and the parent's pid
    assert ParentReferenceFacts.__nested__["parent_threads"] is ParentThread
    assert ParentThread.__nested__["references"] is CodeLine
    assert set(item["properties"]) == set(CodeLine.__record_fields__) | {"tid", "pid"}
    assert set(item["required"]) == set(item["properties"])
    for field in CodeLine.__record_fields__:
        assert [item["properties"][field]["type"]] == list(_json_types(CodeLine.__annotations__[field], True)), field
