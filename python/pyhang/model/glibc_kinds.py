"""The vocabularies of what the glibc decoders found about a lock, a thread
list or libc's thread descriptors: what is odd about a lock's bytes, how a
candidate was scored, how a wait was identified or why it was not, why the
lock layouts cannot be used, and what the descriptors say (each the native
name table of its enum, tested equal in python/tests/test_glibc_words.py;
worded by render/glibc.py).  The report's own vocabularies are in
model/kinds.py."""


class LockProblem:
    """What is odd about a decoded glibc lock's bytes (model.waits.LockIssue.kind; the native
    LockProblem name table; worded by render.glibc)."""
    UNREADABLE = "unreadable"
    DESTROYED = "destroyed"
    KIND_UNKNOWN_BITS = "kind-unknown-bits"
    KIND_PI_AND_PP = "kind-pi-and-pp"
    KIND_ROBUST_AND_PP = "kind-robust-and-pp"
    OWNER_NOT_TID = "owner-not-tid"
    NUSERS_NOT_COUNT = "nusers-not-count"
    LOCK_WORD_TID_NOT_TID = "lock-word-tid-not-tid"
    OWNER_DIFFERS_FROM_LOCK_WORD = "owner-differs-from-lock-word"
    LOCK_NOT_STATE = "lock-not-state"
    COUNT_ON_NON_RECURSIVE = "count-on-non-recursive"
    RECURSIVE_COUNT_ZERO = "recursive-count-zero"
    COUNT_NOT_RECURSION = "count-not-recursion"
    UNLOCKED_WITH_OWNER = "unlocked-with-owner"
    ROBUST_LIST_NOT_POINTERS = "robust-list-not-pointers"
    FLAGS_NOT_KIND = "flags-not-kind"
    SHARED_NOT_FLAG = "shared-not-flag"
    WRITER_NOT_TID = "writer-not-tid"
    PADDING_NOT_ZERO = "padding-not-zero"
    READERS_NOT_COUNT = "readers-not-count"
    WRITERS_NOT_COUNT = "writers-not-count"
    FUTEX_WORDS_NOT_STATE = "futex-words-not-state"
    WRITER_IN_READ_PHASE = "writer-in-read-phase"
    QUEUE_COUNTS_NOT_COUNTS = "queue-counts-not-counts"
    WRITE_AND_READ_HELD = "write-and-read-held"
    VALUE_ABOVE_MAX = "value-above-max"
    NWAITERS_NOT_COUNT = "nwaiters-not-count"
    PRIVATE_NOT_FLAG = "private-not-flag"
    WREFS_NOT_COUNT = "wrefs-not-count"
    G1_START_PAST_WSEQ = "g1-start-past-wseq"
    WSEQ_NOT_SEQUENCE = "wseq-not-sequence"
    GROUP_COUNTS_NOT_COUNTS = "group-counts-not-counts"
    UNUSED_NOT_ZERO = "unused-not-zero"
    SEQUENCES_OUT_OF_ORDER = "sequences-out-of-order"
    COND_NWAITERS_NOT_COUNT = "cond-nwaiters-not-count"
    MUTEX_NOT_POINTER = "mutex-not-pointer"
    ALL = (
        UNREADABLE, DESTROYED, KIND_UNKNOWN_BITS, KIND_PI_AND_PP, KIND_ROBUST_AND_PP, OWNER_NOT_TID,
        NUSERS_NOT_COUNT, LOCK_WORD_TID_NOT_TID, OWNER_DIFFERS_FROM_LOCK_WORD, LOCK_NOT_STATE,
        COUNT_ON_NON_RECURSIVE, RECURSIVE_COUNT_ZERO, COUNT_NOT_RECURSION, UNLOCKED_WITH_OWNER,
        ROBUST_LIST_NOT_POINTERS, FLAGS_NOT_KIND, SHARED_NOT_FLAG, WRITER_NOT_TID, PADDING_NOT_ZERO,
        READERS_NOT_COUNT, WRITERS_NOT_COUNT, FUTEX_WORDS_NOT_STATE, WRITER_IN_READ_PHASE,
        QUEUE_COUNTS_NOT_COUNTS, WRITE_AND_READ_HELD, VALUE_ABOVE_MAX, NWAITERS_NOT_COUNT, PRIVATE_NOT_FLAG,
        WREFS_NOT_COUNT, G1_START_PAST_WSEQ, WSEQ_NOT_SEQUENCE, GROUP_COUNTS_NOT_COUNTS, UNUSED_NOT_ZERO,
        SEQUENCES_OUT_OF_ORDER, COND_NWAITERS_NOT_COUNT, MUTEX_NOT_POINTER)


