// glibc's locks as they sit in target memory (x86_64): decoders for
// pthread_mutex_t, pthread_rwlock_t, sem_t and pthread_cond_t, each reading
// the bytes of one object with the layout of the target's glibc version
// (pyhang/glibc/version.hpp, pyhang/glibc/layouts.hpp).
//
// No debug info is ever needed: the version comes from libc's own ELF file,
// layouts are tables (native/src/glibc/layouts.cpp) keyed by version range,
// and decoders read one bounded copy of each object through MemoryReader.
//
// What glibc records, and so what can be reported:
//  - mutex: the owner TID in __owner for every kind (normal, recursive,
//    errorcheck, adaptive, robust, PI, PP); for robust and PI mutexes also in
//    the lock word (__lock & FUTEX_TID_MASK).  Lock elision (TSX, off by
//    default) is the exception: an elided lock records no owner.
//  - rwlock: the write owner (__cur_writer since 2.25, __writer before), and
//    how many threads read-hold it, never which threads.
//  - semaphore: value and waiter count; a semaphore has no owner.
//  - condvar: waiter count; since 2.25 the condvar does not store the mutex
//    its waiters must reacquire: that is pthread_cond_wait's second argument,
//    known only if the caller's frame still has it (NativeFrame::rsi in
//    pyhang/glibc/identify.hpp).  The
//    pre-2.25 layout stores it (__mutex).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pyhang/base/names.hpp"
#include "pyhang/glibc/layouts.hpp"
#include "pyhang/target/memory.hpp"

