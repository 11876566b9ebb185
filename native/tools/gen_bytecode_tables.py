#!/usr/bin/env python3
"""Writes native/src/cpython/layouts/bytecode_generated.cpp: for each
CPython 3.6 - 3.13, what the stack-depth analysis (cpython/bytecode.cpp)
needs to know of every opcode.  Each interpreter describes itself: its own
`dis` and `opcode` modules give the names, the specialized forms and the
base opcode each stands for (3.11+), the inline cache units after an
instruction (3.11+), which opcodes jump and how, and each opcode's stack
effect (`dis.stack_effect`, falling through and jumping).  The few facts no
module states are written below by name, each with the reason.

usage: gen_bytecode_tables.py [--pyenv-root DIR] [--output FILE]
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

MINORS = range(6, 14)   # 3.14+ record the stack pointer during a call: no analysis needed

# Run inside each interpreter (3.6 syntax): one JSON document on stdout.
PROBE = r'''
import dis, json, opcode, sys
minor = sys.version_info[1]
names = list(getattr(dis, "_all_opname", opcode.opname))
deopt = getattr(dis, "deoptmap", {})
caches = getattr(opcode, "_inline_cache_entries", None)
SAMPLES = list(range(0, 40)) + [64, 100, 127, 128, 255, 256, 257, 258, 300, 511, 512, 513, 1000, 65535, 65536]

def effect(op, arg, jump):
    kw = {} if jump is None else {"jump": jump}
    try:
        return dis.stack_effect(op, arg, **kw)
    except (ValueError, TypeError):
        return None

ops = []
for op, name in enumerate(names):
    if op > 255 or name.startswith("<"):   # 3.12+ list pseudo-instructions after 255
        continue
    base_name = deopt.get(name, name)
    base = dis._all_opmap[base_name] if hasattr(dis, "_all_opmap") else op
    row = {"op": op, "name": name, "base": base}
    if op == base:
        if caches is None:
            row["caches"] = 0
        elif isinstance(caches, dict):
            row["caches"] = caches.get(name, 0)
        else:
            row["caches"] = caches[op]
        row["jrel"] = op in opcode.hasjrel
        row["jabs"] = op in opcode.hasjabs
        has_arg = op in opcode.hasarg if hasattr(opcode, "hasarg") else op >= opcode.HAVE_ARGUMENT
        effects = {}
        for jump in ((None,) if minor < 8 else (False, True)):
            if has_arg:
                effects[str(jump)] = {str(a): effect(op, a, jump) for a in SAMPLES}
            else:
                effects[str(jump)] = {"none": effect(op, None, jump)}
        # what runs in place of an instrumented or replaced instruction is kept elsewhere
        if name.startswith("INSTRUMENTED_") or name == "ENTER_EXECUTOR":
            effects = {}
        row["effects"] = effects
    ops.append(row)
# what a jump's argument counts: dis finds JUMP_FORWARD 2 at offset 0 landing
# at 4 (bytes) or at 6 (2-byte code units)
jump_arg_bytes = 1 if dis.findlabels(bytes([opcode.opmap["JUMP_FORWARD"], 2])) == [4] else 2
print(json.dumps({"minor": minor, "version": sys.version.split()[0],
                  "extended_arg": opcode.EXTENDED_ARG, "jump_arg_bytes": jump_arg_bytes, "ops": ops}))
'''

# Instructions after which the next one is not reached from them.
NO_FALLTHROUGH = {
    "RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE", "JUMP_FORWARD", "JUMP_ABSOLUTE",
    "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "INTERPRETER_EXIT",
    # 3.6/3.7: leave the loop or go back to its start through the block stack, whose
    # levels the jump cannot carry; the loop's own edges (SETUP_LOOP, the back edge) reach both.
    "BREAK_LOOP", "CONTINUE_LOOP",
}
NO_JUMP_EDGE = {"CONTINUE_LOOP"}

# 3.6 and 3.7's dis.stack_effect takes no `jump` and answers one of the two
# effects; these are the two of each opcode that has two (as 3.8 gives them, and
# for opcodes 3.8 lacks, as 3.7's compiler counts them): (falling through, jumping).
BEFORE_38 = {
    "FOR_ITER": (1, -1),
    "JUMP_IF_TRUE_OR_POP": (-1, 0),
    "JUMP_IF_FALSE_OR_POP": (-1, 0),
    "SETUP_FINALLY": (0, 6),
    "SETUP_EXCEPT": (0, 6),
    "SETUP_WITH": (1, 6),
    "SETUP_ASYNC_WITH": (0, 5),
    "SETUP_LOOP": (0, 0),
    # 3.6 counts these as one path of several; 3.7's compiler counts the exceptional
    # path's, after which the stack is at the level the statement began with.
    "END_FINALLY": (-6, -6),
    "WITH_CLEANUP_START": (2, 2),
    "WITH_CLEANUP_FINISH": (-3, -3),
    "POP_EXCEPT": (-3, -3),      # restores the three values of the exception handled before
}

# 3.11 and 3.12 count RETURN_GENERATOR as 0, but the generator, when resumed,
# continues with the value sent pushed (the POP_TOP after it pops that); 3.13 counts +1.
RESUMED_WITH_A_VALUE = {"RETURN_GENERATOR": (1, 1)}

# The instructions that call, each with the K for which `K - stack effect` is
# the number of its inputs on the stack while it calls, the callable the deepest
# (or NULL, then the callable above it).  K = 1 for a call that pops its inputs
# and pushes the result; 3.11 counts a call's arguments as popped by PRECALL
# (which pushes nothing), the callable and NULL/self by the CALL after it, but
# both run with all of them on the stack: PRECALL's inputs are 2 more than it pops.
CALLS = {
    "CALL_FUNCTION": 1, "CALL_FUNCTION_KW": 1, "CALL_FUNCTION_EX": 1, "CALL_METHOD": 1,
    "PRECALL": 2, "CALL": 1, "CALL_KW": 1,
}
# Calls whose deepest input may be NULL, the callable above it (3.7 - 3.10 CALL_METHOD, 3.11/3.12 CALL...).
NULL_FIRST = {(m, n) for m in (7, 8, 9, 10) for n in ("CALL_METHOD",)} | \
             {(m, n) for m in (11, 12) for n in ("PRECALL", "CALL", "CALL_FUNCTION_EX")}

# 3.6 - 3.8: where the stack depth of a finally body stops being the compiler's
# count (+1: 3.8's BEGIN_FINALLY counts six values and pushes one) and where the
# body ends and the stack is level again (-1).
FINALLY_NESTING = {"BEGIN_FINALLY": 1, "END_FINALLY": -1, "POP_FINALLY": -1}

# 3.6/3.7: instructions whose jump is taken by an exception, with six values
# pushed; the normal way into a finally handler (its body, a with's cleanup)
# pushes one (None), counted as six by the opcodes that end the handler.
# (kExceptHandler: only an exception leads there; kFinallyHandler: the normal way too)
HANDLER_JUMPS = {"SETUP_EXCEPT": "kExceptHandler", "SETUP_FINALLY": "kFinallyHandler",
                 "SETUP_WITH": "kFinallyHandler", "SETUP_ASYNC_WITH": "kFinallyHandler"}

# A generator's code that starts with it starts with the first value sent on the stack.
ENTERED_WITH_A_VALUE = {"GEN_START"}

# From 3.9 on the compiler gives every instruction one stack depth, whichever
# way it is reached (compile.c's stackdepth asserts it): paths that disagree
# are not the compiler's.  Before, a finally body is entered with different
# depths, and the analysis counts the deeper one, marked uncertain.
ONE_DEPTH_FROM = 9

# Flow kinds (cpython/bytecode.hpp: OpFlow).
FLOW = {"next": "kNext", "rel": "kJumpRel", "back": "kJumpBack", "abs": "kJumpAbs"}


def find_interpreters(pyenv_root):
    found = {}
    for minor in MINORS:
        cands = []
        for d in glob.glob(os.path.join(pyenv_root, "versions", "3.%d.*" % minor)):
            m = re.fullmatch(r"3\.%d\.(\d+)" % minor, os.path.basename(d))
            if m and os.path.exists(os.path.join(d, "bin", "python3")):
                cands.append((int(m.group(1)), d))
        if cands:
            found[minor] = os.path.join(max(cands)[1], "bin", "python3")
    return found


def fit(samples):
    """effect(arg) as a + b*arg + c*(arg >> 8) + sum(d[k] * bit k of arg, k < 4),
    checked at every sample; else a table of the effects of arguments 0..15
    (larger ones unknown).  Returns (a, b, c, d, table)."""
    e = {int(k): v for k, v in samples.items() if v is not None}
    if not e:
        return None
    if all(k in e for k in (0, 1, 2, 4, 8, 16, 256)):
        a = e[0]
        if (e[16] - a) % 16 == 0:
            b = (e[16] - a) // 16
            d = [e[1 << k] - a - b * (1 << k) for k in range(4)]
            c = e[256] - a - 256 * b
            formula = lambda x: a + b * x + c * (x >> 8) + sum(d[k] * ((x >> k) & 1) for k in range(4))
            if all(formula(x) == v for x, v in e.items()):
                return a, b, c, d, None
    table = [e.get(x) for x in range(16)]
    if any(x >= 16 for x in e):
        # a table only serves opcodes whose arguments stay small (BUILD_SLICE)
        big = {x: v for x, v in e.items() if x >= 16}
        if len(set(big.values())) > 1:
            return None
    return 0, 0, 0, [0, 0, 0, 0], table


def effect_cpp(fitted):
    if fitted is None:
        return "kUnknownEffect"
    a, b, c, d, table = fitted
    if table is None:
        return "{%d, %d, %d, {%s}, 0, {}}" % (a, b, c, ", ".join(map(str, d)))
    n = 0
    while n < 16 and table[n] is not None:
        n += 1
    return "{0, 0, 0, {0, 0, 0, 0}, %d, {%s}}" % (n, ", ".join(str(v) for v in table[:n]))


def const_effect(v):
    return None if v is None else (v, 0, 0, [0, 0, 0, 0], None)


def rows_of(doc):
    """The C++ rows of one version: every base opcode's facts, then each
    specialized opcode (3.11+) with the base it stands for."""
    minor = doc["minor"]
    rows, specialized = [], []
    for r in doc["ops"]:
        name = r["name"]
        if r["op"] != r["base"]:
            specialized.append("    {%d, %d},  // %s" % (r["op"], r["base"], name))
            continue
        flow_next = name not in NO_FALLTHROUGH
        if r.get("jrel") and name not in NO_JUMP_EDGE:
            flow = "back" if "JUMP_BACKWARD" in name else "rel"
        elif r.get("jabs") and name not in NO_JUMP_EDGE:
            flow = "abs"
        else:
            flow = "next"
        effects = r.get("effects", {})
        if minor < 8:
            nxt = jmp = effects.get("None", {})
        else:
            nxt, jmp = effects.get("False", {}), effects.get("True", {})
        override = None
        if minor < 8 and name in BEFORE_38:
            override = BEFORE_38[name]
        if minor in (11, 12) and name in RESUMED_WITH_A_VALUE:
            override = RESUMED_WITH_A_VALUE[name]
        if override:
            fn, fj = const_effect(override[0]), const_effect(override[1])
        else:
            fn = const_effect(nxt["none"]) if "none" in nxt else fit(nxt)
            fj = const_effect(jmp["none"]) if "none" in jmp else fit(jmp)
        rows.append("    {%d, %d, %s, %s, %d, %s, %d, %s, %s, %s, %s},  // %s" % (
            r["op"], r.get("caches", 0), FLOW[flow], "true" if flow_next else "false",
            CALLS.get(name, -1), "true" if (minor, name) in NULL_FIRST else "false",
            FINALLY_NESTING.get(name, 0) if minor < 9 else 0, "true" if name in ENTERED_WITH_A_VALUE else "false",
            HANDLER_JUMPS.get(name, "kNoHandler") if minor < 8 else "kNoHandler",
            effect_cpp(fn), effect_cpp(fj), name))
    return rows, specialized


def generate(docs):
    lines = [
        "// Generated by native/tools/gen_bytecode_tables.py from each interpreter's own",
        "// dis and opcode modules (versions: %s). Do not edit." % ", ".join(d["version"] for d in docs),
        "// Row: opcode, inline cache units, jump kind, falls through,",
        "// K of a call (inputs = K - effect; -1: not a call), NULL before the callable,",
        "// finally nesting (3.6 - 3.8), code starting with it starts with a value,",
        "// its jump is an exception's (3.6/3.7),",
        "// stack effect falling through, stack effect jumping.",
        "",
        '#include "cpython/bytecode.hpp"',
        "",
        "namespace pyhang::cpython::detail {",
        "",
        "namespace {",
        "",
    ]
    for d in docs:
        rows, specialized = rows_of(d)
        lines.append("constexpr OpRow k3_%d[] = {" % d["minor"])
        lines.extend(rows)
        lines.append("};")
        lines.append("")
        lines.append("constexpr OpAlias k3_%d_specialized[] = {" % d["minor"])
        lines.extend(specialized or ["    {0, 0},  // none: the version specializes no instruction"])
        lines.append("};")
        lines.append("")
    lines.append("}  // namespace")
    lines.append("")
    lines.append("const BytecodeTable* bytecode_table(int minor) {")
    for d in docs:
        lines.append("  static const BytecodeTable t3_%d({%d, %d, %d, %s}, k3_%d, k3_%d_specialized);" % (
            d["minor"], d["minor"], d["extended_arg"], d["jump_arg_bytes"],
            "true" if d["minor"] >= ONE_DEPTH_FROM else "false", d["minor"], d["minor"]))
    lines.append("  switch (minor) {")
    for d in docs:
        lines.append("    case %d: return &t3_%d;" % (d["minor"], d["minor"]))
    lines.append("    default: return nullptr;")
    lines.append("  }")
    lines.append("}")
    lines.append("")
    lines.append("}  // namespace pyhang::cpython::detail")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pyenv-root", default=os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv")))
    ap.add_argument("--output", default="-")
    args = ap.parse_args()
    found = find_interpreters(args.pyenv_root)
    missing = [m for m in MINORS if m not in found]
    if missing:
        sys.exit("no interpreter for 3.%s under %s" % (", 3.".join(map(str, missing)), args.pyenv_root))
    docs = [json.loads(subprocess.check_output([found[m], "-I", "-c", PROBE])) for m in MINORS]
    text = generate(docs)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
