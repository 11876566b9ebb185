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

// A lock as decoded from its bytes.  Fields a layout does not have stay unset.
struct LockInfo {
  LockType kind = LockType::None;
  Addr address = 0;
  std::string layout;      // layout name the bytes were read with
  bool readable = false;   // false: the object could not be read at all
  bool plausible = false;  // bytes look like an initialised object of this kind
  std::string problem;     // why not plausible / what is odd (one line)
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
};

// A value that can be a Linux TID (PID_MAX_LIMIT on 64-bit Linux bounds it).
inline constexpr std::int64_t kMaxTid = 4194304;
inline bool plausible_tid(std::int64_t tid) { return tid > 0 && tid <= kMaxTid; }

LockInfo decode_mutex(MemoryReader& mem, Addr addr, const MutexLayout& layout);
LockInfo decode_rwlock(MemoryReader& mem, Addr addr, const RwlockLayout& layout);
LockInfo decode_semaphore(MemoryReader& mem, Addr addr, const SemLayout& layout);
LockInfo decode_condvar(MemoryReader& mem, Addr addr, const CondLayout& layout);

}  // namespace pyhang::glibc
