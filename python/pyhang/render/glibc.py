"""The words of what the native glibc decoders report as kinds and numbers
(model.waits): what is odd about a lock's bytes (LockIssue), why a lock
candidate scored what it did (Reason, Candidate), how the identification
decided (HowIdentified) and why it could not (IdentifyFailure), why the
lock layouts cannot be used or need a caveat (LayoutsIssue, with libc's
thread descriptors that contradict them: DescriptorIssue), why glibc's
lists of threads were not walked to the end (ThreadListIssue) and why
pthread_t cannot be mapped to TIDs (DescriptorsIssue).  One table
of words per vocabulary of model.kinds."""
from pyhang.model.glibc_kinds import DescriptorCheck, DescriptorsProblem, IdentifyProblem, LayoutsProblem, \
    LibcAbsence, LockEvidence, LockProblem, ScoreReason, ThreadListProblem
from pyhang.model.kinds import ReaderFailure, TargetWarning
from pyhang.model.warning_facts import TargetIssue
from pyhang.render.target import object_problem_text, reader_failure

_MASK64 = (1 << 64) - 1

# What is odd about a lock's bytes; %(value)d, %(other)d, %(hex)s, %(hex_other)s, %(object)s.
LOCK_PROBLEMS = {
    LockProblem.UNREADABLE: "cannot read %(object)s at %(hex)s",
    LockProblem.DESTROYED: "__kind is -1: destroyed by pthread_mutex_destroy, or not a mutex",
    LockProblem.KIND_UNKNOWN_BITS: "__kind %(hex)s has bits no glibc mutex kind uses",
    LockProblem.KIND_PI_AND_PP: "__kind has both priority-inherit and priority-protect",
    LockProblem.KIND_ROBUST_AND_PP: "__kind has both robust and priority-protect",
    LockProblem.OWNER_NOT_TID: "__owner %(value)d is not a TID",
    LockProblem.NUSERS_NOT_COUNT: "__nusers %(value)d is not a user count",
    LockProblem.LOCK_WORD_TID_NOT_TID: "lock word TID %(value)d is not a TID",
    LockProblem.OWNER_DIFFERS_FROM_LOCK_WORD: "__owner %(value)d differs from the lock word's TID %(other)d "
                                              "(caught mid-update?)",
    LockProblem.LOCK_NOT_STATE: "__lock %(hex)s is not 0, 1 or 2",
    LockProblem.COUNT_ON_NON_RECURSIVE: "__count %(value)d on a non-recursive mutex",
    LockProblem.RECURSIVE_COUNT_ZERO: "recursive mutex locked with __count 0",
    LockProblem.COUNT_NOT_RECURSION: "__count %(value)d is not a recursion count",
    LockProblem.UNLOCKED_WITH_OWNER: "unlocked but __owner is %(value)d",
    LockProblem.ROBUST_LIST_NOT_POINTERS: "robust list links are not pointers",
    LockProblem.FLAGS_NOT_KIND: "__flags %(value)d is not a rwlock kind",
    LockProblem.SHARED_NOT_FLAG: "__shared %(value)d is not 0, 1 or 128",
    LockProblem.WRITER_NOT_TID: "writer %(value)d is not a TID",
    LockProblem.PADDING_NOT_ZERO: "padding at +%(value)d is not zero",
    LockProblem.READERS_NOT_COUNT: "__readers counts %(value)d readers",
    LockProblem.WRITERS_NOT_COUNT: "__writers %(hex)s is not a count",
    LockProblem.FUTEX_WORDS_NOT_STATE: "futex words %(hex)s/%(hex_other)s are not 0..3",
    LockProblem.WRITER_IN_READ_PHASE: "__cur_writer %(value)d set on a lock in a read phase",
    LockProblem.QUEUE_COUNTS_NOT_COUNTS: "reader/writer counts are not counts",
    LockProblem.WRITE_AND_READ_HELD: "write-held by %(value)d and read-held by %(other)d",
    LockProblem.VALUE_ABOVE_MAX: "value %(hex)s exceeds SEM_VALUE_MAX",
    LockProblem.NWAITERS_NOT_COUNT: "nwaiters %(value)d is not a count",
    LockProblem.PRIVATE_NOT_FLAG: "private %(value)d is not 0/1/128",
    LockProblem.WREFS_NOT_COUNT: "__wrefs counts %(value)d waiters",
    LockProblem.G1_START_PAST_WSEQ: "__g1_start is past __wseq",
    LockProblem.WSEQ_NOT_SEQUENCE: "__wseq %(hex)s is not a sequence",
    LockProblem.GROUP_COUNTS_NOT_COUNTS: "group counts are not counts",
    LockProblem.UNUSED_NOT_ZERO: "unused word at +%(value)d is not zero",
    LockProblem.SEQUENCES_OUT_OF_ORDER: "sequence counters out of order",
    LockProblem.COND_NWAITERS_NOT_COUNT: "__nwaiters is not a count",
    LockProblem.MUTEX_NOT_POINTER: "__mutex is not a pointer",
}

