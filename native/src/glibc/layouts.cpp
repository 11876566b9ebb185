// glibc lock layouts on x86_64 as data.  A new glibc release that changes a
// struct gets a new layout object and a new row; decoders never test
// version numbers.  A release after the newest checked one uses the newest
// row when its libc's own thread descriptors vouch for it (choose_layouts).
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

// 2.25-2.40: __wseq 0 (8), __g1_start 8 (8, position << 1 | G2 index),
// __g_refs[2] 16, __g_size[2] 24, __g1_orig_size 32, __wrefs 36 (waiters << 3
// | flags), __g_signals[2] 40 (signals << 1 | group closed); 48 bytes.
// Waiters sleep on __g_signals[g]; __g_refs (signalers waiting for a group
// to quiesce), __g1_orig_size (the condvar-internal lock in its two low
// bits) and __wrefs (pthread_cond_destroy) are slept on briefly.
const CondLayout kCond225 = [] {
  CondLayout l{};
  l.name = "pthread_cond_t (glibc 2.25-2.40)";
  l.scheme = CondScheme::Modern;
  l.size = 48;
  l.wseq = 0;
  l.g1_start = 8;
  l.g_refs = 16;
  l.g_size = 24;
  l.g1_orig_size = 32;
  l.wrefs = 36;
  l.g_signals = 40;
  l.g1_start_shift = 1;
  l.futex_words = {{40, WaitRole::CondSignal}, {44, WaitRole::CondSignal},     {16, WaitRole::CondInternal},
                   {20, WaitRole::CondInternal}, {32, WaitRole::CondInternal}, {36, WaitRole::CondInternal}};
  return l;
}();

// 2.41+ ("nptl: Remove g_refs from condition variables", the fix of bug
// 25847): __wseq 0 (8), __g1_start 8 (8, the position itself, no G2 bit),
// __g_size[2] 16, __g1_orig_size 24 (size << 2 | internal lock), __wrefs 28,
// __g_signals[2] 32 (the low 32 bits of __g1_start plus the signals
// available, no closed bit), __unused_initialized_1/2 40, 44 (always 0);
// 48 bytes.  Waiters sleep on __g_signals[g] (__futex_abstimed_wait_cancelable64
// in __pthread_cond_wait_common); only the internal lock (__g1_orig_size)
// and pthread_cond_destroy (__wrefs) sleep elsewhere, briefly.  Checked
// against nptl/pthread_cond_wait.c, pthread_cond_common.c,
// pthread_cond_signal.c, pthread_cond_destroy.c and
// sysdeps/nptl/bits/thread-shared-types.h of the 2.41 rewrite, and on
// Debian's 2.41 and 2.43 binaries (a waiter's futex is the condvar + 32,
// __wrefs at +28 counts it); 2.42, between the two, is taken as checked.
const CondLayout kCond241 = [] {
  CondLayout l{};
  l.name = "pthread_cond_t (glibc >= 2.41)";
  l.scheme = CondScheme::Modern;
  l.size = 48;
  l.wseq = 0;
  l.g1_start = 8;
  l.g_size = 16;
  l.g1_orig_size = 24;
  l.wrefs = 28;
  l.g_signals = 32;
  l.g1_start_shift = 0;
  l.zero_padding = {40, 44};
  l.futex_words = {{32, WaitRole::CondSignal},
                   {36, WaitRole::CondSignal},
                   {24, WaitRole::CondInternal},
                   {28, WaitRole::CondInternal}};
  return l;
}();

}  // namespace pyhang::glibc::layouts

