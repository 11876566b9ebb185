"""The exit-status audit's table (testdata/exit_audit.py) holds every scenario program: a scenario added
without a judgement would never be audited.  Only the table is checked here; the audit itself is run by
hand (docs/developing.md)."""
import ast
import os
import re

import exit_audit


def test_every_scenario_file_is_a_case_of_the_audit_or_named_as_no_hang_program():
    audited = {c.script for c in exit_audit.CASES}
    files = set(exit_audit.scenario_files())
    assert files - audited - set(exit_audit.NOT_HANG_PROGRAMS) == set()
    assert set(exit_audit.NOT_HANG_PROGRAMS) <= files, "a file named as no hang program is gone"
    assert audited <= files, "a case names a scenario that is gone"
    assert not audited & set(exit_audit.NOT_HANG_PROGRAMS)


def test_every_mode_a_scenario_documents_in_its_usage_line_is_a_case():
    for script in {c.script for c in exit_audit.CASES if c.script.endswith(".py")}:
        doc = ast.get_docstring(ast.parse(open(os.path.join(exit_audit.harness.SCENARIOS, script)).read())) or ""
        usage = re.search(r"usage: (.*)", doc)
        words = usage.group(1).split() if usage else []
        modes = {m for w in words if "|" in w for m in w.strip("[]").split("|")}
        cased = {c.key.partition(":")[2] or None for c in exit_audit.CASES if c.script == script}
        # the mode a script runs with no argument is its bare key (lock_abba has none: both are named)
        assert modes <= cased | {m for c in exit_audit.CASES if c.script == script for m in c.args}, (script, modes)


def test_every_case_has_a_judgement_and_a_reason_and_one_key():
    keys = [c.key for c in exit_audit.CASES]
    assert len(keys) == len(set(keys))
    for c in exit_audit.CASES:
        assert c.judge in exit_audit.JUDGEMENTS and c.tree in exit_audit.JUDGEMENTS + (None,), c.key
        assert c.reason and "\n" not in c.reason, c.key
        assert all(m in exit_audit.MODES and j in exit_audit.JUDGEMENTS and why for m, (j, why) in c.modes.items())
        assert c.key.partition(":")[0] == c.script.rsplit(".py", 1)[0], c.key


def test_a_report_contradicting_its_judgement_or_not_made_is_a_mismatch():
    m = exit_audit.mismatch
    assert m("hung", 0) and not m("hung", 3) and not m("hung", 4) and not m("hung", 5)
    assert m("healthy", 4) and not m("healthy", 0)
    assert not m("borderline", 5) and not m("borderline", 0)
    assert m("borderline", 1) and m("healthy", "timeout") and m("hung", 2)
    assert exit_audit.judgement_of("truth", {"child_finished": False}) == "hung"
    assert exit_audit.judgement_of("truth", {"child_finished": True}) == "healthy"


def _module_level_calls(tree):
    """The calls of `tree` its module's own code makes as it runs (none inside a function: a plain function
    may be called from a coroutine, where a loop runs)."""
    def walk(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(child, ast.Call):
                yield child
            yield from walk(child)
    return walk(tree)


def test_no_scenario_asks_for_the_current_event_loop_where_none_runs():
    # Python 3.14's asyncio.get_event_loop() makes no loop when none is set (RuntimeError): a scenario that
    # asks for one in its module's code does not start on today's interpreters (the audit found loop_blocked.py)
    found = []
    for name in exit_audit.scenario_files():
        path = os.path.join(exit_audit.harness.SCENARIOS, name)
        if not name.endswith(".py"):
            continue
        for call in _module_level_calls(ast.parse(open(path).read())):
            if isinstance(call.func, ast.Attribute) and call.func.attr == "get_event_loop":
                found.append("%s:%d" % (name, call.lineno))
    assert found == []


def test_no_case_runs_on_a_python_older_than_its_scenario_says_it_works_on():
    said = re.compile(r"from 3\.(\d+) on|Python 3\.(\d+) on|CPython 3\.(\d+)\+|on 3\.(\d+) and later")
    for c in exit_audit.CASES:
        if not c.script.endswith(".py"):
            continue
        doc = ast.get_docstring(ast.parse(open(os.path.join(exit_audit.harness.SCENARIOS, c.script)).read())) or ""
        lowest = max([(3, int("".join(m))) for m in said.findall(" ".join(doc.split()))], default=(3, 6))
        assert c.minimum >= lowest, (c.key, c.minimum, lowest)
