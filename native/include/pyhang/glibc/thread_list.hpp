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
// saying why; a caller may simply walk again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pyhang/base/outcome.hpp"
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

// Where the lists are and how their entries are laid out.
struct ThreadListLayout {
  std::vector<ListHead> heads;
  std::uint32_t list_offset = 0;  // struct pthread's list member
  std::uint32_t tid_offset = 0;   // struct pthread's tid (32-bit)
  std::uint32_t next_offset = 0;  // list_t's next
  std::uint32_t prev_offset = 8;  // list_t's prev
  std::string source;             // "libc.so.6 _thread_db_* and ld-linux-x86-64.so.2 _rtld_global"
};

// From the descriptors of libc (then libpthread) and the address of
// _rtld_global (ld.so's symbol, else the pointer libc keeps in
// __nptl_rtld_global); an error saying what is missing.
Outcome<ThreadListLayout> thread_list_layout(const AddressSpace& space, MemoryReader& memory);

struct ThreadList {
  std::map<int, Addr> threads;  // TID → struct pthread
  // Entries whose tid is 0: a thread that exited and was not joined yet
  // (the kernel clears tid at exit), or one clone() has not started.
  std::size_t without_tid = 0;
  // Why the list may be incomplete; empty when every list was walked back
  // to its head.
  std::string problem;
};

// Walks the lists of `layout` (reads only, at most max_entries entries).
ThreadList walk_thread_lists(MemoryReader& memory, const ThreadListLayout& layout,
                             std::size_t max_entries = kMaxThreads);

// Layout and walk for a target: the problem says why when there is no layout.
ThreadList thread_list(Target& target);

}  // namespace pyhang::glibc
