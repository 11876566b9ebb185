"""The glibc decoders report kinds and numbers (model.waits: LockIssue,
Reason, Candidate, HowIdentified, IdentifyFailure); render.glibc words
them, one table per vocabulary of model.glibc_kinds, with no kind left unworded.
Answers that hold sentences where the records are (as the first pyhang's
did) are not read."""
import copy
import json
import os

import pytest

from pyhang import analysis, cli
from pyhang.model import glibc_kinds as kinds
from pyhang.model.kinds import VerdictKind, WaitKind
from pyhang.model.waits import Candidate, DescriptorIssue, DescriptorsIssue, GlibcLock, HowIdentified, IdentifyFailure, LayoutsIssue, \
    LockIdentification, LockIssue, Reason, ThreadListIssue, from_data, to_data
from pyhang.render import glibc as words
from pyhang.render import json as render_json
from pyhang.render.text import render_text

SNAPSHOTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                         "testdata", "snapshots")

VOCABULARIES = [(kinds.LockProblem, words.LOCK_PROBLEMS), (kinds.ScoreReason, words.SCORE_REASONS),
                (kinds.LockEvidence, words.LOCK_EVIDENCE), (kinds.IdentifyProblem, words.IDENTIFY_PROBLEMS),
                (kinds.LayoutsProblem, words.LAYOUTS_PROBLEMS), (kinds.DescriptorCheck, words.DESCRIPTOR_CHECKS),
                (kinds.ThreadListProblem, words.THREAD_LIST_PROBLEMS),
                (kinds.DescriptorsProblem, words.DESCRIPTORS_PROBLEMS)]


@pytest.mark.parametrize("vocabulary,table", VOCABULARIES, ids=lambda v: getattr(v, "__name__", ""))
def test_every_kind_of_each_vocabulary_has_words_and_no_words_lack_a_kind(vocabulary, table):
    assert set(table) == set(vocabulary.ALL)
    assert len(vocabulary.ALL) == len(set(vocabulary.ALL))


def test_every_lock_problem_and_score_reason_words_its_numbers_into_one_line():
    for kind in kinds.LockProblem.ALL:
        text = words.lock_problem_text([LockIssue(kind, True, 7, 9)], "mutex-normal")
        assert text and "%" not in text and "\n" not in text, kind
    for kind in kinds.ScoreReason.ALL:
        cand = Candidate(kind="mutex", layout="pthread_mutex_t (x86_64)", problem=[LockIssue(kinds.LockProblem.DESTROYED)],
                         reasons=[Reason(kind, -2, WaitKind.MUTEX)])
        text = words.reasons_text(cand)
        assert text.startswith("-2 ") and "%" not in text, kind
    for kind in kinds.IdentifyProblem.ALL:
        assert "%" not in words.identify_problem_text(IdentifyFailure(kind, futex=0x10, syscall=7)), kind
    for kind in kinds.LayoutsProblem.ALL:
        issue = LayoutsIssue(kind, version="2.45", library="libc.so.6", newest="2.43", oldest="2.17",
                             layouts="glibc 2.41+", differs=[DescriptorIssue(kinds.DescriptorCheck.TCB_HEADER, [64, 1, 9])],
                             missing=["_thread_db_sizeof_pthread"])
        text = words.layouts_text(issue)
        assert text and "%" not in text and "\n" not in text, kind
    for kind in kinds.ThreadListProblem.ALL:
        text = words.thread_list_text(ThreadListIssue(kind, library="libc.so.6", head="_dl_stack_used", number=3))
        assert text and "%" not in text, kind
    for kind in kinds.DescriptorsProblem.ALL:
        text = words.descriptors_text(DescriptorsIssue(kind, "libc.so.6", ["/lib/libc.so.6"], [],
                                                       DescriptorIssue(kinds.DescriptorCheck.TID_NOT_ONE_WORD, [64, 1, 8])))
        assert text and "%" not in text, kind
    for kind in kinds.DescriptorCheck.ALL:
        assert "%" not in words.descriptor_text(DescriptorIssue(kind, [32, 1, 4], 8, 16, 25)), kind


