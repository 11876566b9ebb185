// glibc lock layouts on x86_64 as data.  A new glibc release that changes a
// struct gets a new layout object and a new row; decoders never test
// version numbers.
#include "glibc/layout_tables.hpp"

namespace pyhang::glibc::layouts {

// struct __pthread_mutex_s: __lock 0, __count 4, __owner 8, __nusers 12,
// __kind 16, __spins 20, __elision 22, __list 24 (prev, next); 40 bytes.
const MutexLayout kMutex = [] {
  MutexLayout l{};
  l.name = "pthread_mutex_t (x86_64)";
  l.size = 40;
  l.lock = 0;
  l.count = 4;
  l.owner = 8;
  l.nusers = 12;
  l.kind = 16;
  l.list = 24;
  l.futex_words = {{0, WaitRole::MutexLock}};
  return l;
}();

// Before 2.25: __lock 0 (internal lll lock), __nr_readers 4,
// __readers_wakeup 8, __writer_wakeup 12, __nr_readers_queued 16,
// __nr_writers_queued 20, __writer 24, __shared 28, __rwelision 32 (2.20+,
// else padding), padding to 48, __flags 48; 56 bytes.  Readers sleep on
// __readers_wakeup, writers on __writer_wakeup.
const RwlockLayout kRwlockPre225 = [] {
  RwlockLayout l{};
  l.name = "pthread_rwlock_t (glibc < 2.25)";
  l.scheme = RwlockScheme::Pre225;
  l.size = 56;
  l.lock = 0;
  l.nr_readers = 4;
  l.readers_wakeup = 8;
  l.writer_wakeup = 12;
  l.nr_readers_queued = 16;
  l.nr_writers_queued = 20;
  l.writer = 24;
  l.shared = 28;
  l.flags = 48;
  l.zero_padding = {36, 40, 44};
  l.futex_words = {{0, WaitRole::RwlockInternal}, {8, WaitRole::RwlockRead}, {12, WaitRole::RwlockWrite}};
  return l;
}();

// 2.25+: __readers 0 (readers << 3 | RWAITING 4 | WRLOCKED 2 | WRPHASE 1),
// __writers 4, __wrphase_futex 8, __writers_futex 12, __pad3 16, __pad4 20,
// __cur_writer 24, __shared 28, __rwelision 32, __pad1[7], __pad2 40,
// __flags 48; 56 bytes.  Writers queue on __writers_futex; the primary writer
// (WRLOCKED, read phase) and readers in a write phase sleep on
// __wrphase_futex; readers of a PREFER_WRITER_NONRECURSIVE lock on __readers.
const RwlockLayout kRwlock225 = [] {
  RwlockLayout l{};
  l.name = "pthread_rwlock_t (glibc >= 2.25)";
  l.scheme = RwlockScheme::Modern;
  l.size = 56;
  l.readers = 0;
  l.writers = 4;
  l.wrphase_futex = 8;
  l.writers_futex = 12;
  l.writer = 24;
  l.shared = 28;
  l.flags = 48;
  l.zero_padding = {16, 20, 36, 40, 44};
  l.futex_words = {{0, WaitRole::RwlockRead}, {8, WaitRole::RwlockPhase}, {12, WaitRole::RwlockWrite}};
  return l;
}();

// Before 2.21: struct new_sem { unsigned int value; int private;
// unsigned long nwaiters; }.
const SemLayout kSemPre221 = [] {
  SemLayout l{};
  l.name = "sem_t (glibc < 2.21)";
  l.size = 16;
  l.value = 0;
  l.value_bits = 32;
  l.value_shift = 0;
  l.nwaiters = 8;
  l.nwaiters_size = 8;
  l.private_flag = 4;
  l.futex_words = {{0, WaitRole::SemValue}};
  return l;
}();

// 2.21+ with 64-bit atomics (x86_64): struct new_sem { uint64_t data;
// int private; int pad; }, value in data's low 32 bits (SEM_VALUE_MASK),
// nwaiters in the high 32 (SEM_NWAITERS_SHIFT 32).  Waiters sleep on the
// low word.
const SemLayout kSem64 = [] {
  SemLayout l{};
  l.name = "sem_t (glibc >= 2.21, 64-bit data)";
  l.size = 16;
  l.value = 0;
  l.value_bits = 32;
  l.value_shift = 0;
  l.nwaiters = 4;
  l.nwaiters_size = 4;
  l.private_flag = 8;
  l.futex_words = {{0, WaitRole::SemValue}};
  return l;
}();

// Before 2.25: __lock 0, __futex 4, __total_seq 8, __wakeup_seq 16,
// __woken_seq 24, __mutex 32, __nwaiters 40 (waiters << 1 | clock bit),
// __broadcast_seq 44; 48 bytes.  Waiters sleep on __futex.
const CondLayout kCondPre225 = [] {
  CondLayout l{};
  l.name = "pthread_cond_t (glibc < 2.25)";
  l.scheme = CondScheme::Pre225;
  l.size = 48;
  l.lock = 0;
  l.futex = 4;
  l.total_seq = 8;
  l.wakeup_seq = 16;
  l.woken_seq = 24;
  l.mutex = 32;
  l.nwaiters = 40;
  l.broadcast_seq = 44;
  l.futex_words = {{4, WaitRole::CondSignal}, {0, WaitRole::CondInternal}};
  return l;
}();

// 2.25+: __wseq 0 (8), __g1_start 8 (8), __g_refs[2] 16, __g_size[2] 24,
// __g1_orig_size 32, __wrefs 36 (waiters << 3 | flags), __g_signals[2] 40;
// 48 bytes.  Waiters sleep on __g_signals[g]; __g_refs, __g1_orig_size and
// __wrefs are slept on briefly by signalers, the internal lock and destroy.
const CondLayout kCond225 = [] {
  CondLayout l{};
  l.name = "pthread_cond_t (glibc >= 2.25)";
  l.scheme = CondScheme::Modern;
  l.size = 48;
  l.wseq = 0;
  l.g1_start = 8;
  l.g_refs = 16;
  l.g_size = 24;
  l.g1_orig_size = 32;
  l.wrefs = 36;
  l.g_signals = 40;
  l.futex_words = {{40, WaitRole::CondSignal}, {44, WaitRole::CondSignal},     {16, WaitRole::CondInternal},
                   {20, WaitRole::CondInternal}, {32, WaitRole::CondInternal}, {36, WaitRole::CondInternal}};
  return l;
}();

}  // namespace pyhang::glibc::layouts

