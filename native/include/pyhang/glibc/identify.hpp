// Which glibc lock a blocked thread waits for, from its futex system call,
// the lock layouts of the target's glibc and its frame names; and who owns
// that lock, as far as the lock word records it (pyhang/glibc/decode.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pyhang/arch/x86_64/registers.hpp"
#include "pyhang/base/confidence.hpp"
#include "pyhang/base/names.hpp"
#include "pyhang/glibc/decode.hpp"

namespace pyhang::glibc {

// What a blocked thread waits for, as far as glibc's locks tell.
enum class WaitKind : std::uint8_t {
  None,               // not waiting on a futex the decoders understand
  Mutex,
  RwlockRead,
  RwlockWrite,
  Rwlock,             // an rwlock, read or write not known
  Semaphore,
  Condvar,
  Futex,              // a futex word no layout explains (or the generic futex layer, as a frame hint)
  GlibcInternalLock,  // __lll_lock_wait_private: malloc, stdio, dl locks
  ThreadJoin,         // pthread_join: the joined thread's tid word
};

inline constexpr std::array<Named<WaitKind>, 10> kWaitKindNames{{
    {WaitKind::None, ""},
    {WaitKind::Mutex, "mutex"},
    {WaitKind::RwlockRead, "rwlock-read"},
    {WaitKind::RwlockWrite, "rwlock-write"},
    {WaitKind::Rwlock, "rwlock"},
    {WaitKind::Semaphore, "semaphore"},
    {WaitKind::Condvar, "condvar"},
    {WaitKind::Futex, "futex"},
    {WaitKind::GlibcInternalLock, "glibc-internal-lock"},
    {WaitKind::ThreadJoin, "thread-join"},
}};
constexpr std::string_view to_string(WaitKind k) { return name_in(kWaitKindNames, k); }
constexpr std::optional<WaitKind> parse_wait_kind(std::string_view s) { return parse_in(kWaitKindNames, s); }
constexpr bool is_rwlock(WaitKind k) {
  return k == WaitKind::Rwlock || k == WaitKind::RwlockRead || k == WaitKind::RwlockWrite;
}

struct NativeFrame {
  Addr pc = 0;
  std::string function;  // as the debugger names it; empty or "??" when unknown
  std::string library;   // path of the object holding pc; empty when unknown
  // Argument registers of this frame when the debugger could recover them
  // (usually only for frame 0; outer frames' rdi/rsi are caller-saved).
  std::optional<std::uint64_t> rdi, rsi;
};

struct BlockedThread {
  int tid = 0;
  std::optional<Registers> regs;    // frame 0
  std::vector<NativeFrame> frames;  // frame 0 first, up to ~8
};

// Why a candidate gained or lost points (native/src/glibc/identify.cpp
// scores them): the fact about its bytes, its futex call or its frames.
// Words for people are python/pyhang/render/glibc.py's.
enum class ScoreReason : std::uint8_t {
  Plausible,                // the bytes decode as a plausible object of its layout (LockInfo::layout)
  Implausible,              // they do not (LockInfo::problems says why)
  PlausibleAtArgument,      // plausible at the lock function's first argument
  WordUnchanged,            // the word still holds the value the thread waits on
  WordChanged,              // the word changed since the thread went to sleep
  Locked,                   // mutex: locked
  Unlocked,                 // mutex: unlocked, yet a thread waits on it
  HasWaiters,               // mutex: the lock word says it has waiters
  OwnerRecorded,            // mutex: an owner is recorded
  NoOwnerRecorded,          // mutex: locked but no owner recorded
  LockPiOnPi,               // FUTEX_LOCK_PI on a priority-inherit mutex
  LockPiOnNonPi,            // FUTEX_LOCK_PI on a mutex that is not priority-inherit
  WaitOnPi,                 // a plain futex wait on a priority-inherit mutex
  LockPiOnRwlock,           // FUTEX_LOCK_PI on a rwlock
  LockPiOnSemaphore,        // FUTEX_LOCK_PI on a semaphore
  LockPiOnCondvar,          // FUTEX_LOCK_PI on a condvar
  WritersFutexWaiters,      // rwlock: __writers_futex has waiters
  WritersFutexNoWaiters,    // rwlock: __writers_futex has no waiters
  WriterHoldsOrNext,        // rwlock: a writer holds it or is next
  NoWriterHolds,            // rwlock: no writer holds it
  WrphaseFutexWaiters,      // rwlock: __wrphase_futex has waiters
  WrphaseFutexNoWaiters,    // rwlock: __wrphase_futex has no waiters
  WritePhase,               // rwlock: write phase: readers wait for it to end
  ReadPhaseWriterWaiting,   // rwlock: read phase with a writer waiting for readers to leave
  ReadPhaseNoWriter,        // rwlock: read phase without a waiting writer
  ReadersWaiting,           // rwlock: __readers has RWAITING
  ReadersNotWaiting,        // rwlock: __readers without RWAITING
  ReadersQueued,            // pre-2.25 rwlock: readers queued
  NoReadersQueued,          // pre-2.25 rwlock: no readers queued
  WriterHoldsOrWaits,       // pre-2.25 rwlock: a writer holds or waits
  WritersQueued,            // pre-2.25 rwlock: writers queued
  NoWritersQueued,          // pre-2.25 rwlock: no writers queued
  Held,                     // pre-2.25 rwlock: held
  InternalContended,        // pre-2.25 rwlock: its internal lock is contended
  InternalUncontended,      // pre-2.25 rwlock: its internal lock is not contended
  ValueZero,                // semaphore: value 0
  ValueNotZero,             // semaphore: value is not 0, yet a thread waits
  NwaitersPositive,         // semaphore: nwaiters > 0
  NwaitersZero,             // semaphore: nwaiters is 0
  WaitersCounted,           // condvar: waiter count > 0
  NoWaitersCounted,         // condvar: no waiters counted
  MutexRecorded,            // pre-2.25 condvar: __mutex recorded
  InternalWordWaiters,      // condvar: waiter count > 0, on an internal word
  InternalWordNoWaiters,    // condvar: an internal word and no waiters
  FutexWord,                // a futex word (the bare candidate)
  LockWordState,            // glibc-internal lock: the word is 1 or 2
  LockWordNotState,         // glibc-internal lock: the word is not 1 or 2
  JoinedTid,                // pthread_join: the word holds the joined thread's TID (or, with negative points, not)
  FrameName,                // a libc frame's name says a lock family (Reason::hint)
  CondvarMutex,             // it is the mutex pthread_cond_wait was given
};

inline constexpr std::array<Named<ScoreReason>, 50> kScoreReasonNames{{
    {ScoreReason::Plausible, "plausible"},
    {ScoreReason::Implausible, "implausible"},
    {ScoreReason::PlausibleAtArgument, "plausible-at-argument"},
    {ScoreReason::WordUnchanged, "word-unchanged"},
    {ScoreReason::WordChanged, "word-changed"},
    {ScoreReason::Locked, "locked"},
    {ScoreReason::Unlocked, "unlocked"},
    {ScoreReason::HasWaiters, "has-waiters"},
    {ScoreReason::OwnerRecorded, "owner-recorded"},
    {ScoreReason::NoOwnerRecorded, "no-owner-recorded"},
    {ScoreReason::LockPiOnPi, "lock-pi-on-pi"},
    {ScoreReason::LockPiOnNonPi, "lock-pi-on-non-pi"},
    {ScoreReason::WaitOnPi, "wait-on-pi"},
    {ScoreReason::LockPiOnRwlock, "lock-pi-on-rwlock"},
    {ScoreReason::LockPiOnSemaphore, "lock-pi-on-semaphore"},
    {ScoreReason::LockPiOnCondvar, "lock-pi-on-condvar"},
    {ScoreReason::WritersFutexWaiters, "writers-futex-waiters"},
    {ScoreReason::WritersFutexNoWaiters, "writers-futex-no-waiters"},
    {ScoreReason::WriterHoldsOrNext, "writer-holds-or-next"},
    {ScoreReason::NoWriterHolds, "no-writer-holds"},
    {ScoreReason::WrphaseFutexWaiters, "wrphase-futex-waiters"},
    {ScoreReason::WrphaseFutexNoWaiters, "wrphase-futex-no-waiters"},
    {ScoreReason::WritePhase, "write-phase"},
    {ScoreReason::ReadPhaseWriterWaiting, "read-phase-writer-waiting"},
    {ScoreReason::ReadPhaseNoWriter, "read-phase-no-writer"},
    {ScoreReason::ReadersWaiting, "readers-waiting"},
    {ScoreReason::ReadersNotWaiting, "readers-not-waiting"},
    {ScoreReason::ReadersQueued, "readers-queued"},
    {ScoreReason::NoReadersQueued, "no-readers-queued"},
    {ScoreReason::WriterHoldsOrWaits, "writer-holds-or-waits"},
    {ScoreReason::WritersQueued, "writers-queued"},
    {ScoreReason::NoWritersQueued, "no-writers-queued"},
    {ScoreReason::Held, "held"},
    {ScoreReason::InternalContended, "internal-contended"},
    {ScoreReason::InternalUncontended, "internal-uncontended"},
    {ScoreReason::ValueZero, "value-zero"},
    {ScoreReason::ValueNotZero, "value-not-zero"},
    {ScoreReason::NwaitersPositive, "nwaiters-positive"},
    {ScoreReason::NwaitersZero, "nwaiters-zero"},
    {ScoreReason::WaitersCounted, "waiters-counted"},
    {ScoreReason::NoWaitersCounted, "no-waiters-counted"},
    {ScoreReason::MutexRecorded, "mutex-recorded"},
    {ScoreReason::InternalWordWaiters, "internal-word-waiters"},
    {ScoreReason::InternalWordNoWaiters, "internal-word-no-waiters"},
    {ScoreReason::FutexWord, "futex-word"},
    {ScoreReason::LockWordState, "lock-word-state"},
    {ScoreReason::LockWordNotState, "lock-word-not-state"},
    {ScoreReason::JoinedTid, "joined-tid"},
    {ScoreReason::FrameName, "frame-name"},
    {ScoreReason::CondvarMutex, "condvar-mutex"},
}};
constexpr std::string_view to_string(ScoreReason r) { return name_in(kScoreReasonNames, r); }

// Points a candidate gained (or lost), and why.
struct Reason {
  ScoreReason kind = ScoreReason::Plausible;
  int points = 0;
  WaitKind hint = WaitKind::None;  // FrameName: the family the frame's name says
  bool operator==(const Reason& o) const { return kind == o.kind && points == o.points && hint == o.hint; }
};

struct Candidate {
  WaitKind kind = WaitKind::None;
  Addr address = 0;             // the lock object's base
  int score = 0;
  std::vector<Reason> reasons;  // in the order scored; their points add up to score
  LockInfo lock;
  bool has(ScoreReason r) const {
    return std::any_of(reasons.begin(), reasons.end(), [r](const Reason& x) { return x.kind == r; });
  }
};

// How identify_blocked decided what a thread waits for.
enum class Evidence : std::uint8_t {
  None,           // nothing was identified
  FutexCall,      // its futex call (BlockedOn::futex, futex_op), the frame names (hint) and the best candidate
  LockArgument,   // not in futex(2): the first argument of the frame named like a lock function (hint)
};

inline constexpr std::array<Named<Evidence>, 3> kEvidenceNames{{
    {Evidence::None, ""},
    {Evidence::FutexCall, "futex-call"},
    {Evidence::LockArgument, "lock-argument"},
}};
constexpr std::string_view to_string(Evidence e) { return name_in(kEvidenceNames, e); }

// Why identify_blocked could identify nothing.
enum class IdentifyProblem : std::uint8_t {
  None,
  FutexUnreadable,   // the futex word (BlockedOn::futex) cannot be read
  NoRegisters,       // no registers for frame 0
  NotFutexWait,      // frame 0 is not in a futex wait (BlockedOn::syscall: the system call, -1 none)
  LayoutsUnknown,    // glibc's lock layouts are not known (the LockReader's problem says why)
};

inline constexpr std::array<Named<IdentifyProblem>, 5> kIdentifyProblemNames{{
    {IdentifyProblem::None, ""},
    {IdentifyProblem::FutexUnreadable, "futex-unreadable"},
    {IdentifyProblem::NoRegisters, "no-registers"},
    {IdentifyProblem::NotFutexWait, "not-futex-wait"},
    {IdentifyProblem::LayoutsUnknown, "layouts-unknown"},
}};
constexpr std::string_view to_string(IdentifyProblem p) { return name_in(kIdentifyProblemNames, p); }

struct BlockedOn {
  WaitKind kind = WaitKind::None;
  std::optional<Addr> address;        // the lock object (its base)
  std::optional<Addr> futex;          // the word the thread sleeps on
  std::optional<std::uint32_t> futex_op, futex_value;  // syscall op and expected value
  bool restarted = false;             // the futex wait resumes through restart_syscall (a stop interrupted it)
  std::optional<LockInfo> lock;       // the decoded lock
  std::vector<int> owners;            // TIDs, from the lock word
  OwnerSource owner_source = OwnerSource::Unknown;  // LockWord or Unknown
  Confidence confidence = Confidence::None;
  Evidence evidence = Evidence::None;  // how the kind was decided
  WaitKind hint = WaitKind::None;      // the lock family the innermost libc frame names say
  std::optional<Addr> condvar_mutex;   // the mutex a condvar waiter must reacquire, when known
  std::vector<Candidate> candidates;   // everything considered, best first
  IdentifyProblem problem = IdentifyProblem::None;  // why nothing could be identified
  std::optional<std::int64_t> syscall;  // NotFutexWait: frame 0's system call (orig_rax)
};

// Identifies what `thread` waits for.  Evidence, strongest first:
//  1. frame 0's registers: orig_rax == 202 (futex) gives the futex word
//     (rdi), the op (rsi: FUTEX_LOCK_PI only ever comes from a PI mutex) and
//     the value the thread expected (rdx, compared with the word now);
//  2. every (layout, futex-word offset) pair of the version's table gives a
//     candidate base = futex - offset, decoded and scored by how consistent
//     its fields are with "a thread sleeps on this word" (see native/src/glibc/identify.cpp);
//  3. frame names in libc/libpthread (pthread_rwlock_wrlock, sem_wait, ...)
//     add to the candidates of their family; names are hints only: Debian's
//     libc exports no symbol for __lll_lock_wait, __futex_abstimed_wait_common
//     or do_futex_wait, so a debugger may show "??" or the nearest exported
//     name, and the layout evidence must stand on its own.
// With no futex in frame 0 (not in a syscall, or registers unknown), an rdi
// recovered for a frame named like a lock function is used as the lock
// address instead.
BlockedOn identify_blocked(MemoryReader& mem, const Layouts& layouts, const BlockedThread& thread);

// The lock family a libc function name suggests: Mutex, RwlockRead,
// RwlockWrite, Rwlock, Semaphore, Condvar, GlibcInternalLock, ThreadJoin,
// Futex (the generic futex layer) or None (unrelated).  Strips __GI_
// prefixes, leading underscores, @version suffixes.
WaitKind frame_hint(std::string_view function);

}  // namespace pyhang::glibc