# The C type of a lock, by the first part of its kind (a WaitKind or a GlibcLockKind: "rwlock-read", "mutex-normal").
_OBJECTS = {"mutex": "pthread_mutex_t", "rwlock": "pthread_rwlock_t", "semaphore": "sem_t", "condvar": "pthread_cond_t"}

# Why a candidate gained or lost points; %(layout)s, %(problem)s, %(hint)s.
SCORE_REASONS = {
    ScoreReason.PLAUSIBLE: "plausible %(layout)s",
    ScoreReason.IMPLAUSIBLE: "implausible: %(problem)s",
    ScoreReason.PLAUSIBLE_AT_ARGUMENT: "plausible at the lock function's first argument",
    ScoreReason.WORD_UNCHANGED: "word still holds the value the thread waits on",
    ScoreReason.WORD_CHANGED: "word changed since the thread went to sleep",
    ScoreReason.LOCKED: "locked",
    ScoreReason.UNLOCKED: "unlocked, yet a thread waits on it",
    ScoreReason.HAS_WAITERS: "lock word says it has waiters",
    ScoreReason.OWNER_RECORDED: "owner recorded",
    ScoreReason.NO_OWNER_RECORDED: "locked but no owner recorded",
    ScoreReason.LOCK_PI_ON_PI: "FUTEX_LOCK_PI on a priority-inherit mutex",
    ScoreReason.LOCK_PI_ON_NON_PI: "FUTEX_LOCK_PI on a mutex that is not priority-inherit",
    ScoreReason.WAIT_ON_PI: "plain futex wait on a priority-inherit mutex",
    ScoreReason.LOCK_PI_ON_RWLOCK: "FUTEX_LOCK_PI on a rwlock",
    ScoreReason.LOCK_PI_ON_SEMAPHORE: "FUTEX_LOCK_PI on a semaphore",
    ScoreReason.LOCK_PI_ON_CONDVAR: "FUTEX_LOCK_PI on a condvar",
    ScoreReason.WRITERS_FUTEX_WAITERS: "__writers_futex has waiters",
    ScoreReason.WRITERS_FUTEX_NO_WAITERS: "__writers_futex has no waiters",
    ScoreReason.WRITER_HOLDS_OR_NEXT: "a writer holds it or is next",
    ScoreReason.NO_WRITER_HOLDS: "no writer holds it",
    ScoreReason.WRPHASE_FUTEX_WAITERS: "__wrphase_futex has waiters",
    ScoreReason.WRPHASE_FUTEX_NO_WAITERS: "__wrphase_futex has no waiters",
    ScoreReason.WRITE_PHASE: "write phase: readers wait for it to end",
    ScoreReason.READ_PHASE_WRITER_WAITING: "read phase with a writer waiting for readers to leave",
    ScoreReason.READ_PHASE_NO_WRITER: "read phase without a waiting writer",
    ScoreReason.READERS_WAITING: "__readers has RWAITING",
    ScoreReason.READERS_NOT_WAITING: "__readers without RWAITING",
    ScoreReason.READERS_QUEUED: "readers queued",
    ScoreReason.NO_READERS_QUEUED: "no readers queued",
    ScoreReason.WRITER_HOLDS_OR_WAITS: "a writer holds or waits",
    ScoreReason.WRITERS_QUEUED: "writers queued",
    ScoreReason.NO_WRITERS_QUEUED: "no writers queued",
    ScoreReason.HELD: "held",
    ScoreReason.INTERNAL_CONTENDED: "internal lock contended",
    ScoreReason.INTERNAL_UNCONTENDED: "internal lock not contended",
    ScoreReason.VALUE_ZERO: "value 0",
    ScoreReason.VALUE_NOT_ZERO: "value is not 0, yet a thread waits",
    ScoreReason.NWAITERS_POSITIVE: "nwaiters > 0",
    ScoreReason.NWAITERS_ZERO: "nwaiters is 0",
    ScoreReason.WAITERS_COUNTED: "waiter count > 0",
    ScoreReason.NO_WAITERS_COUNTED: "no waiters counted",
    ScoreReason.MUTEX_RECORDED: "__mutex recorded",
    ScoreReason.INTERNAL_WORD_WAITERS: "waiter count > 0 (internal word)",
    ScoreReason.INTERNAL_WORD_NO_WAITERS: "internal word and no waiters",
    ScoreReason.FUTEX_WORD: "a futex word",
    ScoreReason.LOCK_WORD_STATE: "lock word is 1 or 2",
    ScoreReason.LOCK_WORD_NOT_STATE: "lock word is not 1 or 2",
    ScoreReason.JOINED_TID: "word holds the joined thread's TID",
    ScoreReason.FRAME_NAME: "frame name says %(hint)s",
    ScoreReason.CONDVAR_MUTEX: "is the mutex pthread_cond_wait was given",
}