def test_the_evidence_of_a_futex_wait_says_the_call_the_frame_and_the_winners_points():
    best = Candidate(kind="mutex", address=0x55dae91d70e0, score=16, layout="pthread_mutex_t (x86_64)", reasons=[
        Reason(kinds.ScoreReason.PLAUSIBLE, 3), Reason(kinds.ScoreReason.LOCKED, 3),
        Reason(kinds.ScoreReason.HAS_WAITERS, 2), Reason(kinds.ScoreReason.OWNER_RECORDED, 2),
        Reason(kinds.ScoreReason.WORD_UNCHANGED, 1), Reason(kinds.ScoreReason.FRAME_NAME, 5, WaitKind.MUTEX)])
    how = HowIdentified(kinds.LockEvidence.FUTEX_CALL, futex=0x55dae91d70e0, futex_op=0x80, hint="mutex", best=best)
    assert words.evidence_text(how) == (
        "futex 0x55dae91d70e0 op 0x80, frame says mutex; best: +3 plausible pthread_mutex_t (x86_64); +3 locked; "
        "+2 lock word says it has waiters; +2 owner recorded; +1 word still holds the value the thread waits on; "
        "+5 frame name says mutex")
    bare = Candidate(kind="futex", address=0x10, score=3, reasons=[Reason(kinds.ScoreReason.FUTEX_WORD, 3)])
    assert words.evidence_text(HowIdentified(kinds.LockEvidence.FUTEX_CALL, 0x10, 0x109, None, bare)) == \
        "futex 0x10 op 0x109; best: +3 a futex word"
    implausible = Candidate(kind="rwlock", address=0x20, score=-10, reasons=[Reason(kinds.ScoreReason.IMPLAUSIBLE, -10)],
                            problem=[LockIssue(kinds.LockProblem.PADDING_NOT_ZERO, True, 44),
                                     LockIssue(kinds.LockProblem.FUTEX_WORDS_NOT_STATE, True, 7, -1)])
    assert words.candidate_text(implausible) == (
        "rwlock 0x20: -10 (-10 implausible: padding at +44 is not zero; futex words 0x7/0xffffffffffffffff are not "
        "0..3)")


def test_why_nothing_was_identified_is_worded_with_its_numbers():
    assert words.identify_problem_text(IdentifyFailure(kinds.IdentifyProblem.NOT_FUTEX_WAIT, syscall=7)) == \
        "not in a futex wait (system call 7)"
    assert words.identify_problem_text(IdentifyFailure(kinds.IdentifyProblem.FUTEX_UNREADABLE, futex=0x1000)) == \
        "futex word 0x1000 is unreadable"
    assert words.identify_problem_text(None) is None
    assert words.lock_problem_text([LockIssue(kinds.LockProblem.UNREADABLE, True, 0x7f00)], "condvar") == \
        "cannot read pthread_cond_t at 0x7f00"


def test_records_of_the_native_dicts_survive_a_round_trip():
    ident = LockIdentification(kind="mutex", lock=GlibcLock(problem=[LockIssue(kinds.LockProblem.OWNER_NOT_TID, True, -5)]),
                               evidence=HowIdentified(kinds.LockEvidence.LOCK_ARGUMENT, hint="mutex"),
                               candidates=[Candidate(kind="mutex", reasons=[Reason(kinds.ScoreReason.LOCKED, 3)])])
    assert from_data(LockIdentification, json.loads(json.dumps(to_data(ident)))) == ident


def _with_old_sentences(doc):
    """A copy of a recorded snapshot whose lock answers hold sentences where the records are, as the first
    pyhang's did."""
    doc = copy.deepcopy(doc)
    for question, _, answer in doc["snapshot"]["answers"]:
        if question != "locks":
            continue
        for tid, ident in answer:
            ident["evidence"] = "an older pyhang's words for thread %d" % tid if ident.get("kind") else None
            ident["problem"] = None if ident.get("kind") else "not in a futex wait (system call 7)"
    return doc