namespace pyhang::glibc {

namespace {

std::pair<int, int> version_pair(const GlibcVersion& v) { return {v.major, v.minor}; }

std::string release(std::pair<int, int> v) { return std::to_string(v.first) + "." + std::to_string(v.second); }

std::string version_text(const GlibcVersion& v) { return v.text.empty() ? release(version_pair(v)) : v.text; }

// The newest release a row was checked against.
std::pair<int, int> newest_checked(const Layouts& row) {
  return {row.max_exclusive.first, row.max_exclusive.second - 1};
}

const Layouts* row_containing(std::pair<int, int> v) {
  for (const auto& row : all_layouts())
    if (v >= row.min && v < row.max_exclusive) return &row;
  return nullptr;
}

// An issue about version `v`.
LayoutsIssue issue(LayoutsProblem kind, const GlibcVersion& v) {
  LayoutsIssue i;
  i.kind = kind;
  i.version = version_text(v);
  i.exact = v.exact;
  i.source = v.source;
  if (v.thread_db) i.library = v.thread_db->library;
  return i;
}

// libc says its thread ABI is not the one the layouts assume.
std::optional<LayoutsIssue> contradiction(const GlibcVersion& v) {
  if (!v.thread_db) return std::nullopt;
  ThreadDbCheck check = check_thread_db(*v.thread_db);
  if (!check.contradicts()) return std::nullopt;
  LayoutsIssue i = issue(LayoutsProblem::Contradicted, v);
  i.differs = std::move(check.differs);
  return i;
}

LayoutsIssue outside_every_row(const GlibcVersion& v) {
  const auto& rows = all_layouts();
  LayoutsIssue i = issue(LayoutsProblem::Outside, v);
  i.oldest = release(rows.front().min);
  i.newest = release(newest_checked(rows.back()));
  i.open_ended = rows.back().open_ended;
  return i;
}

// `v` may be a release after the newest one `newest` was checked against:
// usable with a caveat when libc's descriptors vouch for it.
LayoutChoice beyond_checked(const GlibcVersion& v, const Layouts& newest) {
  if (!newest.open_ended) return {nullptr, outside_every_row(v)};
  const bool vouched = v.thread_db && check_thread_db(*v.thread_db).vouches();
  LayoutsIssue i = issue(vouched ? LayoutsProblem::NewerThanChecked : LayoutsProblem::Unvouched, v);
  i.newest = release(newest_checked(newest));
  i.layouts = std::string(newest.name);
  if (v.thread_db && !vouched) i.missing = check_thread_db(*v.thread_db).missing;
  return {vouched ? &newest : nullptr, std::move(i)};
}

}  // namespace

const std::vector<Layouts>& all_layouts() {
  using namespace layouts;
  // Rows [min, max_exclusive): the releases whose sources each was checked
  // against, 2.17 the oldest.  The newest row is open-ended: a later glibc
  // uses it when its libc's thread descriptors vouch for it (choose_layouts).
  static const std::vector<Layouts> rows = {
      {"glibc 2.17-2.20", {2, 17}, {2, 21}, &kMutex, &kRwlockPre225, &kSemPre221, &kCondPre225},
      {"glibc 2.21-2.24", {2, 21}, {2, 25}, &kMutex, &kRwlockPre225, &kSem64, &kCondPre225},
      {"glibc 2.25-2.40", {2, 25}, {2, 41}, &kMutex, &kRwlock225, &kSem64, &kCond225},
      {"glibc 2.41+", {2, 41}, {2, 44}, &kMutex, &kRwlock225, &kSem64, &kCond241, true},
  };
  return rows;
}

LayoutChoice choose_layouts(const GlibcVersion& version) {
  if (auto bad = contradiction(version)) return {nullptr, std::move(*bad)};
  const auto& rows = all_layouts();
  const std::pair<int, int> v = version_pair(version);
  if (v < rows.front().min) return {nullptr, outside_every_row(version)};
  const Layouts* row = row_containing(v);
  // A lower bound inside the open-ended row may be any later release.
  if (row && !(row->open_ended && !version.exact)) return {row, {}};
  return beyond_checked(version, rows.back());
}

const Layouts* layouts_for(const GlibcVersion& version) { return choose_layouts(version).row; }

}  // namespace pyhang::glibc