# How the identification decided; %(futex)s, %(op)s, %(frame)s (", frame says mutex" or ""), %(best)s.
LOCK_EVIDENCE = {
    LockEvidence.FUTEX_CALL: "futex %(futex)s op %(op)s%(frame)s; best: %(best)s",
    LockEvidence.LOCK_ARGUMENT: "not in futex(2); used the first argument of the frame named like a lock function",
}

# Why it identified nothing; %(futex)s, %(syscall)s.
IDENTIFY_PROBLEMS = {
    IdentifyProblem.FUTEX_UNREADABLE: "futex word %(futex)s is unreadable",
    IdentifyProblem.NO_REGISTERS: "no registers for frame 0",
    IdentifyProblem.NOT_FUTEX_WAIT: "not in a futex wait (system call %(syscall)s)",
    IdentifyProblem.LAYOUTS_UNKNOWN: "glibc's lock layouts are not known",
}


def _hex(value):
    return "0x%x" % ((value or 0) & _MASK64)


def _words(table, kind, values):
    """The words of `kind` in `table` with `values`; an unknown kind (a newer pyhang's) is named as it is."""
    words = table.get(kind)
    return words % values if words is not None else str(kind)


def lock_problem_text(problem, kind=""):
    """What is odd about a lock's bytes (GlibcLock.problem, Candidate.problem: LockIssues) in one line;
    `kind`: the lock's (a WaitKind or GlibcLockKind), which names its C type."""
    obj = _OBJECTS.get((kind or "").split("-")[0], "the lock")
    return "; ".join(_words(LOCK_PROBLEMS, i.kind, {"value": i.value, "other": i.other, "hex": _hex(i.value),
                                                    "hex_other": _hex(i.other), "object": obj}) for i in problem)


def reason_text(reason, candidate):
    """"+3 plausible glibc 2.41+": one Reason of `candidate` (a Candidate) with its points."""
    values = {"layout": candidate.layout, "hint": reason.hint,
              "problem": lock_problem_text(candidate.problem, candidate.kind)}
    return "%+d %s" % (reason.points, _words(SCORE_REASONS, reason.kind, values))