class ScoreReason:
    """Why a lock candidate gained or lost points (model.waits.Reason.kind; the native
    ScoreReason name table; worded by render.glibc)."""
    PLAUSIBLE = "plausible"
    IMPLAUSIBLE = "implausible"
    PLAUSIBLE_AT_ARGUMENT = "plausible-at-argument"
    WORD_UNCHANGED = "word-unchanged"
    WORD_CHANGED = "word-changed"
    LOCKED = "locked"
    UNLOCKED = "unlocked"
    HAS_WAITERS = "has-waiters"
    OWNER_RECORDED = "owner-recorded"
    NO_OWNER_RECORDED = "no-owner-recorded"
    LOCK_PI_ON_PI = "lock-pi-on-pi"
    LOCK_PI_ON_NON_PI = "lock-pi-on-non-pi"
    WAIT_ON_PI = "wait-on-pi"
    LOCK_PI_ON_RWLOCK = "lock-pi-on-rwlock"
    LOCK_PI_ON_SEMAPHORE = "lock-pi-on-semaphore"
    LOCK_PI_ON_CONDVAR = "lock-pi-on-condvar"
    WRITERS_FUTEX_WAITERS = "writers-futex-waiters"
    WRITERS_FUTEX_NO_WAITERS = "writers-futex-no-waiters"
    WRITER_HOLDS_OR_NEXT = "writer-holds-or-next"
    NO_WRITER_HOLDS = "no-writer-holds"
    WRPHASE_FUTEX_WAITERS = "wrphase-futex-waiters"
    WRPHASE_FUTEX_NO_WAITERS = "wrphase-futex-no-waiters"
    WRITE_PHASE = "write-phase"
    READ_PHASE_WRITER_WAITING = "read-phase-writer-waiting"
    READ_PHASE_NO_WRITER = "read-phase-no-writer"
    READERS_WAITING = "readers-waiting"
    READERS_NOT_WAITING = "readers-not-waiting"
    READERS_QUEUED = "readers-queued"
    NO_READERS_QUEUED = "no-readers-queued"
    WRITER_HOLDS_OR_WAITS = "writer-holds-or-waits"
    WRITERS_QUEUED = "writers-queued"
    NO_WRITERS_QUEUED = "no-writers-queued"
    HELD = "held"
    INTERNAL_CONTENDED = "internal-contended"
    INTERNAL_UNCONTENDED = "internal-uncontended"
    VALUE_ZERO = "value-zero"
    VALUE_NOT_ZERO = "value-not-zero"
    NWAITERS_POSITIVE = "nwaiters-positive"
    NWAITERS_ZERO = "nwaiters-zero"
    WAITERS_COUNTED = "waiters-counted"
    NO_WAITERS_COUNTED = "no-waiters-counted"
    MUTEX_RECORDED = "mutex-recorded"
    INTERNAL_WORD_WAITERS = "internal-word-waiters"
    INTERNAL_WORD_NO_WAITERS = "internal-word-no-waiters"
    FUTEX_WORD = "futex-word"
    LOCK_WORD_STATE = "lock-word-state"
    LOCK_WORD_NOT_STATE = "lock-word-not-state"
    JOINED_TID = "joined-tid"
    FRAME_NAME = "frame-name"
    CONDVAR_MUTEX = "condvar-mutex"
    ALL = (
        PLAUSIBLE, IMPLAUSIBLE, PLAUSIBLE_AT_ARGUMENT, WORD_UNCHANGED, WORD_CHANGED, LOCKED, UNLOCKED,
        HAS_WAITERS, OWNER_RECORDED, NO_OWNER_RECORDED, LOCK_PI_ON_PI, LOCK_PI_ON_NON_PI, WAIT_ON_PI,
        LOCK_PI_ON_RWLOCK, LOCK_PI_ON_SEMAPHORE, LOCK_PI_ON_CONDVAR, WRITERS_FUTEX_WAITERS,
        WRITERS_FUTEX_NO_WAITERS, WRITER_HOLDS_OR_NEXT, NO_WRITER_HOLDS, WRPHASE_FUTEX_WAITERS,
        WRPHASE_FUTEX_NO_WAITERS, WRITE_PHASE, READ_PHASE_WRITER_WAITING, READ_PHASE_NO_WRITER,
        READERS_WAITING, READERS_NOT_WAITING, READERS_QUEUED, NO_READERS_QUEUED, WRITER_HOLDS_OR_WAITS,
        WRITERS_QUEUED, NO_WRITERS_QUEUED, HELD, INTERNAL_CONTENDED, INTERNAL_UNCONTENDED, VALUE_ZERO,
        VALUE_NOT_ZERO, NWAITERS_POSITIVE, NWAITERS_ZERO, WAITERS_COUNTED, NO_WAITERS_COUNTED,
        MUTEX_RECORDED, INTERNAL_WORD_WAITERS, INTERNAL_WORD_NO_WAITERS, FUTEX_WORD, LOCK_WORD_STATE,
        LOCK_WORD_NOT_STATE, JOINED_TID, FRAME_NAME, CONDVAR_MUTEX)


class LockEvidence:
    """How the native identification decided what a thread waits on (model.waits.HowIdentified.kind;
    the native Evidence name table; worded by render.glibc)."""
    FUTEX_CALL = "futex-call"
    LOCK_ARGUMENT = "lock-argument"
    ALL = (FUTEX_CALL, LOCK_ARGUMENT)


