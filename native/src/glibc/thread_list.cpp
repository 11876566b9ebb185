// glibc's lists of thread descriptors, walked in target memory
// (pyhang/glibc/thread_list.hpp).
#include "pyhang/glibc/thread_list.hpp"

#include <unordered_set>

#include "pyhang/glibc/libraries.hpp"
#include "pyhang/glibc/nptl.hpp"
#include "pyhang/glibc/thread_db.hpp"
#include "pyhang/target/target.hpp"

namespace pyhang::glibc {
namespace {

constexpr std::uint32_t kListTBits = 128;  // list_t: two 64-bit pointers
constexpr Addr kUserSpaceEnd = 0x800000000000ull;

// A list_t member: one 128-bit field inside struct pthread / _rtld_global.
bool is_list_field(const std::optional<DbDesc>& d, std::uint32_t within) {
  return d && d->size_bits == kListTBits && d->count == 1 && d->offset <= within;
}

// A list_t pointer member: one 64-bit field inside list_t.
std::optional<std::uint32_t> pointer_field(const std::optional<DbDesc>& d, std::uint32_t fallback) {
  if (!d) return fallback;
  if (d->size_bits != 64 || d->count != 1 || d->offset > 8) return std::nullopt;
  return d->offset;
}

// The address of _rtld_global: ld.so's own symbol, else the pointer libc
// keeps to it (__nptl_rtld_global), for an ld.so whose file cannot be read.
std::optional<Addr> rtld_global(const AddressSpace& space, const LoadedObject& libc, MemoryReader& memory) {
  if (const LoadedObject* ld = find_library(space, Library::Loader))
    if (auto a = space.symbol_address("_rtld_global", ld)) return a;
  if (auto p = space.symbol_address("__nptl_rtld_global", &libc)) return memory.read_pointer(*p);
  return std::nullopt;
}

ThreadListIssue layout_issue(ThreadListProblem kind, const std::string& library) {
  ThreadListIssue i;
  i.kind = kind;
  i.library = library;
  return i;
}

}  // namespace

ThreadListLayoutResult thread_list_layout(const AddressSpace& space, MemoryReader& memory) {
  std::string tried;
  for (Library which : {Library::Libc, Library::Libpthread}) {
    const LoadedObject* lib = find_library(space, which);
    if (!lib || !lib->elf) continue;
    const ThreadDb db = read_thread_db(*lib->elf);
    const std::string name(lib->basename());
    tried += (tried.empty() ? "" : ", ") + name;
    if (!db.pthread_tid || tid_descriptor_issue(*db.pthread_tid) ||
        !is_list_field(db.pthread_list, nptl::kMaxPthreadSize))
      continue;
    ThreadListLayout layout;
    layout.list_offset = db.pthread_list->offset;
    layout.tid_offset = db.pthread_tid->offset;
    auto next = pointer_field(db.list_t_next, 0), prev = pointer_field(db.list_t_prev, 8);
    if (!next || !prev || *next == *prev) return layout_issue(ThreadListProblem::NextPrevNotPointers, name);
    layout.next_offset = *next;
    layout.prev_offset = *prev;
    if (db.rtld_global_dl_stack_used || db.rtld_global_dl_stack_user) {
      // glibc >= 2.34: members of _rtld_global.
      constexpr std::uint32_t kMaxRtldGlobal = 1u << 16;
      if (!is_list_field(db.rtld_global_dl_stack_used, kMaxRtldGlobal) ||
          !is_list_field(db.rtld_global_dl_stack_user, kMaxRtldGlobal))
        return layout_issue(ThreadListProblem::HeadsNotListT, name);
      auto base = rtld_global(space, *lib, memory);
      if (!base) return layout_issue(ThreadListProblem::NoRtldGlobal, name);
      layout.heads = {{"_dl_stack_used", *base + db.rtld_global_dl_stack_used->offset},
                      {"_dl_stack_user", *base + db.rtld_global_dl_stack_user->offset}};
      layout.library = name;
      layout.in_rtld_global = true;
      return layout;
    }
    // Before 2.34: libpthread's own variables, named in its symbol table only.
    auto used = space.symbol_address("stack_used", lib), user = space.symbol_address("__stack_user", lib);
    if (!used || !user) continue;
    layout.heads = {{"stack_used", *used}, {"__stack_user", *user}};
    layout.library = name;
    return layout;
  }
  if (tried.empty()) return layout_issue(ThreadListProblem::LibcNotMapped, "");
  return layout_issue(ThreadListProblem::NoDescriptors, tried);
}

ThreadList walk_thread_lists(MemoryReader& memory, const ThreadListLayout& layout, std::size_t max_entries) {
  ThreadList out;
  std::unordered_set<Addr> seen;  // list_t entries, on every list: one entry on two lists is garbage too
  ThreadListIssue at;              // where the walk is: the head, the entry and its struct pthread
  auto fail = [&out, &at](ThreadListProblem why) {
    at.kind = why;
    out.problem = at;
    return std::move(out);
  };
  for (const ListHead& head : layout.heads) {
    at = ThreadListIssue{};
    at.head = head.name;
    at.head_address = head.address;
    Addr previous = head.address;
    auto node = memory.read_pointer(head.address + layout.next_offset);
    if (!node) return fail(ThreadListProblem::HeadUnreadable);
    for (std::size_t step = 0; *node != head.address; ++step) {
      const Addr entry = *node;
      at.step = step;
      at.entry = entry;
      at.pthread = 0;
      if (seen.size() >= max_entries) {
        at.number = static_cast<std::int64_t>(max_entries);
        return fail(ThreadListProblem::TooManyEntries);
      }
      if (entry == 0 || entry % 8 != 0 || entry >= kUserSpaceEnd || entry < layout.list_offset)
        return fail(ThreadListProblem::NotAnEntry);
      if (!seen.insert(entry).second) return fail(ThreadListProblem::SeenBefore);
      // The entry's prev points back where we came from, unless the list
      // changed between our reads (a thread started or was joined) or this
      // is not a list.
      auto prev = memory.read_pointer(entry + layout.prev_offset);
      if (!prev) return fail(ThreadListProblem::PrevUnreadable);
      if (*prev != previous) {
        at.value = *prev;
        at.expected = previous;
        return fail(ThreadListProblem::PrevMismatch);
      }
      const Addr pthread = entry - layout.list_offset;
      at.pthread = pthread;
      auto tcb = memory.read_pointer(pthread + nptl::kTcbOffset);
      auto self = memory.read_pointer(pthread + nptl::kTcbSelfOffset);
      if (!tcb || !self || *tcb != pthread || *self != pthread) return fail(ThreadListProblem::NotPthread);
      auto tid = memory.read_value<std::int32_t>(pthread + layout.tid_offset);
      if (!tid) return fail(ThreadListProblem::TidUnreadable);
      if (*tid <= 0) {
        ++out.without_tid;
      } else if (!out.threads.emplace(*tid, pthread).second) {
        at.number = *tid;
        at.value = out.threads[*tid];
        return fail(ThreadListProblem::TidTwice);
      }
      previous = entry;
      node = memory.read_pointer(entry + layout.next_offset);
      if (!node) return fail(ThreadListProblem::NextUnreadable);
    }
  }
  return out;
}

ThreadList thread_list(Target& target) {
  auto layout = thread_list_layout(target.space(), target.memory());
  if (!layout) {
    ThreadList out;
    out.problem = layout.problem();
    return out;
  }
  return walk_thread_lists(target.memory(), *layout);
}

}  // namespace pyhang::glibc