def reasons_text(candidate):
    """"+3 plausible glibc 2.41+; +3 locked; ...": every reason of a Candidate's score, in order."""
    return "; ".join(reason_text(r, candidate) for r in candidate.reasons)


def candidate_text(candidate):
    """"mutex 0x55d0c2a4e040: 14 (+3 plausible glibc 2.41+; ...)": a Candidate the identification considered."""
    return "%s 0x%x: %d (%s)" % (candidate.kind, candidate.address, candidate.score, reasons_text(candidate))


def evidence_text(evidence):
    """How the native identification decided (a HowIdentified), in one line; None for None."""
    if evidence is None:
        return None
    best = evidence.best
    values = {"futex": _hex(evidence.futex), "op": _hex(evidence.futex_op),
              "frame": ", frame says %s" % evidence.hint if evidence.hint else "",
              "best": reasons_text(best) if best is not None else "?"}
    return _words(LOCK_EVIDENCE, evidence.kind, values)


def identify_problem_text(problem):
    """Why the native identification identified nothing (an IdentifyFailure), in one line; None for none."""
    if not problem:
        return None
    return _words(IDENTIFY_PROBLEMS, problem.kind, {"futex": _hex(problem.futex), "syscall": problem.syscall})


# A libthread_db descriptor against the decoders' assumption; %(desc)s (described), %(value)d, %(least)d, %(most)d.
_POINTERS = ", where the lock layouts assume x86_64's 64-bit pointers (mutex __list, the pre-2.25 condvar's __mutex)"
DESCRIPTOR_CHECKS = {
    DescriptorCheck.TID_NOT_ONE_WORD: "_thread_db_pthread_tid describes %(desc)s, where the lock words (mutex __owner, "
                                      "rwlock __cur_writer, robust and PI mutex lock words) and pthread_t to TID mapping "
                                      "assume one 32-bit TID inside struct pthread",
    DescriptorCheck.SIZEOF_PTHREAD: "_thread_db_sizeof_pthread is %(value)d bytes, not the size of a struct pthread that "
                                    "holds its TCB header and tid (%(least)d to %(most)d bytes)",
    DescriptorCheck.TCB_HEADER: "_thread_db_pthread_dtvp describes %(desc)s, where pyhang assumes x86_64's TCB header at "
                                "the start of struct pthread (tcb +0, the dtv pointer +8, self +16), by which it tells "
                                "a thread descriptor from other memory",
    DescriptorCheck.THREAD_POINTER: "_thread_db_const_thread_area is register %(value)d, where pyhang assumes the thread "
                                    "pointer is x86_64's FS base (register %(most)d of sys/reg.h) and reads a thread's "
                                    "struct pthread at its fs_base",
    DescriptorCheck.SIZEOF_LIST_T: "_thread_db_sizeof_list_t is %(value)d bytes" + _POINTERS,
    DescriptorCheck.LIST_T_NEXT: "_thread_db_list_t_next describes %(desc)s" + _POINTERS,
    DescriptorCheck.LIST_T_PREV: "_thread_db_list_t_prev describes %(desc)s" + _POINTERS,
}

# Why no glibc is mapped in a target (libc-not-mapped's detail): %(library)s, the executable or musl's libc.
NO_GLIBC = {
    LibcAbsence.STATIC: "%(library)s is linked statically (no libc.so is mapped), so the glibc built into it has no "
                        "version pyhang can read and its lock layouts are not known",
    LibcAbsence.MUSL: "the target's libc is musl (%(library)s), not glibc: pyhang reads glibc's lock layouts only",
}