def test_a_snapshot_whose_answers_hold_sentences_where_records_are_is_refused_in_one_line(tmp_path, capsys):
    with open(os.path.join(SNAPSHOTS, "native_abba.json")) as f:
        doc = _with_old_sentences(json.load(f))
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc["snapshot"]))
    assert cli.main(["report", "--snapshot", str(path)]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert "is not one pyhang wrote" in line


def test_why_the_lock_layouts_cannot_be_used_is_worded_from_the_version_and_libcs_descriptors():
    assert words.layouts_text(LayoutsIssue(kinds.LayoutsProblem.OUTSIDE, version="2.12", oldest="2.17", newest="2.43",
                                           open_ended=True)) == \
        "glibc 2.12 is outside the supported lock layouts (2.17 and later)"
    tid = DescriptorIssue(kinds.DescriptorCheck.TID_NOT_ONE_WORD, [64, 1, 720], most=32)
    assert words.layouts_text(LayoutsIssue(kinds.LayoutsProblem.CONTRADICTED, version="2.36", library="libc.so.6",
                                           differs=[tid])).startswith(
        "glibc 2.36: the lock layouts cannot be used with libc.so.6, whose thread descriptors differ from what they "
        "assume: _thread_db_pthread_tid describes one 64-bit field at +720, where the lock words")
    given = LayoutsIssue(kinds.LayoutsProblem.UNVOUCHED, version="2.44", source="given", newest="2.43",
                         layouts="glibc 2.41+")
    assert words.layouts_text(given) == (
        "glibc 2.44 is newer than 2.43, the newest release the lock layouts were checked against; libc's thread "
        "descriptors cannot confirm that the glibc 2.41+ layouts fit it: the version was not read from libc (given), "
        "so it has no thread descriptors")
    missing = LayoutsIssue(kinds.LayoutsProblem.UNVOUCHED, version="2.44", library="libc.so.6", newest="2.43",
                           layouts="glibc 2.41+", missing=["_thread_db_sizeof_pthread"])
    assert words.layouts_text(missing).endswith("fit it: libc.so.6 exports no _thread_db_sizeof_pthread")
    caveat = LayoutsIssue(kinds.LayoutsProblem.NEWER_THAN_CHECKED, version="2.41", exact=False,
                          source="version-definitions", library="libc.so.6", newest="2.43", layouts="glibc 2.41+")
    assert words.layouts_text(caveat) == (
        "glibc is only known to be 2.41 or later (from its version-definitions), and 2.43 is the newest release the "
        "lock layouts were checked against: using the glibc 2.41+ layouts, since libc.so.6's thread descriptors "
        "match what they assume, but they were not checked against this release's sources")
    assert words.layouts_text(None) is None
    unreadable = LayoutsIssue(kinds.LayoutsProblem.LIBC_UNREADABLE, library="/lib/libc.so.6", detail="cannot-open",
                              error_number=2)
    assert words.layouts_text(unreadable) == \
        "cannot open /lib/libc.so.6: No such file or directory: glibc version unknown"
    other_build = LayoutsIssue(kinds.LayoutsProblem.LIBC_UNREADABLE, library="/lib/libc.so.6",
                               detail="build-id-mismatch", build_id="93ac", core_build_id="a226")
    assert words.layouts_text(other_build) == (
        "cannot open /lib/libc.so.6: the file on disk is not the one the core was made from (build-id 93ac, in the "
        "core a226); its symbols are not used: glibc version unknown")


def test_a_descriptor_is_described_by_width_count_and_offset():
    assert words.describe_descriptor([32, 1, 720]) == "one 32-bit field at +720"
    assert words.describe_descriptor([32, 2, 1608]) == "2 32-bit elements at +1608"
    assert words.describe_descriptor([128, 0, 16]) == "a flexible array of 128-bit elements at +16"
    assert words.descriptor_text(DescriptorIssue(kinds.DescriptorCheck.SIZEOF_LIST_T, value=8, most=16)) == (
        "_thread_db_sizeof_list_t is 8 bytes, where the lock layouts assume x86_64's 64-bit pointers (mutex __list, "
        "the pre-2.25 condvar's __mutex)")


def test_a_walk_of_glibcs_thread_lists_that_stopped_says_where():
    twice = ThreadListIssue(kinds.ThreadListProblem.TID_TWICE, head="_dl_stack_used", head_address=0x7f0010, step=2,
                            entry=0x7f2700, pthread=0x7f2000, value=0x7f1000, number=101)
    assert words.thread_list_text(twice) == "TID 101 is on glibc's lists twice (at 0x7f1000 and 0x7f2000)"
    moved = ThreadListIssue(kinds.ThreadListProblem.PREV_MISMATCH, head="_dl_stack_user", head_address=0x7f0020,
                            step=1, entry=0x7f2700, value=0x7f3700, expected=0x7f1700)
    assert words.thread_list_text(moved) == (
        "entry 1 of _dl_stack_user (0x7f0020) at 0x7f2700: its prev is 0x7f3700, not 0x7f1700 (the list changed "
        "while read, or is not a list)")
    assert words.thread_list_text(None) is None


def test_why_pthread_t_cannot_be_mapped_to_tids_names_the_libraries_and_the_descriptor():
    tid = DescriptorIssue(kinds.DescriptorCheck.TID_NOT_ONE_WORD, [64, 1, 720], most=32)
    assert words.descriptors_text(DescriptorsIssue(kinds.DescriptorsProblem.TID_NOT_ONE_WORD, "libc.so.6", tid=tid)) \
        .startswith("cannot map pthread_t to TIDs: libc.so.6's _thread_db_pthread_tid describes one 64-bit field at +720")
    none = DescriptorsIssue(kinds.DescriptorsProblem.NO_TID_DESCRIPTOR, tried=["/lib/libc.so.6", "/lib/libpthread.so.0"],
                            unopened=["/lib/libpthread.so.0"])
    assert words.descriptors_text(none) == \
        "no _thread_db_pthread_tid in /lib/libc.so.6, /lib/libpthread.so.0 (cannot open): cannot map pthread_t to TIDs"


def test_the_caveat_of_layouts_used_for_a_release_newer_than_checked_is_a_warning_of_the_report():
    with open(os.path.join(SNAPSHOTS, "native_abba.json")) as f:
        doc = json.load(f)
    caveat = LayoutsIssue(kinds.LayoutsProblem.NEWER_THAN_CHECKED, version="2.44", library="libc.so.6", newest="2.43",
                          layouts="glibc 2.41+")
    for question, _, answer in doc["snapshot"]["answers"]:
        if question == "target":
            answer["lock_caveat"] = to_data(caveat)
    report = analysis.from_snapshot(doc["snapshot"])[1]
    line = ("locks: glibc 2.44 is newer than 2.43, the newest release the lock layouts were checked against: using the "
            "glibc 2.41+ layouts, since libc.so.6's thread descriptors match what they assume, but they were not "
            "checked against this release's sources")
    assert line in render_json.to_json(report)["warnings"]
    assert "warning: " + line in render_text(report).splitlines()
    assert not report.verdicts or all(v.kind != VerdictKind.INCOMPLETE for v in report.verdicts)


def test_a_target_without_glibc_is_said_to_be_static_or_musl_and_otherwise_makes_no_guess():
    from pyhang.model.glibc_kinds import LayoutsProblem, LibcAbsence
    from pyhang.model.waits import LayoutsIssue
    from pyhang.render.glibc import layouts_text
    static = LayoutsIssue(kind=LayoutsProblem.LIBC_NOT_MAPPED, detail=LibcAbsence.STATIC, library="/srv/app/tool")
    musl = LayoutsIssue(kind=LayoutsProblem.LIBC_NOT_MAPPED, detail=LibcAbsence.MUSL, library="/lib/ld-musl-x86_64.so.1")
    neither = LayoutsIssue(kind=LayoutsProblem.LIBC_NOT_MAPPED)
    assert layouts_text(static).startswith("/srv/app/tool is linked statically (no libc.so is mapped)")
    assert layouts_text(musl).startswith("the target's libc is musl (/lib/ld-musl-x86_64.so.1), not glibc")
    assert layouts_text(neither) == "no libc is mapped in the target: glibc version unknown"
    assert all("?" not in layouts_text(i) for i in (static, musl, neither))


def test_musls_libc_is_known_by_alpines_names_and_by_debians_musl_directory():
    from pyhang.native_facts import musl_libc
    for path in ("/lib/ld-musl-x86_64.so.1", "/usr/lib/libc.musl-x86_64.so.1", "/usr/lib/x86_64-linux-musl/libc.so"):
        assert musl_libc(path), path
    for path in ("/usr/lib/x86_64-linux-gnu/libc.so.6", "/opt/musl-app/libfoo.so", "", None):
        assert not musl_libc(path), path
