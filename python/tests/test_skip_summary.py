"""testdata/skip_summary.py: what a ctest run skipped and why, read from
ctest's own log, for the CI log's last lines."""
import skip_summary

# ctest's LastTest.log of three entries, as ctest 3.25 writes them: one whose
# every pytest test skipped (ctest counts it skipped), one where some skipped,
# a Catch2 test behind the skip marker; and one that passed with no skip.
LOG = """\
Start testing: Dec 03 03:05 UTC
----------------------------------------------------------
1/4 Testing: integration: test_roots
1/4 Test: integration: test_roots
Command: "/usr/bin/python3.11" "-m" "pytest" "-q" "-p" "no:cacheprovider" "-rs" "/r/gdbext/tests/test_roots.py"
Output:
----------------------------------------------------------
ss                                                                       [100%]
SKIPPED [2] gdbext/tests/test_roots.py:31: the unstable root could not be made (no archive)

2 skipped in 0.11s
<end of output>
Test time =   0.30 sec
----------------------------------------------------------
Test Pass Reason:
Skip regular expression found in output. Regex=[
[0-9]+ skipped( in |, [0-9]+ warnings? in )]
----------------------------------------------------------

2/4 Testing: integration: test_depths
2/4 Test: integration: test_depths
Output:
----------------------------------------------------------
..s.s
SKIPPED [2] python/tests/test_depths.py:50: 3.14+ frames record their stack pointer
SKIPPED [1] python/tests/test_depths.py: no 3.6
3 passed, 3 skipped in 0.2s
<end of output>
Test Passed.

3/4 Testing: unit: cores of glibc 2.43
3/4 Test: unit: cores of glibc 2.43
Output:
----------------------------------------------------------
pyhang-test-skipped: no glibc 2.43 root
<end of output>
Test Pass Reason:
Skip regular expression found in output. Regex=[pyhang-test-skipped:]

4/4 Testing: integration: test_kinds
4/4 Test: integration: test_kinds
Output:
----------------------------------------------------------
8 passed in 0.03s
<end of output>
Test Passed.
End testing: Dec 03 03:05 UTC
"""


def test_each_skip_reason_is_counted_with_the_entry_it_was_in():
    reasons, whole = skip_summary.skips(LOG.splitlines(True))
    assert reasons == {
        ("integration: test_roots", "the unstable root could not be made (no archive)"): 2,
        ("integration: test_depths", "3.14+ frames record their stack pointer"): 2,
        ("integration: test_depths", "no 3.6"): 1,
        ("unit: cores of glibc 2.43", "no glibc 2.43 root"): 1,
    }
    assert whole == ["integration: test_roots", "unit: cores of glibc 2.43"]


def test_the_summary_gives_the_count_first_then_the_reasons_most_first():
    lines = skip_summary.summary(*skip_summary.skips(LOG.splitlines(True)))
    assert lines[0] == ("skipped: 6 tests in 3 ctest entries; 2 entries skipped whole: integration: test_roots, "
                        "unit: cores of glibc 2.43")
    assert lines[1].split() == ["2", "integration:", "test_depths:", "3.14+", "frames", "record", "their", "stack",
                                "pointer"]
    assert len(lines) == 5


def test_a_run_that_skipped_nothing_says_none():
    assert skip_summary.summary(*skip_summary.skips(LOG.splitlines(True)[-8:])) == ["skipped: none"]


def test_an_unreadable_log_is_one_line_on_stderr_and_exit_1(tmp_path, capsys):
    assert skip_summary.main(["skip_summary.py", str(tmp_path / "missing.log")]) == 1
    assert "cannot read" in capsys.readouterr().err