# Why the lock layouts cannot be used, or their caveat; the LayoutsIssue's fields, and %(release)s ("glibc 2.45"
# or "glibc is only known to be 2.41 or later (from its version-definitions)"), %(why)s, %(range)s.
LAYOUTS_PROBLEMS = {
    LayoutsProblem.LIBC_NOT_MAPPED: "no libc is mapped in the target: glibc version unknown",
    LayoutsProblem.LIBC_UNREADABLE: "cannot open %(library)s%(why)s: glibc version unknown",
    LayoutsProblem.NO_VERSION: "no glibc version found in %(library)s (no __nptl_version, banner or GLIBC_2.x versions)",
    LayoutsProblem.NOT_A_VERSION: "not a glibc version: %(version)s",
    LayoutsProblem.NOT_READ: "glibc version not read yet",
    LayoutsProblem.OUTSIDE: "glibc %(version)s is outside the supported lock layouts (%(oldest)s%(range)s)",
    LayoutsProblem.CONTRADICTED: "glibc %(version)s: the lock layouts cannot be used with %(library)s, whose thread "
                                 "descriptors differ from what they assume: %(why)s",
    LayoutsProblem.UNVOUCHED: "%(release)s; libc's thread descriptors cannot confirm that the %(layouts)s layouts fit "
                              "it: %(why)s",
    LayoutsProblem.NEWER_THAN_CHECKED: "%(release)s: using the %(layouts)s layouts, since %(library)s's thread "
                                       "descriptors match what they assume, but they were not checked against this "
                                       "release's sources",
}


def describe_descriptor(desc):
    """"one 32-bit field at +720": a descriptor's words [size in bits, count, offset]."""
    bits, count, offset = (list(desc) + [0, 0, 0])[:3]
    if count == 1:
        return "one %d-bit field at +%d" % (bits, offset)
    if count == 0:
        return "a flexible array of %d-bit elements at +%d" % (bits, offset)
    return "%d %d-bit elements at +%d" % (count, bits, offset)


def descriptor_text(d):
    """A DescriptorIssue in one sentence."""
    return _words(DESCRIPTOR_CHECKS, d.kind, {"desc": describe_descriptor(d.desc), "value": d.value, "least": d.least,
                                              "most": d.most})


def _release(issue):
    """Which release the layouts were not checked against, and the newest they were."""
    if issue.exact:
        return "glibc %s is newer than %s, the newest release the lock layouts were checked against" % (
            issue.version, issue.newest)
    return "glibc is only known to be %s or later (from its %s), and %s is the newest release the lock layouts " \
           "were checked against" % (issue.version, issue.source, issue.newest)


def _unvouched_why(issue):
    if not issue.library:
        return "the version was not read from libc%s, so it has no thread descriptors" % (
            " (%s)" % issue.source if issue.source else "")
    return "%s exports no %s" % (issue.library, ", ".join(issue.missing))


def layouts_text(issue):
    """Why glibc's lock layouts cannot be used, or the caveat of those used (a LayoutsIssue), in one line; None
    for none."""
    if not issue:
        return None
    why = ""
    if issue.kind in (LayoutsProblem.LIBC_NOT_MAPPED, LayoutsProblem.NO_VERSION) and issue.detail in NO_GLIBC:
        return NO_GLIBC[issue.detail] % {"library": issue.library or "its executable"}
    if issue.kind == LayoutsProblem.LIBC_UNREADABLE and issue.detail in vars(ReaderFailure).values():
        return "%s: glibc version unknown" % reader_failure(issue.detail, issue.library, issue.error_number)
    if issue.kind == LayoutsProblem.LIBC_UNREADABLE and issue.detail == TargetWarning.BUILD_ID_MISMATCH:
        why = ": " + object_problem_text(TargetIssue(issue.detail, text=issue.build_id,
                                                     other_text=issue.core_build_id))
    elif issue.kind == LayoutsProblem.LIBC_UNREADABLE and issue.detail:
        why = ": " + issue.detail
    elif issue.kind == LayoutsProblem.CONTRADICTED:
        why = "; ".join(descriptor_text(d) for d in issue.differs)
    elif issue.kind == LayoutsProblem.UNVOUCHED:
        why = _unvouched_why(issue)
    values = {"version": issue.version, "library": issue.library, "oldest": issue.oldest, "layouts": issue.layouts,
              "range": " and later" if issue.open_ended else " to %s" % issue.newest, "why": why,
              "release": _release(issue) if issue.newest else ""}
    return _words(LAYOUTS_PROBLEMS, issue.kind, values)


