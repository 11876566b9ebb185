#!/usr/bin/env python3
"""What the last ctest run skipped, and why: printed after ctest's closing
count, so a CI log says how many tests did not run and for what reason.

ctest counts a test file whose every test skipped as skipped
(CMakeLists.txt's SKIP_REGULAR_EXPRESSION), but a file where only some
skipped passes, and ctest shows no test's output unless it failed.  This
reads ctest's own log (Testing/Temporary/LastTest.log): each entry's
pytest `-rs` lines (`SKIPPED [N] file:line: reason`) and the Catch2 tests'
skip marker (`pyhang-test-skipped: reason`, native/tests/support/skip.hpp).

    testdata/skip_summary.py BUILD/Testing/Temporary/LastTest.log
"""
import re
import sys
from collections import Counter

PYTEST_SKIP = re.compile(r"^SKIPPED \[(\d+)\] [^:]+(?::\d+)?: (.*)$")
CATCH_SKIP = re.compile(r"^.*pyhang-test-skipped: ?(.*)$")
ENTRY = re.compile(r"^\d+/\d+ Test: (.*)$")
SKIPPED_ENTRY = "Skip regular expression found in output"   # ctest's reason for an entry it counts as skipped
LISTED = 20                      # reasons printed; the rest counted


def skips(log_lines):
    """(Counter of (ctest entry, reason) → tests skipped, [entries ctest counted as skipped])."""
    reasons, whole = Counter(), []
    entry, output = None, False
    for line in log_lines:
        line = line.rstrip("\n")
        m = ENTRY.match(line)
        if m:
            entry, output = m.group(1), False
        elif line == "Output:":
            output = entry is not None
        elif line == "<end of output>":
            output = False
        elif output:   # the test's own output: its skip lines
            m = PYTEST_SKIP.match(line) or CATCH_SKIP.match(line)
            if m:
                reasons[(entry, m.groups()[-1].strip())] += int(m.group(1)) if m.re is PYTEST_SKIP else 1
        elif entry is not None and line.startswith(SKIPPED_ENTRY):
            whole.append(entry)
    return reasons, whole


def summary(reasons, whole):
    """The lines printed: a count, then each reason with the entry it was in, the most first."""
    total = sum(reasons.values())
    if not total and not whole:
        return ["skipped: none"]
    out = ["skipped: %d test%s in %d ctest entr%s; %d entr%s skipped whole%s" % (
        total, "" if total == 1 else "s", len({e for e, _ in reasons}), "y" if len({e for e, _ in reasons}) == 1
        else "ies", len(whole), "y" if len(whole) == 1 else "ies", (": " + ", ".join(whole)) if whole else "")]
    ranked = sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))
    for (entry, reason), n in ranked[:LISTED]:
        out.append("  %3d  %s: %s" % (n, entry, reason))
    if len(ranked) > LISTED:
        out.append("  and %d more reasons" % (len(ranked) - LISTED))
    return out


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: skip_summary.py LastTest.log\n")
        return 2
    try:
        with open(argv[1], errors="replace") as f:
            reasons, whole = skips(f)
    except OSError as e:
        sys.stderr.write("skip_summary.py: cannot read %s: %s\n" % (argv[1], e.strerror))
        return 1
    print("\n".join(summary(reasons, whole)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
