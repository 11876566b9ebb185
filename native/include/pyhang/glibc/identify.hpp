// Which glibc lock a blocked thread waits for, from its futex system call,
// the lock layouts of the target's glibc and its frame names; and who owns
// that lock, as far as the lock word records it (pyhang/glibc/decode.hpp).
#pragma once

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

struct Candidate {
  WaitKind kind = WaitKind::None;
  Addr address = 0;      // the lock object's base
  int score = 0;
  std::string reasons;   // "+4 lock word has waiters; -3 kind unknown; ..."
  LockInfo lock;
};

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
  std::string evidence;               // how the kind was decided, one line
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