# Why glibc's lists of threads were not found or walked to the end; %(library)s, %(at)s ("entry 3 of
# _dl_stack_used (0x7f…) at 0x7f…"), %(where)s (the head), %(pthread)s, %(value)s, %(expected)s, %(number)d.
THREAD_LIST_PROBLEMS = {
    ThreadListProblem.LIBC_NOT_MAPPED: "libc is not mapped: cannot find glibc's lists of threads",
    ThreadListProblem.NO_DESCRIPTORS: "no descriptors of glibc's lists of threads (_thread_db_pthread_list and the "
                                      "lists' heads) in %(library)s",
    ThreadListProblem.NEXT_PREV_NOT_POINTERS: "%(library)s's _thread_db_list_t_next/prev are not two 64-bit pointers",
    ThreadListProblem.HEADS_NOT_LIST_T: "%(library)s's _thread_db_rtld_global__dl_stack_used/_user do not both "
                                        "describe a list_t",
    ThreadListProblem.NO_RTLD_GLOBAL: "no _rtld_global in ld.so nor __nptl_rtld_global in %(library)s: cannot find "
                                      "glibc's lists of threads",
    ThreadListProblem.HEAD_UNREADABLE: "cannot read the head of %(where)s",
    ThreadListProblem.TOO_MANY_ENTRIES: "more than %(number)d entries on glibc's lists of threads, at %(at)s: not a "
                                        "list, or a cycle",
    ThreadListProblem.NOT_AN_ENTRY: "%(at)s: not a pointer to a list entry",
    ThreadListProblem.SEEN_BEFORE: "%(at)s: seen before (a cycle that misses the head)",
    ThreadListProblem.PREV_UNREADABLE: "cannot read %(at)s",
    ThreadListProblem.PREV_MISMATCH: "%(at)s: its prev is %(value)s, not %(expected)s (the list changed while read, "
                                     "or is not a list)",
    ThreadListProblem.NOT_PTHREAD: "%(at)s: no struct pthread at %(pthread)s (its TCB header does not point to itself)",
    ThreadListProblem.TID_UNREADABLE: "cannot read the tid of the struct pthread at %(pthread)s",
    ThreadListProblem.TID_TWICE: "TID %(number)d is on glibc's lists twice (at %(value)s and %(pthread)s)",
    ThreadListProblem.NEXT_UNREADABLE: "cannot read the next pointer of %(at)s",
}


def thread_list_text(issue):
    """Why glibc's lists of threads were not found or walked to the end (a ThreadListIssue), in one line;
    None for none."""
    if not issue:
        return None
    where = "%s (%s)" % (issue.head, _hex(issue.head_address))
    values = {"library": issue.library, "where": where, "at": "entry %d of %s at %s" % (issue.step, where,
                                                                                      _hex(issue.entry)),
              "pthread": _hex(issue.pthread), "value": _hex(issue.value), "expected": _hex(issue.expected),
              "number": issue.number}
    return _words(THREAD_LIST_PROBLEMS, issue.kind, values)


# Why pthread_t cannot be mapped to TIDs; %(library)s, %(tried)s, %(why)s (the tid descriptor's sentence).
DESCRIPTORS_PROBLEMS = {
    DescriptorsProblem.LIBC_NOT_MAPPED: "libc is not mapped: cannot map pthread_t to TIDs",
    DescriptorsProblem.NO_TID_DESCRIPTOR: "no _thread_db_pthread_tid in %(tried)s: cannot map pthread_t to TIDs",
    DescriptorsProblem.TID_NOT_ONE_WORD: "cannot map pthread_t to TIDs: %(library)s's %(why)s",
}


def descriptors_text(issue):
    """Why pthread_t cannot be mapped to TIDs (a DescriptorsIssue), in one line; None for none."""
    if not issue:
        return None
    tried = ", ".join(p + (" (cannot open)" if p in issue.unopened else "") for p in issue.tried)
    why = descriptor_text(issue.tid) if issue.tid is not None else "?"
    return _words(DESCRIPTORS_PROBLEMS, issue.kind, {"library": issue.library, "tried": tried, "why": why})
