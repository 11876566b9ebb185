// What a _thread.lock or _thread.RLock object says about itself (held, an
// RLock's owner and count), read with the row of its minor that its type's
// tp_basicsize selects (cpython/layouts/locks.hpp): the one reader of lock
// state, for lock waits, lock objects and values alike.
#include "cpython/internal.hpp"

namespace pyhang::cpython {

namespace detail {

LockObjectState read_lock_object(MemoryReader& mem, const Layout& l, const LockLayout& minor_row, Addr object,
                                 bool rlock) {
  LockObjectState s;
  s.row = &minor_row;
  // A minor with two forms (3.13) is told apart by the type's tp_basicsize.
  if (l.has(l.type_basicsize)) {
    auto tp = mem.read_pointer(object + static_cast<Addr>(l.object_ob_type));
    auto size = tp && plausible_pointer(*tp) ? mem.read_value<std::int64_t>(*tp + static_cast<Addr>(l.type_basicsize))
                                             : std::nullopt;
    if (size) s.row = lock_layout_for(minor_row.major, minor_row.minor, rlock, *size);
    if (!s.row) s.row = &minor_row;
  }
  const LockLayout& row = *s.row;
  if (rlock) {
    RemoteStruct r;
    if (!r.load(mem, object, span_of({row.rlock_owner, row.rlock_count}))) return s;
    s.owner = r.get<std::uint64_t>(row.rlock_owner);
    s.count = r.get<std::uint64_t>(row.rlock_count);
    if (s.owner) s.locked = *s.owner != 0;
    // _PyRecursiveMutex.level counts the acquisitions beyond the first.
    if (row.rlock_count_is_level && s.count && s.owner && *s.owner) *s.count += 1;
  } else if (row.lock_mutex >= 0) {
    if (auto b = mem.read_value<std::uint8_t>(object + static_cast<Addr>(row.lock_mutex))) s.locked = (*b & 1) != 0;
  } else if (row.lock_locked >= 0) {
    if (auto b = mem.read_value<std::uint8_t>(object + static_cast<Addr>(row.lock_locked))) s.locked = *b != 0;
  }
  return s;
}

}  // namespace detail

}  // namespace pyhang::cpython
