// asyncio's debug offsets (cpython/asyncio_debug.hpp).
#include "cpython/asyncio_debug.hpp"

#include <algorithm>
#include <optional>
#include <string_view>

#include "cpython/internal.hpp"
#include "pyhang/base/format.hpp"
#include "pyhang/cpython/asyncio.hpp"
#include "pyhang/target/target.hpp"

namespace pyhang::cpython {

namespace detail {

namespace {

// One value a target's debug-offsets struct gives: where it sits in the
// struct, and the field of the reader it sets.
template <class Into>
struct DebugValue {
  const char* name;
  std::int64_t at;
  std::int64_t Into::*field;
};

// The differences of `taken` from `was`.
template <class Into, std::size_t N>
void diff(const DebugValue<Into> (&values)[N], const Into& was, const Into& taken, std::vector<FieldChange>& out) {
  for (const auto& v : values)
    if (was.*v.field != taken.*v.field) out.push_back({v.name, was.*v.field, taken.*v.field});
}

// Where an offset may lie: from `floor` (past an object's header) to
// `bound` (the size of the struct it is an offset into) less `width`.
struct Bounds {
  std::uint64_t floor = 0;
  std::uint64_t bound = 0;
  std::uint64_t width = 8;
};

// A value of a debug-offsets struct that cannot be used: its name, the
// value (-1: unreadable) and the size of the struct it must lie in.
struct Refused {
  std::string name;
  std::int64_t value = -1;
  std::uint64_t bound = 0;
};

// Sets each of `values` from the struct `d`; the first value missing or out
// of bounds, if one is.
template <class Into, std::size_t N>
std::optional<Refused> take(const RemoteStruct& d, const DebugValue<Into> (&values)[N], Bounds b, Into& into) {
  for (const auto& v : values) {
    auto value = d.get<std::uint64_t>(v.at);
    if (!value) return Refused{v.name, -1, b.bound};
    if (*value < b.floor || *value + b.width > b.bound)
      return Refused{v.name, static_cast<std::int64_t>(*value), b.bound};
    into.*v.field = static_cast<std::int64_t>(*value);
  }
  return std::nullopt;
}

// The warnings of a target's debug-offsets struct `what` against the row of `al`'s version.
StateWarning asyncio_warning(StateProblem kind, const char* what, const AsyncioLayout& al, Addr at = 0) {
  StateWarning w;
  w.kind = kind;
  w.address = at;
  w.text = std::to_string(al.major) + "." + std::to_string(al.minor);
  w.text3 = what;
  return w;
}

StateWarning refused(const char* what, const AsyncioLayout& al, Addr at, const Refused& r) {
  StateWarning w = asyncio_warning(StateProblem::AsyncioDebugImplausible, what, al, at);
  w.text2 = r.name;
  w.number = r.value;
  w.count = static_cast<std::int64_t>(r.bound);
  return w;
}

// The size of a PyObject header: no field of an object's own lies before it.
constexpr std::uint64_t kObjectHeader = 16;

// _Py_DebugOffsets (3.14+): the generator fields and llist_node.next, which
// the generated layout locates in _PyRuntime but does not take itself.  The
// target's values win; a struct without its cookie, or values beyond their
// struct, leave the row as it is.
void apply_runtime_offsets(MemoryReader& mem, const PythonState& state, const Layout& l, AsyncioLayout& al,
                           std::vector<StateWarning>& warnings) {
  constexpr const char* kWhat = "_Py_DebugOffsets";
  if (!state.runtime || !l.has(l.dbg_gen_iframe) || !l.has(l.dbg_gen_size) || !l.has(l.dbg_size)) return;
  RemoteStruct d;
  if (!d.load(mem, state.runtime, static_cast<std::size_t>(l.dbg_size))) return;
  char cookie[8] = {};
  for (int i = 0; i < 8; ++i) cookie[i] = static_cast<char>(d.get<std::uint8_t>(i).value_or(0));
  if (std::string_view(cookie, 8) != "xdebugpy") return;  // the generic reader already said so
  const DebugValue<AsyncioLayout> gen[] = {{"gi_iframe", l.dbg_gen_iframe, &AsyncioLayout::gen_iframe},
                                          {"gi_frame_state", l.dbg_gen_frame_state, &AsyncioLayout::gen_frame_state}};
  AsyncioLayout taken = al;
  auto size = d.get<std::uint64_t>(l.dbg_gen_size).value_or(0);
  if (auto r = take(d, gen, {kObjectHeader, std::min<std::uint64_t>(size, 1 << 16), 1}, taken)) {
    warnings.push_back(refused(kWhat, al, state.runtime, *r));
    return;
  }
  const DebugValue<AsyncioLayout> next[] = {{"llist_node.next", l.dbg_llist_next, &AsyncioLayout::llist_next}};
  if (l.has(l.dbg_llist_next) && take(d, next, {0, 16, 8}, taken)) taken.llist_next = al.llist_next;
  StateWarning w = asyncio_warning(StateProblem::AsyncioDebugDiffer, kWhat, al, state.runtime);
  diff(gen, al, taken, w.changes);
  diff(next, al, taken, w.changes);
  if (!w.changes.empty()) warnings.push_back(std::move(w));
  al = taken;
}

// _asyncio's own debug offsets (3.14+, _AsyncioDebug at `at`): TaskObj's
// size, name, is_task, coro and task_node, and where a thread state and an
// interpreter keep their task lists.  The target's values win, a warning
// naming each that differs; values beyond their struct leave the row and
// the generated layout as they are, with a warning.
void apply_asyncio_debug(MemoryReader& mem, Addr at, Effective& e, std::vector<StateWarning>& warnings) {
  constexpr const char* kWhat = "_AsyncioDebug";
  const AsyncioDebugMap* m = e.al.debug;
  if (!at || !m) return;
  RemoteStruct d;
  if (!d.load(mem, at, static_cast<std::size_t>(m->size))) {
    warnings.push_back(asyncio_warning(StateProblem::AsyncioDebugUnreadable, kWhat, e.al, at));
    return;
  }
  const DebugValue<AsyncioLayout> task[] = {{"task_name", m->task_name, &AsyncioLayout::task_name},
                                           {"task_is_task", m->task_is_task, &AsyncioLayout::task_is_task},
                                           {"task_coro", m->task_coro, &AsyncioLayout::task_coro},
                                           {"task_node", m->task_node, &AsyncioLayout::task_node}};
  const DebugValue<TaskLists> tstate[] = {
      {"asyncio_running_loop", m->tstate_running_loop, &TaskLists::tstate_running_loop},
      {"asyncio_running_task", m->tstate_running_task, &TaskLists::tstate_running_task},
      {"asyncio_tasks_head", m->tstate_tasks_head, &TaskLists::tstate_tasks_head}};
  const DebugValue<TaskLists> interp[] = {
      {"interpreter.asyncio_tasks_head", m->interp_tasks_head, &TaskLists::interp_tasks_head}};
  const DebugValue<AsyncioLayout> size[] = {{"task_size", m->task_size, &AsyncioLayout::task_size}};
  Effective taken = e;
  auto task_size = static_cast<std::uint64_t>(d.get<std::uint64_t>(m->task_size).value_or(0));
  auto r = take(d, size, {16, 4096 + 8, 8}, taken.al);   // TaskObj: 16 to 4096 bytes
  if (!r) r = take(d, task, {kObjectHeader, task_size, 1}, taken.al);
  if (!r) r = take(d, tstate, {0, d.get<std::uint64_t>(m->tstate_size).value_or(0), 16}, taken.lists);
  if (!r) r = take(d, interp, {0, d.get<std::uint64_t>(m->interp_size).value_or(0), 16}, taken.lists);
  if (r) {
    warnings.push_back(refused(kWhat, e.al, at, *r));
    return;
  }
  StateWarning w = asyncio_warning(StateProblem::AsyncioDebugDiffer, kWhat, e.al, at);
  diff(size, e.al, taken.al, w.changes);
  diff(task, e.al, taken.al, w.changes);
  diff(tstate, e.lists, taken.lists, w.changes);
  diff(interp, e.lists, taken.lists, w.changes);
  if (!w.changes.empty()) warnings.push_back(std::move(w));
  e = taken;
}

}  // namespace

Effective effective(MemoryReader& mem, const PythonState& state, const Layout& l, const AsyncioLayout& row,
                    Addr asyncio_debug, std::vector<StateWarning>& warnings) {
  Effective e{row, {l.tstateimpl_asyncio_tasks_head, l.tstateimpl_asyncio_running_loop,
                    l.tstateimpl_asyncio_running_task, l.interp_asyncio_tasks_head}};
  apply_runtime_offsets(mem, state, l, e.al, warnings);
  apply_asyncio_debug(mem, asyncio_debug, e, warnings);
  return e;
}


}  // namespace detail

Addr asyncio_debug_offsets(const AddressSpace& space) {
  for (const auto& o : space.objects()) {
    if (!o.elf) continue;
    if (const ElfSection* s = o.elf->section(".AsyncioDebug"); s && s->addr) return s->addr + o.bias;
  }
  return 0;
}

}  // namespace pyhang::cpython