namespace pyhang::glibc {

// The type of a decoded lock object.
enum class LockType : std::uint8_t {
  None,             // not decoded
  Mutex,            // a mutex whose kind could not be read
  MutexNormal,
  MutexRecursive,
  MutexErrorcheck,
  MutexAdaptive,
  Rwlock,
  Semaphore,
  Condvar,
};

inline constexpr std::array<Named<LockType>, 9> kLockTypeNames{{
    {LockType::None, ""},
    {LockType::Mutex, "mutex"},
    {LockType::MutexNormal, "mutex-normal"},
    {LockType::MutexRecursive, "mutex-recursive"},
    {LockType::MutexErrorcheck, "mutex-errorcheck"},
    {LockType::MutexAdaptive, "mutex-adaptive"},
    {LockType::Rwlock, "rwlock"},
    {LockType::Semaphore, "semaphore"},
    {LockType::Condvar, "condvar"},
}};
constexpr std::string_view to_string(LockType t) { return name_in(kLockTypeNames, t); }
constexpr std::optional<LockType> parse_lock_type(std::string_view s) { return parse_in(kLockTypeNames, s); }

// What a lock's bytes say besides its owner and counts.
enum class LockFlag : std::uint8_t {
  Robust,                    // mutex: robust
  Pi,                        // mutex: priority inheritance
  Pp,                        // mutex: priority protection (ceiling)
  Pshared,                   // process-shared
  Waiters,                   // mutex lock word: FUTEX_WAITERS, or 2 (contended)
  OwnerDied,                 // robust mutex: FUTEX_OWNER_DIED
  Inconsistent,              // robust mutex: its owner died, the next locker did not make it consistent
  NotRecoverable,            // robust mutex: unlocked while inconsistent, unusable
  PreferWriter,              // rwlock kind
  PreferWriterNonrecursive,  // rwlock kind
  ReadWaiters,               // rwlock: readers wait
  WriteWaiters,              // rwlock: writers wait
  ClockMonotonic,            // condvar: waits on CLOCK_MONOTONIC
  DestroyPending,            // condvar: pthread_cond_destroy waits for the waiters
};

inline constexpr std::array<Named<LockFlag>, 14> kLockFlagNames{{
    {LockFlag::Robust, "robust"},
    {LockFlag::Pi, "pi"},
    {LockFlag::Pp, "pp"},
    {LockFlag::Pshared, "pshared"},
    {LockFlag::Waiters, "waiters"},
    {LockFlag::OwnerDied, "owner-died"},
    {LockFlag::Inconsistent, "inconsistent"},
    {LockFlag::NotRecoverable, "not-recoverable"},
    {LockFlag::PreferWriter, "prefer-writer"},
    {LockFlag::PreferWriterNonrecursive, "prefer-writer-nonrecursive"},
    {LockFlag::ReadWaiters, "read-waiters"},
    {LockFlag::WriteWaiters, "write-waiters"},
    {LockFlag::ClockMonotonic, "clock-monotonic"},
    {LockFlag::DestroyPending, "destroy-pending"},
}};
constexpr std::string_view to_string(LockFlag f) { return name_in(kLockFlagNames, f); }
constexpr std::optional<LockFlag> parse_lock_flag(std::string_view s) { return parse_in(kLockFlagNames, s); }

// What is odd about a lock's bytes: each problem kind says which field
// failed which check; the numbers it carries (LockIssue) are the field's
// values.  Words for people are python/pyhang/render/glibc.py's.
enum class LockProblem : std::uint8_t {
  Unreadable,                // the object (LockInfo::kind) cannot be read at (value), its address
  Destroyed,                 // mutex __kind is -1: destroyed by pthread_mutex_destroy, or not a mutex
  KindUnknownBits,           // mutex __kind (value) has bits no glibc mutex kind uses
  KindPiAndPp,               // mutex __kind has both priority-inherit and priority-protect
  KindRobustAndPp,           // mutex __kind has both robust and priority-protect
  OwnerNotTid,               // mutex __owner (value) is not a TID
  NusersNotCount,            // mutex __nusers (value) is not a user count
  LockWordTidNotTid,         // robust/PI mutex: the lock word's TID (value) is not a TID
  OwnerDiffersFromLockWord,  // robust/PI mutex: __owner (value) is not the lock word's TID (other): mid-update?
  LockNotState,              // __lock (value) is not 0, 1 or 2 (mutex, pre-2.25 rwlock and condvar)
  CountOnNonRecursive,       // mutex __count (value) on a non-recursive mutex
  RecursiveCountZero,        // a recursive mutex locked with __count 0
  CountNotRecursion,         // mutex __count (value) is not a recursion count
  UnlockedWithOwner,         // unlocked but __owner is (value)
  RobustListNotPointers,     // robust mutex: the __list links are not pointers
  FlagsNotKind,              // rwlock __flags (value) is not a rwlock kind
  SharedNotFlag,             // rwlock __shared (value) is not 0, 1 or 128
  WriterNotTid,              // rwlock writer (value) is not a TID
  PaddingNotZero,            // rwlock padding at +offset (value) is not zero
  ReadersNotCount,           // rwlock __readers counts (value) readers
  WritersNotCount,           // rwlock __writers (value) is not a count
  FutexWordsNotState,        // rwlock __wrphase_futex (value) / __writers_futex (other) are not 0..3
  WriterInReadPhase,         // rwlock __cur_writer (value) set on a lock in a read phase
  QueueCountsNotCounts,      // pre-2.25 rwlock: reader/writer counts are not counts
  WriteAndReadHeld,          // pre-2.25 rwlock: write-held by (value) and read-held by (other)
  ValueAboveMax,             // semaphore value (value) exceeds SEM_VALUE_MAX
  NwaitersNotCount,          // semaphore nwaiters (value) is not a count
  PrivateNotFlag,            // semaphore private (value) is not 0/1/128
  WrefsNotCount,             // condvar __wrefs counts (value) waiters
  G1StartPastWseq,           // condvar __g1_start is past __wseq
  WseqNotSequence,           // condvar __wseq (value) is not a sequence
  GroupCountsNotCounts,      // condvar group counts are not counts
  UnusedNotZero,             // condvar unused word at +offset (value) is not zero
  SequencesOutOfOrder,       // pre-2.25 condvar: sequence counters out of order
  CondNwaitersNotCount,      // pre-2.25 condvar: __nwaiters is not a count
  MutexNotPointer,           // pre-2.25 condvar: __mutex is not a pointer
};

inline constexpr std::array<Named<LockProblem>, 36> kLockProblemNames{{
    {LockProblem::Unreadable, "unreadable"},
    {LockProblem::Destroyed, "destroyed"},
    {LockProblem::KindUnknownBits, "kind-unknown-bits"},
    {LockProblem::KindPiAndPp, "kind-pi-and-pp"},
    {LockProblem::KindRobustAndPp, "kind-robust-and-pp"},
    {LockProblem::OwnerNotTid, "owner-not-tid"},
    {LockProblem::NusersNotCount, "nusers-not-count"},
    {LockProblem::LockWordTidNotTid, "lock-word-tid-not-tid"},
    {LockProblem::OwnerDiffersFromLockWord, "owner-differs-from-lock-word"},
    {LockProblem::LockNotState, "lock-not-state"},
    {LockProblem::CountOnNonRecursive, "count-on-non-recursive"},
    {LockProblem::RecursiveCountZero, "recursive-count-zero"},
    {LockProblem::CountNotRecursion, "count-not-recursion"},
    {LockProblem::UnlockedWithOwner, "unlocked-with-owner"},
    {LockProblem::RobustListNotPointers, "robust-list-not-pointers"},
    {LockProblem::FlagsNotKind, "flags-not-kind"},
    {LockProblem::SharedNotFlag, "shared-not-flag"},
    {LockProblem::WriterNotTid, "writer-not-tid"},
    {LockProblem::PaddingNotZero, "padding-not-zero"},
    {LockProblem::ReadersNotCount, "readers-not-count"},
    {LockProblem::WritersNotCount, "writers-not-count"},
    {LockProblem::FutexWordsNotState, "futex-words-not-state"},
    {LockProblem::WriterInReadPhase, "writer-in-read-phase"},
    {LockProblem::QueueCountsNotCounts, "queue-counts-not-counts"},
    {LockProblem::WriteAndReadHeld, "write-and-read-held"},
    {LockProblem::ValueAboveMax, "value-above-max"},
    {LockProblem::NwaitersNotCount, "nwaiters-not-count"},
    {LockProblem::PrivateNotFlag, "private-not-flag"},
    {LockProblem::WrefsNotCount, "wrefs-not-count"},
    {LockProblem::G1StartPastWseq, "g1-start-past-wseq"},
    {LockProblem::WseqNotSequence, "wseq-not-sequence"},
    {LockProblem::GroupCountsNotCounts, "group-counts-not-counts"},
    {LockProblem::UnusedNotZero, "unused-not-zero"},
    {LockProblem::SequencesOutOfOrder, "sequences-out-of-order"},
    {LockProblem::CondNwaitersNotCount, "cond-nwaiters-not-count"},
    {LockProblem::MutexNotPointer, "mutex-not-pointer"},
}};
constexpr std::string_view to_string(LockProblem p) { return name_in(kLockProblemNames, p); }

// One problem of a lock and the values it is about (see LockProblem).
struct LockIssue {
  LockProblem kind = LockProblem::Unreadable;
  bool fatal = false;      // the bytes cannot be this kind of lock (LockInfo::plausible is false)
  std::int64_t value = 0;  // the field's value (bit pattern for 64-bit words), or an offset
  std::int64_t other = 0;  // a second value, where the kind says so
  bool operator==(const LockIssue& o) const {
    return kind == o.kind && fatal == o.fatal && value == o.value && other == o.other;
  }
};

// A lock as decoded from its bytes.  Fields a layout does not have stay unset.
struct LockInfo {
  LockType kind = LockType::None;
  Addr address = 0;
  std::string layout;      // layout name the bytes were read with
  bool readable = false;   // false: the object could not be read at all
  bool plausible = false;  // bytes look like an initialised object of this kind
  std::vector<LockIssue> problems;  // why not plausible / what is odd, in the order found
  std::optional<bool> locked;
  std::vector<int> owners;    // TIDs the lock word records
  std::string owner_source;   // "__owner", "__lock", "__cur_writer", "__writer", "" = none recorded
  std::optional<bool> write_locked;
  std::optional<std::uint32_t> readers;     // read-holders (rwlock)
  std::optional<std::uint32_t> waiters;     // threads known to wait (total), when recorded
  std::optional<std::uint32_t> read_waiters, write_waiters;
  std::optional<std::uint32_t> recursion;   // recursive mutex: times the owner locked it
  std::optional<std::uint32_t> value;       // semaphore value
  std::optional<Addr> mutex;                // condvar: the waiters' mutex (pre-2.25 only)
  std::vector<LockFlag> flags;
  std::vector<std::pair<std::string, std::int64_t>> fields;  // raw fields, for display
  bool has(LockFlag f) const { return std::find(flags.begin(), flags.end(), f) != flags.end(); }
  bool has(LockProblem p) const {
    return std::any_of(problems.begin(), problems.end(), [p](const LockIssue& i) { return i.kind == p; });
  }
};

// A value that can be a Linux TID (PID_MAX_LIMIT on 64-bit Linux bounds it).
inline constexpr std::int64_t kMaxTid = 4194304;
inline bool plausible_tid(std::int64_t tid) { return tid > 0 && tid <= kMaxTid; }

LockInfo decode_mutex(MemoryReader& mem, Addr addr, const MutexLayout& layout);
LockInfo decode_rwlock(MemoryReader& mem, Addr addr, const RwlockLayout& layout);
LockInfo decode_semaphore(MemoryReader& mem, Addr addr, const SemLayout& layout);
LockInfo decode_condvar(MemoryReader& mem, Addr addr, const CondLayout& layout);

}  // namespace pyhang::glibc
