// glibc's lock layouts for x86_64: pthread_mutex_t, pthread_rwlock_t, sem_t
// and pthread_cond_t per glibc version range, with the futex words a
// blocked thread may sleep on in each.  The tables themselves are in
// native/src/glibc/layouts.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pyhang/base/names.hpp"
#include "pyhang/glibc/version.hpp"

namespace pyhang::glibc {

inline constexpr std::uint32_t kNoField = 0xffffffffu;

// What a thread sleeping on a futex word of a lock is waiting for.
enum class WaitRole : std::uint8_t {
  MutexLock,         // mutex __lock: to acquire the mutex
  RwlockRead,        // to read-lock
  RwlockWrite,       // to write-lock
  RwlockPhase,       // 2.25+ __wrphase_futex: reader or writer, decided by __readers' WRPHASE bit
  RwlockInternal,    // pre-2.25 __lock: the rwlock's internal lock (brief)
  SemValue,          // semaphore value: sem_wait
  CondSignal,        // condvar: waiting to be signalled
  CondInternal,      // condvar-internal lock or group switch (brief)
};
inline constexpr std::array<Named<WaitRole>, 8> kWaitRoleNames{{
    {WaitRole::MutexLock, "mutex-lock"},
    {WaitRole::RwlockRead, "rwlock-read"},
    {WaitRole::RwlockWrite, "rwlock-write"},
    {WaitRole::RwlockPhase, "rwlock-phase"},
    {WaitRole::RwlockInternal, "rwlock-internal"},
    {WaitRole::SemValue, "semaphore"},
    {WaitRole::CondSignal, "condvar"},
    {WaitRole::CondInternal, "condvar-internal"},
}};
constexpr std::string_view to_string(WaitRole role) { return name_in(kWaitRoleNames, role); }

struct FutexWord {
  std::uint32_t offset;
  WaitRole role;
};

struct MutexLayout {
  std::string_view name;
  std::uint32_t size, lock, count, owner, nusers, kind;
  std::uint32_t list = kNoField;  // robust list links
  // __kind encoding
  std::uint32_t kind_mask = 3, robust_bit = 16, pi_bit = 32, pp_bit = 64, pshared_bit = 128;
  std::uint32_t elision_bits = 256 | 512, ceiling_shift = 19;
  // PI / robust lock word
  std::uint32_t futex_waiters = 0x80000000u, futex_owner_died = 0x40000000u, futex_tid_mask = 0x3fffffffu;
  // __owner after the owner died: recovered-but-inconsistent, not recoverable
  std::int32_t owner_inconsistent = 0x7fffffff, owner_notrecoverable = 0x7ffffffe;
  std::vector<FutexWord> futex_words;
};

enum class RwlockScheme : std::uint8_t { Pre225, Modern };

struct RwlockLayout {
  std::string_view name;
  RwlockScheme scheme;
  std::uint32_t size;
  std::uint32_t writer;  // owner TID: __cur_writer (2.25+) / __writer
  std::uint32_t shared, flags;
  // 2.25+
  std::uint32_t readers = kNoField, writers = kNoField, wrphase_futex = kNoField, writers_futex = kNoField;
  std::vector<std::uint32_t> zero_padding;  // offsets of 4-byte words that are always 0
  std::uint32_t wrphase_bit = 1, wrlocked_bit = 2, rwaiting_bit = 4, reader_shift = 3;
  std::uint32_t writers_handover = 0x80000000u, futex_used = 2;
  // pre-2.25
  std::uint32_t lock = kNoField, nr_readers = kNoField, readers_wakeup = kNoField, writer_wakeup = kNoField;
  std::uint32_t nr_readers_queued = kNoField, nr_writers_queued = kNoField;
  std::uint32_t max_flags = 2;  // PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP
  std::vector<FutexWord> futex_words;
};

struct SemLayout {
  std::string_view name;
  std::uint32_t size;
  std::uint32_t value;          // offset of the value word (the futex)
  std::uint32_t value_bits;     // 32: value is the whole word; 31: shifted by value_shift
  std::uint32_t value_shift;    // 0, or 1 where bit 0 says "has waiters" (SEM_VALUE_SHIFT)
  std::uint32_t nwaiters;       // offset of the waiter count
  std::uint32_t nwaiters_size;  // 4 or 8 bytes
  std::uint32_t private_flag;   // offset of `private`
  std::vector<FutexWord> futex_words;
};

enum class CondScheme : std::uint8_t { Pre225, Modern };

struct CondLayout {
  std::string_view name;
  CondScheme scheme;
  std::uint32_t size;
  // 2.25+ (g_refs: 2.25-2.40 only)
  std::uint32_t wseq = kNoField, g1_start = kNoField, g_refs = kNoField, g_size = kNoField;
  std::uint32_t g1_orig_size = kNoField, wrefs = kNoField, g_signals = kNoField;
  // __g1_start is a waiter position shifted left by this (2.25-2.40: its
  // LSB is the G2 index; 2.41+: the position itself), comparable with
  // __wseq >> 1.
  std::uint32_t g1_start_shift = 1;
  std::vector<std::uint32_t> zero_padding;  // offsets of 4-byte words that are always 0
  // __wrefs: waiters << 3 | destroy-wake request 4 | CLOCK_MONOTONIC 2 |
  // process-shared 1 (__PTHREAD_COND_CLOCK_MONOTONIC_MASK,
  // __PTHREAD_COND_SHARED_MASK in nptl/pthreadP.h)
  std::uint32_t wrefs_waiter_shift = 3;
  std::uint32_t wrefs_destroy_bit = 4, wrefs_clock_bit = 2, wrefs_pshared_bit = 1;
  // pre-2.25
  std::uint32_t lock = kNoField, futex = kNoField, total_seq = kNoField, wakeup_seq = kNoField;
  std::uint32_t woken_seq = kNoField, mutex = kNoField, nwaiters = kNoField, broadcast_seq = kNoField;
  std::uint32_t nwaiters_shift = 1;
  std::vector<FutexWord> futex_words;
};

// The four layouts of one glibc version range [min, max_exclusive): the
// releases whose sources they were checked against.
struct Layouts {
  std::string_view name;  // "glibc 2.41+"
  std::pair<int, int> min, max_exclusive;
  const MutexLayout* mutex;
  const RwlockLayout* rwlock;
  const SemLayout* sem;
  const CondLayout* cond;
  // The newest row only: also used for later releases when their libc's
  // thread descriptors (pyhang/glibc/thread_db.hpp) match what the decoders
  // assume, since the lock ABI is stable across many releases.
  bool open_ended = false;
};

// The row a version uses, or why none; and why the choice needs a caveat.
struct LayoutChoice {
  const Layouts* row = nullptr;  // nullptr: refused (issue says why)
  // Refused: why.  Chosen: kind None for a release the row was checked
  // against, else NewerThanChecked (the release its layouts were not
  // checked against).
  LayoutsIssue issue;
  explicit operator bool() const { return row != nullptr; }
};

// The table row for a version, or the issue that refuses it.  Unknown
// versions are reported, not guessed:
//  - libc's descriptors (version.thread_db) that contradict the decoders'
//    assumptions refuse every version, naming the descriptor;
//  - a version inside a row gets that row;
//  - a version newer than the newest checked release (or only known to be
//    at least one of the newest row's) gets the open-ended newest row with
//    a warning when libc's descriptors are present and vouch for it, else
//    is refused;
//  - a version older than every row is refused.
LayoutChoice choose_layouts(const GlibcVersion& version);
// choose_layouts' row, without its caveat; nullptr when refused.
const Layouts* layouts_for(const GlibcVersion& version);
const std::vector<Layouts>& all_layouts();

}  // namespace pyhang::glibc