class IdentifyProblem:
    """Why the native identification identified nothing (model.waits.IdentifyFailure.kind; the
    native IdentifyProblem name table; worded by render.glibc)."""
    FUTEX_UNREADABLE = "futex-unreadable"
    NO_REGISTERS = "no-registers"
    NOT_FUTEX_WAIT = "not-futex-wait"
    LAYOUTS_UNKNOWN = "layouts-unknown"
    ALL = (FUTEX_UNREADABLE, NO_REGISTERS, NOT_FUTEX_WAIT, LAYOUTS_UNKNOWN)


class LibcAbsence:
    """Why no glibc is mapped in a target (model.waits.LayoutsIssue.detail of libc-not-mapped), from the files
    it maps: none is a libc (a statically linked executable), or the libc is musl's.  Found in Python
    (native_facts), so no native name table."""
    STATIC = "static"
    MUSL = "musl"
    ALL = (STATIC, MUSL)


class LayoutsProblem:
    """Why glibc's lock layouts cannot be used for a target, or need a caveat (model.waits.LayoutsIssue.kind;
    the native LayoutsProblem name table; worded by render.glibc)."""
    LIBC_NOT_MAPPED = "libc-not-mapped"
    LIBC_UNREADABLE = "libc-unreadable"
    NO_VERSION = "no-version"
    NOT_A_VERSION = "not-a-version"
    NOT_READ = "not-read"
    OUTSIDE = "outside"
    CONTRADICTED = "contradicted"
    UNVOUCHED = "unvouched"
    NEWER_THAN_CHECKED = "newer-than-checked"
    ALL = (
        LIBC_NOT_MAPPED, LIBC_UNREADABLE, NO_VERSION, NOT_A_VERSION, NOT_READ, OUTSIDE, CONTRADICTED,
        UNVOUCHED, NEWER_THAN_CHECKED)


class DescriptorCheck:
    """A libthread_db descriptor of libc that contradicts what the decoders assume
    (model.waits.DescriptorIssue.kind; the native DescriptorCheck name table; worded by render.glibc)."""
    TID_NOT_ONE_WORD = "tid-not-one-word"
    SIZEOF_PTHREAD = "sizeof-pthread"
    TCB_HEADER = "tcb-header"
    THREAD_POINTER = "thread-pointer"
    SIZEOF_LIST_T = "sizeof-list-t"
    LIST_T_NEXT = "list-t-next"
    LIST_T_PREV = "list-t-prev"
    ALL = (TID_NOT_ONE_WORD, SIZEOF_PTHREAD, TCB_HEADER, THREAD_POINTER, SIZEOF_LIST_T, LIST_T_NEXT, LIST_T_PREV)


class ThreadListProblem:
    """Why glibc's lists of threads were not found, or a walk of them stopped early
    (model.waits.ThreadListIssue.kind; the native ThreadListProblem name table; worded by render.glibc)."""
    LIBC_NOT_MAPPED = "libc-not-mapped"
    NO_DESCRIPTORS = "no-descriptors"
    NEXT_PREV_NOT_POINTERS = "next-prev-not-pointers"
    HEADS_NOT_LIST_T = "heads-not-list-t"
    NO_RTLD_GLOBAL = "no-rtld-global"
    HEAD_UNREADABLE = "head-unreadable"
    TOO_MANY_ENTRIES = "too-many-entries"
    NOT_AN_ENTRY = "not-an-entry"
    SEEN_BEFORE = "seen-before"
    PREV_UNREADABLE = "prev-unreadable"
    PREV_MISMATCH = "prev-mismatch"
    NOT_PTHREAD = "not-pthread"
    TID_UNREADABLE = "tid-unreadable"
    TID_TWICE = "tid-twice"
    NEXT_UNREADABLE = "next-unreadable"
    ALL = (
        LIBC_NOT_MAPPED, NO_DESCRIPTORS, NEXT_PREV_NOT_POINTERS, HEADS_NOT_LIST_T, NO_RTLD_GLOBAL,
        HEAD_UNREADABLE, TOO_MANY_ENTRIES, NOT_AN_ENTRY, SEEN_BEFORE, PREV_UNREADABLE, PREV_MISMATCH,
        NOT_PTHREAD, TID_UNREADABLE, TID_TWICE, NEXT_UNREADABLE)


class DescriptorsProblem:
    """Why pthread_t cannot be mapped to TIDs through libc's libthread_db descriptors
    (model.waits.DescriptorsIssue.kind; the native DescriptorsProblem name table; worded by render.glibc)."""
    LIBC_NOT_MAPPED = "libc-not-mapped"
    NO_TID_DESCRIPTOR = "no-tid-descriptor"
    TID_NOT_ONE_WORD = "tid-not-one-word"
    ALL = (LIBC_NOT_MAPPED, NO_TID_DESCRIPTOR, TID_NOT_ONE_WORD)