namespace pyhang::glibc {

const std::vector<Layouts>& all_layouts() {
  using namespace layouts;
  // Rows [min, max_exclusive).  2.17 is the oldest release whose sources
  // these tables were checked against; the newest row stops at the newest
  // release checked, so a later glibc is reported as unsupported.
  static const std::vector<Layouts> rows = {
      {"glibc 2.17-2.20", {2, 17}, {2, 21}, &kMutex, &kRwlockPre225, &kSemPre221, &kCondPre225},
      {"glibc 2.21-2.24", {2, 21}, {2, 25}, &kMutex, &kRwlockPre225, &kSem64, &kCondPre225},
      {"glibc 2.25-2.42", {2, 25}, {2, 43}, &kMutex, &kRwlock225, &kSem64, &kCond225},
  };
  return rows;
}

Outcome<const Layouts*> layouts_for(const GlibcVersion& version) {
  const std::pair<int, int> v{version.major, version.minor};
  for (const auto& row : all_layouts())
    if (v >= row.min && v < row.max_exclusive) return &row;
  const auto& rows = all_layouts();
  return Error(ErrorReason::Unsupported,
               "glibc " +
                   (version.text.empty() ? std::to_string(version.major) + "." + std::to_string(version.minor)
                                         : version.text) +
                   " is outside the supported lock layouts (" + std::to_string(rows.front().min.first) + "." +
                   std::to_string(rows.front().min.second) + " to " + std::to_string(rows.back().max_exclusive.first) +
                   "." + std::to_string(rows.back().max_exclusive.second - 1) + ")");
}

}  // namespace pyhang::glibc
