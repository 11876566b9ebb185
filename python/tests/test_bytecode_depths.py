"""The stack depth pyhang gives each instruction of a code object
(cpython/bytecode.cpp, through _pyhang_native.code_stack_depths), held
against what each interpreter from 3.6 to 3.13 says itself
(testdata/probes/stack_depths.py), the depth that names the callable of a
call in progress on versions whose frames keep no stack pointer:

- every instruction a workload ran has, where pyhang gives it a depth, the
  depth its frame's stack had just before it ran (3.6 - 3.12: the frame
  records it while a trace function runs; 3.11's CALL is counted as its
  compiler counts it, the arguments popped by the PRECALL before it, though
  they stay on the stack until the CALL has run);
- the deepest a code object's stack gets is the co_stacksize its compiler
  gave it (3.10+; before, the peephole optimizer folded constants after the
  compiler had counted, so never more);
- nearly every instruction gets a depth: the unknown are those of finally
  bodies (3.6 - 3.8, entered with one value normally and six by an
  exception) and of 3.6 code whose paths disagree.
"""
import json
import os
import subprocess

import pytest

import _pyhang_native as native
import harness

PROBE = os.path.join(os.path.dirname(harness.SCENARIOS), "probes", "stack_depths.py")
MODULES = 120   # standard library files compiled by each interpreter
INTERPRETERS = [(name, path) for name, path in harness.interpreters()]


@pytest.fixture(scope="module", params=INTERPRETERS, ids=[name for name, _ in INTERPRETERS])
def probe(request):
    exe, env = harness.stripped_interpreter(request.param[1])
    out = subprocess.run([exe, PROBE, str(MODULES)], env=env, stdout=subprocess.PIPE, check=True, timeout=300)
    doc = json.loads(out.stdout)
    if doc["minor"] > 13:
        pytest.skip("3.14+ frames record their stack pointer: no analysis")
    return doc


def analysed(doc, code):
    return native.code_stack_depths(doc["minor"], bytes.fromhex(code["code"]), bytes.fromhex(code["exceptions"]))


def test_each_executed_instruction_has_the_depth_its_frame_had(probe):
    # GIVEN the instructions a workload ran, each with its frame's stack depth before it
    if probe["minor"] >= 13:
        pytest.skip("3.13's tracing keeps no stack pointer in the frame")
    wrong, known, total = [], 0, 0
    for code in probe["executed"]:
        raw = bytes.fromhex(code["code"])
        # WHEN pyhang analyses the code object's instructions
        depths = analysed(probe, code)
        assert depths.problem == "", (code["name"], depths.problem)
        for offset, depth in code["depths"].items():
            unit = int(offset) // 2
            total += 1
            got = depths.depth[unit]
            if got < 0:
                continue
            known += 1
            if probe["minor"] == 11 and raw[2 * unit] == 171:   # 3.11 CALL: its arguments counted as popped
                got += raw[2 * unit + 1]
            if got != depth:
                wrong.append((code["name"], offset, depth, got))
    # THEN every depth it gives is the one the frame had, and it gives nearly all
    assert total > 2000
    assert wrong == []
    assert known / total > 0.95, (known, total)


def test_the_deepest_the_stack_gets_is_the_compilers_stack_size(probe):
    # GIVEN standard library code objects with the co_stacksize their compiler gave them
    problems, over, under, units, unknown = [], [], [], 0, 0
    for code in probe["compiled"]:
        # WHEN pyhang analyses each
        depths = analysed(probe, code)
        if depths.problem:
            problems.append((code["name"], depths.problem))
            continue
        if depths.max_depth > code["stacksize"]:
            over.append((code["name"], depths.max_depth, code["stacksize"]))
        elif depths.max_depth < code["stacksize"] and probe["minor"] >= 10:
            # 3.13 gives code that pushes nothing (a bare `return None`) a size of 1
            if not (probe["minor"] == 13 and depths.max_depth == 0 and code["stacksize"] == 1):
                under.append((code["name"], depths.max_depth, code["stacksize"]))
        instructions = [d for d in depths.depth if d != -1 or probe["minor"] <= 10]
        units += len(instructions)
        unknown += sum(1 for d in instructions if d < 0)
    # THEN its deepest is the compiler's stack size (3.10+), never more; only 3.6 leaves a few undone
    assert len(probe["compiled"]) > 2000
    assert over == []
    assert under == []
    if probe["minor"] == 6:
        assert len(problems) < len(probe["compiled"]) / 200, problems
    else:
        assert problems == []
    if probe["minor"] <= 10:
        assert unknown / units < 0.05, (unknown, units)
