// glibc's locks as they sit in target memory (x86_64): which glibc the
// target runs, the layout of pthread_mutex_t, pthread_rwlock_t, sem_t and
// pthread_cond_t for that version, decoders for each, and identification of
// the lock a blocked thread waits for from its futex system call.
//
// No debug info is ever needed: the version comes from libc's own ELF file,
// layouts are tables (native/src/glibc_layouts.cpp) keyed by version range,
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
//    known only if the caller's frame still has it (NativeFrame::rsi).  The
//    pre-2.25 layout stores it (__mutex).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pyhang/core.hpp"
#include "pyhang/elf.hpp"
#include "pyhang/memory.hpp"

namespace pyhang {
class AddressSpace;
}

namespace pyhang::glibc {

// ---- version -------------------------------------------------------------

struct GlibcVersion {
  int major = 0;
  int minor = 0;
  std::string text;    // "2.36"
  std::string source;  // "__nptl_version", "banner", "file name", "version definitions"
  bool exact = true;   // false: a lower bound (highest GLIBC_2.x version definition)
  bool operator<(const GlibcVersion& o) const { return std::pair(major, minor) < std::pair(o.major, o.minor); }
};

struct VersionResult {
  std::optional<GlibcVersion> version;
  std::string problem;  // one line when version is absent
};

// "2.36" / "2.36.9000" / "2.17-326.el7" → {2, 36}; nullopt for anything else.
std::optional<GlibcVersion> parse_glibc_version(std::string_view text);

// From libc's file alone, in this order: the __nptl_version string (.dynsym,
// 2.34+; libpthread's before), the "release version 2.X" banner in
// .rodata, the file name (libc-2.31.so), the highest GLIBC_2.X of
// .gnu.version_d (a lower bound, exact=false).
VersionResult detect_version(const ElfFile& libc);
// Finds libc (libc.so*, libc-2.*.so) among the mapped objects; falls back to
// libpthread for __nptl_version.
VersionResult detect_version(const AddressSpace& space);

// ---- layouts ---------------------------------------------------------------

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
std::string_view to_string(WaitRole role);

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
  // 2.25+
  std::uint32_t wseq = kNoField, g1_start = kNoField, g_refs = kNoField, g_size = kNoField;
  std::uint32_t g1_orig_size = kNoField, wrefs = kNoField, g_signals = kNoField;
  std::uint32_t wrefs_waiter_shift = 3;
  // pre-2.25
  std::uint32_t lock = kNoField, futex = kNoField, total_seq = kNoField, wakeup_seq = kNoField;
  std::uint32_t woken_seq = kNoField, mutex = kNoField, nwaiters = kNoField, broadcast_seq = kNoField;
  std::uint32_t nwaiters_shift = 1;
  std::vector<FutexWord> futex_words;
};

// The four layouts of one glibc version range [min, max_exclusive).
struct Layouts {
  std::string_view name;  // "glibc 2.25+"
  std::pair<int, int> min, max_exclusive;
  const MutexLayout* mutex;
  const RwlockLayout* rwlock;
  const SemLayout* sem;
  const CondLayout* cond;
};

// The table row for a version; nullptr (and a one-line problem) when the
// version is outside every row: unknown versions are reported, not guessed.
const Layouts* layouts_for(const GlibcVersion& version, std::string* problem = nullptr);
const std::vector<Layouts>& all_layouts();

// ---- decoders --------------------------------------------------------------

// A lock as decoded from its bytes.  Fields a layout does not have stay unset.
struct LockInfo {
  std::string kind;        // "mutex-normal", "mutex-recursive", ..., "rwlock", "semaphore", "condvar"
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
  std::vector<std::string> flags;           // "robust", "pi", "pp", "pshared", "owner-died", "waiters", ...
  std::string note;                         // what glibc does not record, one line
  std::vector<std::pair<std::string, std::int64_t>> fields;  // raw fields, for display
};

LockInfo decode_mutex(MemoryReader& mem, Addr addr, const MutexLayout& layout);
LockInfo decode_rwlock(MemoryReader& mem, Addr addr, const RwlockLayout& layout);
LockInfo decode_semaphore(MemoryReader& mem, Addr addr, const SemLayout& layout);
LockInfo decode_condvar(MemoryReader& mem, Addr addr, const CondLayout& layout);

// ---- what a blocked thread waits for ---------------------------------------

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

struct Candidate {
  std::string kind;      // "mutex", "rwlock-read", "rwlock-write", "semaphore", "condvar", "futex", ...
  Addr address = 0;      // the lock object's base
  int score = 0;
  std::string reasons;   // "+4 lock word has waiters; -3 kind unknown; ..."
  LockInfo lock;
};

struct BlockedOn {
  // "" when the thread is not waiting on a futex the decoders understand;
  // otherwise one of: "mutex", "rwlock-read", "rwlock-write", "semaphore",
  // "condvar", "futex" (a futex word no layout explains), "glibc-internal-lock"
  // (__lll_lock_wait_private: malloc, stdio, dl locks).
  std::string kind;
  std::optional<Addr> address;        // the lock object (its base)
  std::optional<Addr> futex;          // the word the thread sleeps on
  std::optional<std::uint32_t> futex_op, futex_value;  // syscall op and expected value
  std::optional<LockInfo> lock;       // the decoded lock
  std::vector<int> owners;            // TIDs, from the lock word
  std::string owner_source;           // "lock-word" | "unknown"
  std::string confidence;             // "certain" | "likely" | "guess"
  std::string evidence;               // how the kind was decided, one line
  std::string detail;                 // one line for users
  std::optional<Addr> condvar_mutex;  // the mutex a condvar waiter must reacquire, when known
  std::vector<Candidate> candidates;  // everything considered, best first
  std::string problem;                // why nothing could be identified
};

// Identifies what `thread` waits for.  Evidence, strongest first:
//  1. frame 0's registers: orig_rax == 202 (futex) gives the futex word
//     (rdi), the op (rsi: FUTEX_LOCK_PI only ever comes from a PI mutex) and
//     the value the thread expected (rdx, compared with the word now);
//  2. every (layout, futex-word offset) pair of the version's table gives a
//     candidate base = futex - offset, decoded and scored by how consistent
//     its fields are with "a thread sleeps on this word" (see glibc_locks.cpp);
//  3. frame names in libc/libpthread (pthread_rwlock_wrlock, sem_wait, ...)
//     add to the candidates of their family; names are hints only: Debian's
//     libc exports no symbol for __lll_lock_wait, __futex_abstimed_wait_common
//     or do_futex_wait, so a debugger may show "??" or the nearest exported
//     name, and the layout evidence must stand on its own.
// With no futex in frame 0 (not in a syscall, or registers unknown), an rdi
// recovered for a frame named like a lock function is used as the lock
// address instead.
BlockedOn identify_blocked(MemoryReader& mem, const Layouts& layouts, const BlockedThread& thread);

// Normalised frame-name hint: "mutex", "rwlock-read", "rwlock-write",
// "rwlock", "semaphore", "condvar", "glibc-internal-lock", "futex" (generic
// futex layer) or "" (unrelated).  Strips __GI_ prefixes, leading
// underscores, @version suffixes.
std::string_view frame_hint(std::string_view function);

}  // namespace pyhang::glibc
