// Every thread's struct pthread, found in target memory without stopping
// the target: what a thread's fs_base would give (on x86_64 the thread
// pointer is the address of its struct pthread), for threads nobody traces.
//
// glibc keeps each thread's descriptor on one of two lists, linked through
// struct pthread's `list` member (a list_t {next, prev}, circular through
// its head):
//   _dl_stack_used  threads on stacks glibc allocated
//   _dl_stack_user  the main thread, and threads on stacks the program gave
// Since 2.34 both heads are members of ld.so's _rtld_global, at offsets libc
// exports for libthread_db (_thread_db_rtld_global__dl_stack_used/_user);
// before, they were libpthread's variables `stack_used` and `__stack_user`
// (found only when its symbol table names them).  The member offsets come
// from the same descriptors (_thread_db_pthread_list, _thread_db_pthread_tid,
// _thread_db_list_t_next/prev), as libthread_db's td_ta_thr_iter reads them.
//
// The target runs while the lists are read: a thread created or joined
// meanwhile can leave a list half-changed.  Every step is checked (the
// entry's prev points back, its TCB header points to itself, no entry twice,
// at most kMaxThreads entries) and the walk stops at the first that fails,
// saying why (a ThreadListIssue: its kind and the addresses it is about;
// words for people are python/pyhang/render/glibc.py's); a caller may
// simply walk again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pyhang/base/names.hpp"
#include "pyhang/base/or_why.hpp"
#include "pyhang/target/memory.hpp"

namespace pyhang {
class AddressSpace;
class Target;
}  // namespace pyhang

namespace pyhang::glibc {

inline constexpr std::size_t kMaxThreads = 1u << 16;  // entries walked on all lists together

struct ListHead {
  std::string name;  // "_dl_stack_used"
  Addr address = 0;  // of its list_t, in the target
};

// Why glibc's lists of threads could not be found, or why a walk stopped early.
enum class ThreadListProblem : std::uint8_t {
  None,
  LibcNotMapped,        // libc is not mapped
  NoDescriptors,        // no descriptors of the lists (_thread_db_pthread_list and the heads) in `library` (those tried)
  NextPrevNotPointers,  // `library`'s _thread_db_list_t_next/prev are not two 64-bit pointers
  HeadsNotListT,        // `library`'s _thread_db_rtld_global__dl_stack_used/_user do not both describe a list_t
  NoRtldGlobal,         // no _rtld_global in ld.so, nor __nptl_rtld_global in `library`
  HeadUnreadable,       // the head (head, head_address) cannot be read
  TooManyEntries,       // more than `number` entries (at entry `step` of head, `entry`): not a list, or a cycle
  NotAnEntry,           // entry `step` of head (`entry`) is not a pointer to a list entry
  SeenBefore,           // entry `step` of head (`entry`) was seen before: a cycle that misses the head
  PrevUnreadable,       // entry `step` of head (`entry`) cannot be read
  PrevMismatch,         // its prev is `value`, not `expected`: the list changed while read, or is not a list
  NotPthread,           // no struct pthread at `pthread` (its TCB header does not point to itself)
  TidUnreadable,        // the tid of the struct pthread at `pthread` cannot be read
  TidTwice,             // TID `number` is on the lists twice (at `value` and `pthread`)
  NextUnreadable,       // the next pointer of entry `step` of head (`entry`) cannot be read
};

inline constexpr std::array<Named<ThreadListProblem>, 16> kThreadListProblemNames{{
    {ThreadListProblem::None, ""},
    {ThreadListProblem::LibcNotMapped, "libc-not-mapped"},
    {ThreadListProblem::NoDescriptors, "no-descriptors"},
    {ThreadListProblem::NextPrevNotPointers, "next-prev-not-pointers"},
    {ThreadListProblem::HeadsNotListT, "heads-not-list-t"},
    {ThreadListProblem::NoRtldGlobal, "no-rtld-global"},
    {ThreadListProblem::HeadUnreadable, "head-unreadable"},
    {ThreadListProblem::TooManyEntries, "too-many-entries"},
    {ThreadListProblem::NotAnEntry, "not-an-entry"},
    {ThreadListProblem::SeenBefore, "seen-before"},
    {ThreadListProblem::PrevUnreadable, "prev-unreadable"},
    {ThreadListProblem::PrevMismatch, "prev-mismatch"},
    {ThreadListProblem::NotPthread, "not-pthread"},
    {ThreadListProblem::TidUnreadable, "tid-unreadable"},
    {ThreadListProblem::TidTwice, "tid-twice"},
    {ThreadListProblem::NextUnreadable, "next-unreadable"},
}};
constexpr std::string_view to_string(ThreadListProblem p) { return name_in(kThreadListProblemNames, p); }

struct ThreadListIssue {
  ThreadListProblem kind = ThreadListProblem::None;
  std::string library;          // the library (or those tried, ", " between) the descriptors are missing from
  std::string head;             // the list: "_dl_stack_used"
  Addr head_address = 0;        // ... its list_t
  std::size_t step = 0;         // the entry's index on that list
  Addr entry = 0;               // the entry (a list_t inside a struct pthread)
  Addr pthread = 0;             // the struct pthread
  Addr value = 0, expected = 0;  // PrevMismatch: the prev read and the one expected; TidTwice: the other pthread
  std::int64_t number = 0;      // TooManyEntries: the bound; TidTwice: the TID
  explicit operator bool() const { return kind != ThreadListProblem::None; }
};

// Where the lists are and how their entries are laid out.
struct ThreadListLayout {
  std::vector<ListHead> heads;
  std::uint32_t list_offset = 0;  // struct pthread's list member
  std::uint32_t tid_offset = 0;   // struct pthread's tid (32-bit)
  std::uint32_t next_offset = 0;  // list_t's next
  std::uint32_t prev_offset = 8;  // list_t's prev
  std::string library;            // the library whose _thread_db_* descriptors gave the offsets ("libc.so.6")
  bool in_rtld_global = false;    // the heads are _rtld_global's members (2.34+), else the library's own symbols
};

// The layout, or what is missing.
using ThreadListLayoutResult = OrWhy<ThreadListLayout, ThreadListIssue>;

// From the descriptors of libc (then libpthread) and the address of
// _rtld_global (ld.so's symbol, else the pointer libc keeps in
// __nptl_rtld_global); the problem says what is missing.
ThreadListLayoutResult thread_list_layout(const AddressSpace& space, MemoryReader& memory);

struct ThreadList {
  std::map<int, Addr> threads;  // TID → struct pthread
  // Entries whose tid is 0: a thread that exited and was not joined yet
  // (the kernel clears tid at exit), or one clone() has not started.
  std::size_t without_tid = 0;
  // Why the list may be incomplete; kind None when every list was walked
  // back to its head.
  ThreadListIssue problem;
};

// Walks the lists of `layout` (reads only, at most max_entries entries).
ThreadList walk_thread_lists(MemoryReader& memory, const ThreadListLayout& layout,
                             std::size_t max_entries = kMaxThreads);

// Layout and walk for a target: the problem says why when there is no layout.
ThreadList thread_list(Target& target);

}  // namespace pyhang::glibc
