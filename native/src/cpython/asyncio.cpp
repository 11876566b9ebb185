// asyncio tasks, the futures they await and the loops running them (see
// pyhang/cpython/asyncio.hpp).
#include "pyhang/cpython/asyncio.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "cpython/internal.hpp"
#include "cpython/layouts/asyncio.hpp"
#include "cpython/layouts/objects.hpp"
#include "pyhang/base/format.hpp"
#include "pyhang/cpython/locks.hpp"
#include "pyhang/cpython/pyobjects.hpp"
#include "pyhang/target/target.hpp"

namespace pyhang::cpython {

namespace {

using detail::plausible_pointer;
using detail::RemoteStruct;

void note(std::string& problem, const std::string& what) {
  if (problem.empty()) problem = what;
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// The function of a frame, without its class (co_qualname from 3.11).
std::string_view bare(std::string_view function) {
  auto dot = function.rfind('.');
  return dot == std::string_view::npos ? function : function.substr(dot + 1);
}

bool is_generator_type(std::string_view type) {
  return type == "coroutine" || type == "generator" || type == "async_generator";
}

// 3.14+: where a thread state (_PyThreadStateImpl) and an interpreter keep
// the heads of their lists of native tasks, and which loop and task a
// thread runs now; -1 before 3.14.
struct TaskLists {
  std::int64_t tstate_tasks_head = -1;
  std::int64_t tstate_running_loop = -1;
  std::int64_t tstate_running_task = -1;
  std::int64_t interp_tasks_head = -1;
};

// What the C objects and the task lists are read with: the hand-written row
// and the generated layout, corrected by the target's own debug offsets.
struct Effective {
  AsyncioLayout al;
  TaskLists lists;
};

// One value a target's debug-offsets struct gives: where it sits in the
// struct, and the field of the reader it sets.
template <class Into>
struct DebugValue {
  const char* name;
  std::int64_t at;
  std::int64_t Into::*field;
};

// The differences of `taken` from `was`, as "name old->new".
template <class Into, std::size_t N>
void diff(const DebugValue<Into> (&values)[N], const Into& was, const Into& taken, std::vector<std::string>& out) {
  for (const auto& v : values)
    if (was.*v.field != taken.*v.field)
      out.push_back(std::string(v.name) + " " + std::to_string(was.*v.field) + "->" + std::to_string(taken.*v.field));
}

// Where an offset may lie: from `floor` (past an object's header) to
// `bound` (the size of the struct it is an offset into) less `width`.
struct Bounds {
  std::uint64_t floor = 0;
  std::uint64_t bound = 0;
  std::uint64_t width = 8;
};

// Sets each of `values` from the struct `d`.  Empty, or what the first
// value missing or out of bounds is.
template <class Into, std::size_t N>
std::string take(const RemoteStruct& d, const DebugValue<Into> (&values)[N], Bounds b, Into& into) {
  for (const auto& v : values) {
    auto value = d.get<std::uint64_t>(v.at);
    if (!value) return std::string(v.name) + " unreadable";
    if (*value < b.floor || *value + b.width > b.bound)
      return std::string(v.name) + " " + std::to_string(*value) + " outside its struct of " + std::to_string(b.bound) +
             " bytes";
    into.*v.field = static_cast<std::int64_t>(*value);
  }
  return {};
}

// The size of a PyObject header: no field of an object's own lies before it.
constexpr std::uint64_t kObjectHeader = 16;

std::string version_name(const AsyncioLayout& al) {
  return std::to_string(al.major) + "." + std::to_string(al.minor);
}

// _Py_DebugOffsets (3.14+): the generator fields and llist_node.next, which
// the generated layout locates in _PyRuntime but does not take itself.  The
// target's values win; a struct without its cookie, or values beyond their
// struct, leave the row as it is.
void apply_runtime_offsets(MemoryReader& mem, const PythonState& state, const Layout& l, AsyncioLayout& al,
                           std::vector<std::string>& warnings) {
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
  if (std::string why = take(d, gen, {kObjectHeader, std::min<std::uint64_t>(size, 1 << 16), 1}, taken); !why.empty()) {
    warnings.push_back("asyncio: _Py_DebugOffsets gen_object implausible (" + why + "); using the " +
                       version_name(al) + " row");
    return;
  }
  if (l.has(l.dbg_llist_next)) {
    const DebugValue<AsyncioLayout> next[] = {{"llist_node.next", l.dbg_llist_next, &AsyncioLayout::llist_next}};
    if (!take(d, next, {0, 16, 8}, taken).empty()) taken.llist_next = al.llist_next;
  }
  std::vector<std::string> diffs;
  diff(gen, al, taken, diffs);
  if (taken.llist_next != al.llist_next) diffs.push_back("llist_node.next");
  if (!diffs.empty()) {
    std::string line;
    for (const auto& d : diffs) line += (line.empty() ? "" : ", ") + d;
    warnings.push_back("asyncio: the target's _Py_DebugOffsets differ from the " + version_name(al) + " row in " +
                       line + "; using the target's");
  }
  al = taken;
}

// _asyncio's own debug offsets (3.14+, _AsyncioDebug at `at`): TaskObj's
// size, name, is_task, coro and task_node, and where a thread state and an
// interpreter keep their task lists.  The target's values win, a warning
// naming each that differs; values beyond their struct leave the row and
// the generated layout as they are, with a warning.
void apply_asyncio_debug(MemoryReader& mem, Addr at, Effective& e, std::vector<std::string>& warnings) {
  const AsyncioDebugMap* m = e.al.debug;
  if (!at || !m) return;
  const std::string row = version_name(e.al) + " row";
  RemoteStruct d;
  if (!d.load(mem, at, static_cast<std::size_t>(m->size))) {
    warnings.push_back("asyncio: _AsyncioDebug at " + hex(at) + " unreadable; using the " + row);
    return;
  }
  const DebugValue<AsyncioLayout> task[] = {{"task_name", m->task_name, &AsyncioLayout::task_name},
                                           {"task_is_task", m->task_is_task, &AsyncioLayout::task_is_task},
                                           {"task_coro", m->task_coro, &AsyncioLayout::task_coro},
                                           {"task_node", m->task_node, &AsyncioLayout::task_node}};
  const DebugValue<TaskLists> tstate[] = {
      {"asyncio_running_loop", m->tstate_running_loop, &TaskLists::tstate_running_loop},
      {"asyncio_running_task", m->tstate_running_task, &TaskLists::tstate_running_task},
      {"thread asyncio_tasks_head", m->tstate_tasks_head, &TaskLists::tstate_tasks_head}};
  const DebugValue<TaskLists> interp[] = {
      {"interpreter asyncio_tasks_head", m->interp_tasks_head, &TaskLists::interp_tasks_head}};
  Effective taken = e;
  auto task_size = d.get<std::uint64_t>(m->task_size).value_or(0);
  std::string why = task_size < 16 || task_size > 4096 ? "TaskObj size " + std::to_string(task_size) : "";
  taken.al.task_size = static_cast<std::int64_t>(task_size);
  if (why.empty()) why = take(d, task, {kObjectHeader, task_size, 1}, taken.al);
  if (why.empty()) why = take(d, tstate, {0, d.get<std::uint64_t>(m->tstate_size).value_or(0), 16}, taken.lists);
  if (why.empty()) why = take(d, interp, {0, d.get<std::uint64_t>(m->interp_size).value_or(0), 16}, taken.lists);
  if (!why.empty()) {
    warnings.push_back("asyncio: _AsyncioDebug at " + hex(at) + " implausible (" + why + "); using the " + row);
    return;
  }
  std::vector<std::string> diffs;
  if (taken.al.task_size != e.al.task_size)
    diffs.push_back("task_size " + std::to_string(e.al.task_size) + "->" + std::to_string(taken.al.task_size));
  diff(task, e.al, taken.al, diffs);
  diff(tstate, e.lists, taken.lists, diffs);
  diff(interp, e.lists, taken.lists, diffs);
  if (!diffs.empty()) {
    std::string line;
    for (const auto& x : diffs) line += (line.empty() ? "" : ", ") + x;
    warnings.push_back("asyncio: the target's _AsyncioDebug differ from the " + row + " in " + line +
                       "; using the target's (fields it does not cover come from the row)");
  }
  e = taken;
}

Effective effective(MemoryReader& mem, const PythonState& state, const Layout& l, const AsyncioLayout& row,
                    Addr asyncio_debug, std::vector<std::string>& warnings) {
  Effective e{row, {l.tstateimpl_asyncio_tasks_head, l.tstateimpl_asyncio_running_loop,
                    l.tstateimpl_asyncio_running_task, l.interp_asyncio_tasks_head}};
  apply_runtime_offsets(mem, state, l, e.al, warnings);
  apply_asyncio_debug(mem, asyncio_debug, e, warnings);
  return e;
}

class Reader {
 public:
  Reader(MemoryReader& mem, const PythonState& state, const Layout& layout, const AsyncioLayout& al,
         const AsyncioOptions& opts)
      : mem_(mem), state_(state), l_(layout), al_(al), opts_(opts), objs_(mem, state),
        objects_(mem, layout, frame_opts()), codes_(objects_) {}

  PyObjects& objs() { return objs_; }

  std::string type(Addr obj) { return plausible_pointer(obj) ? objs_.type_name(obj).value_or("") : ""; }
  // The tp_name of a type object itself (a C string, of any alignment).
  std::string type_name_of_type(Addr type) {
    Addr name = mem_.read_pointer(type + static_cast<Addr>(l_.type_tp_name)).value_or(0);
    return name >= 0x1000 && name < (Addr{1} << 47) ? mem_.read_cstring(name, 256).value_or("") : "";
  }
  bool is_none(Addr obj) { return !plausible_pointer(obj) || type(obj) == "NoneType"; }

  // A C future (or task) of _asyncio, or a subclass that keeps its layout.
  bool c_layout(Addr obj, std::int64_t size) {
    std::string t = type(obj);
    if (t == "_asyncio.Future" || t == "_asyncio.Task") return true;
    if (t.empty() || objs_.attribute(obj, "_state")) return false;  // pure Python: _state in its dict
    auto basic = objs_.basic_size(obj);
    return basic && *basic >= size;
  }

  // 3.14+: the TaskObj whose task_node is at `node`, when it is one (a C
  // task, is_task set); 0 for anything else (garbage in a task list).
  Addr task_of_node(Addr node) {
    if (al_.task_node < 0 || node < static_cast<Addr>(al_.task_node)) return 0;
    Addr t = node - static_cast<Addr>(al_.task_node);
    if (!plausible_pointer(t) || !c_layout(t, al_.task_size)) return 0;
    if (al_.task_is_task >= 0 && mem_.read_value<std::uint8_t>(t + static_cast<Addr>(al_.task_is_task)) != 1) return 0;
    return t;
  }

  static FutureState c_state(std::int32_t s) {
    switch (s) {
      case 0: return FutureState::Pending;
      case 1: return FutureState::Cancelled;
      case 2: return FutureState::Finished;
      default: return FutureState::Unknown;
    }
  }

  FutureState py_state(Addr obj) {
    Addr state = objs_.attribute(obj, "_state");
    // asyncio.futures.Future keeps `_state = _PENDING` on the class: an
    // instance has its own only once it is done.
    if (!state) return objs_.attribute(obj, "_loop") ? FutureState::Pending : FutureState::Unknown;
    auto s = objs_.str(state).value_or("");
    if (s == "PENDING") return FutureState::Pending;
    if (s == "CANCELLED") return FutureState::Cancelled;
    if (s == "FINISHED") return FutureState::Finished;
    return FutureState::Unknown;
  }

  // The callables registered on a future: callback0 and the (callback,
  // context) tuples of its callbacks list (C), or _callbacks (Python).
  std::vector<Addr> callbacks(Addr fut, bool c) {
    std::vector<Addr> out;
    Addr list = 0;
    if (c) {
      RemoteStruct f;
      if (f.load(mem_, fut, static_cast<std::size_t>(al_.fut_callbacks + 8))) {
        if (Addr cb0 = f.ptr(al_.fut_callback0); plausible_pointer(cb0)) out.push_back(cb0);
        list = f.ptr(al_.fut_callbacks);
      }
    } else {
      list = objs_.attribute(fut, "_callbacks");
    }
    if (!plausible_pointer(list)) return out;
    for (Addr item : objs_.sequence_items(list, 64)) {
      // 3.7+: (callback, context) tuples; a bare callable otherwise.
      auto pair = objs_.sequence_items(item, 1);
      Addr cb = type(item) == "tuple" ? (pair.empty() ? 0 : pair[0]) : item;
      if (plausible_pointer(cb)) out.push_back(cb);
    }
    return out;
  }

  // Futures a function's closure refers to (other than `self`): what a
  // callback of asyncio.futures._chain_future completes or cancels.
  void closure_futures(Addr fn, Addr self, std::vector<Addr>& out, std::vector<std::string>& types) {
    if (type(fn) != "function") return;
    auto closure = mem_.read_pointer(fn + static_cast<Addr>(al_.func_closure)).value_or(0);
    if (!plausible_pointer(closure) || type(closure) != "tuple") return;
    const ObjectLayout* ol = object_layout_for(state_.major, state_.minor);
    if (!ol) return;
    for (Addr cell : objs_.sequence_items(closure, 32)) {
      if (type(cell) != "cell") continue;
      Addr v = mem_.read_pointer(cell + static_cast<Addr>(ol->cell_ob_ref)).value_or(0);
      if (v == self || !plausible_pointer(v)) continue;
      std::string t = type(v);
      if (t.find("Future") == std::string::npos && t.find("Task") == std::string::npos) continue;
      if (std::find(out.begin(), out.end(), v) != out.end()) continue;
      out.push_back(v);
      types.push_back(t);
    }
  }

  PyFutureInfo future(Addr fut) {
    PyFutureInfo f;
    f.object = fut;
    f.type = type(fut);
    bool c = c_layout(fut, al_.fut_size);
    if (c) {
      RemoteStruct r;
      if (r.load(mem_, fut, static_cast<std::size_t>(al_.fut_state + 4))) {
        f.state = c_state(r.get<std::int32_t>(al_.fut_state).value_or(-1));
        f.loop = r.ptr(al_.fut_loop);
      }
    } else {
      f.state = py_state(fut);
      f.loop = objs_.attribute(fut, "_loop");
    }
    if (Addr children = objs_.attribute(fut, "_children"); plausible_pointer(children))
      f.children = objs_.sequence_items(children, 1024);
    for (Addr cb : callbacks(fut, c)) closure_futures(cb, fut, f.chained, f.chained_types);
    if (auto w = timers_.find(fut); w != timers_.end()) f.when = w->second;
    return f;
  }

  // The name of a task: a str, or (3.13) the int N of "Task-N", stored until asked.
  std::string task_name(Addr name) {
    if (!plausible_pointer(name)) return "";
    if (auto s = objs_.str(name)) return *s;
    if (type(name) == "int")
      if (auto n = objs_.integer(name)) return "Task-" + std::to_string(*n);
    return "";
  }

  PyTaskInfo task(Addr t) {
    PyTaskInfo out;
    out.object = t;
    out.type = type(t);
    Addr waiter = 0, exception = 0;
    if (c_layout(t, al_.task_size)) {
      out.native = true;
      RemoteStruct r;
      if (!r.load(mem_, t, static_cast<std::size_t>(al_.task_size))) {
        out.problem = "task " + hex(t) + " unreadable";
        return out;
      }
      out.state = c_state(r.get<std::int32_t>(al_.fut_state).value_or(-1));
      out.loop = r.ptr(al_.fut_loop);
      out.coro = r.ptr(al_.task_coro);
      waiter = r.ptr(al_.task_fut_waiter);
      exception = r.ptr(al_.fut_exception);
      out.exception_unretrieved = al_.log_tb_bit ? (r.get<std::uint8_t>(al_.fut_log_tb).value_or(0) & 1u) != 0
                                                 : r.get<std::uint32_t>(al_.fut_log_tb).value_or(0) != 0;
      out.name = task_name(r.ptr(al_.task_name));
    } else {
      out.state = py_state(t);
      out.loop = objs_.attribute(t, "_loop");
      out.coro = objs_.attribute(t, "_coro");
      waiter = objs_.attribute(t, "_fut_waiter");
      exception = objs_.attribute(t, "_exception");
      // Future.__log_traceback (name-mangled; `_log_traceback` is a property of it)
      Addr log_tb = objs_.attribute(t, "_Future__log_traceback");
      out.exception_unretrieved = objs_.integer(log_tb ? log_tb : objs_.attribute(t, "_log_traceback")).value_or(0) != 0;
      out.name = task_name(objs_.attribute(t, "_name"));
      if (out.state == FutureState::Unknown) out.problem = "task " + hex(t) + ": _state unreadable";
    }
    if (!is_none(exception)) {
      out.has_exception = true;
      out.exception_type = type(exception);
    }
    out.exception_unretrieved = out.exception_unretrieved && out.has_exception;
    if (waiter == t) note(out.problem, "task " + hex(t) + " awaits itself");  // Task refuses that: memory is stale
    if (!is_none(waiter)) out.awaits = future(waiter);
    for (Addr cb : callbacks(t, out.native)) closure_futures(cb, t, out.completes, out.completes_types);
    if (out.state == FutureState::Pending && plausible_pointer(out.coro)) coroutine_chain(out);
    return out;
  }

  // The coroutine chain of a task, outermost first as walked, stored innermost first.
  void coroutine_chain(PyTaskInfo& task) {
    Addr obj = task.coro;
    if (type(obj).empty()) {
      note(task.problem, "coroutine " + hex(obj) + " unreadable");
      return;
    }
    // Bounded, and a coroutine met again ends the walk: CPython refuses to
    // await a coroutine twice, so a loop is stale or garbage memory.
    detail::ChainGuard guard(opts_.max_chain, "coroutine");
    while (plausible_pointer(obj) && is_generator_type(type(obj))) {
      if (auto stop = guard.next(obj); !stop.empty()) {
        note(task.problem, stop);
        break;
      }
      Addr frame = 0;
      std::optional<std::int8_t> gen_state;
      if (al_.gen_frame == GenFrame::Pointer) {
        frame = mem_.read_pointer(obj + static_cast<Addr>(al_.gen_frame_ptr)).value_or(0);
      } else {
        frame = obj + static_cast<Addr>(al_.gen_iframe);
        gen_state = mem_.read_value<std::int8_t>(obj + static_cast<Addr>(al_.gen_frame_state));
        if (!gen_state || *gen_state >= al_.frame_gone) break;  // completed or cleared: no frame
      }
      if (!plausible_pointer(frame)) break;
      auto walk = detail::walk_frames(objects_, codes_, frame);
      if (walk.frames.empty()) {
        note(task.problem, "coroutine " + hex(obj) + ": " + (walk.problem.empty() ? "no frame" : walk.problem));
        break;
      }
      PyFrame f = walk.frames.front();
      // Future.__await__ (pure Python) yields the future itself, which is the
      // task's fut_waiter: the end of the chain, as a C future's iterator is.
      if (bare(f.function) == "__await__") break;
      task.stack.insert(task.stack.begin(), f);
      auto next = stack_top(frame, gen_state);
      if (!next) break;
      obj = *next;
    }
    if (!task.stack.empty()) {
      const Addr frame = task.stack.front().frame;
      const std::int64_t locals = l_.frame_model == FrameModel::FrameObject ? l_.frame_localsplus : l_.iframe_localsplus;
      Addr self = locals >= 0 ? l_.untag(mem_.read_pointer(frame + static_cast<Addr>(locals)).value_or(0)) : 0;
      std::string t = type(self);
      if (!t.empty()) {
        task.innermost_self = self;
        task.innermost_self_type = t;
      }
    }
  }

  // A generator's frame suspended in an await / yield from: its value
  // stack holds what it delegates to.
  bool suspended_in_await(std::optional<std::int8_t> gen_state) const {
    return gen_state && (*gen_state == al_.suspended ||
                         (al_.suspended_locked != kNoFrameState && *gen_state == al_.suspended_locked));
  }

  // What a suspended frame awaits: the top of its value stack (3.15: the
  // item below the top, yield_from_depth).
  std::optional<Addr> stack_top(Addr frame, std::optional<std::int8_t> gen_state) {
    constexpr std::int64_t kMaxItems = 1 << 16;  // locals and stack of one frame
    const std::int64_t depth = al_.yield_from_depth;
    Addr slot = 0;
    switch (al_.stack_top) {
      case StackTop::Pointer: {
        Addr top = mem_.read_pointer(frame + static_cast<Addr>(al_.frame_stacktop)).value_or(0);
        Addr base = mem_.read_pointer(frame + static_cast<Addr>(l_.frame_valuestack)).value_or(0);
        if (!plausible_pointer(top) || top <= base || top - base > 8 * 4096) return std::nullopt;  // running
        slot = top - 8;
        break;
      }
      case StackTop::FrameDepth: {
        auto st = mem_.read_value<std::int8_t>(frame + static_cast<Addr>(al_.frame_state));
        auto depth = mem_.read_value<std::int32_t>(frame + static_cast<Addr>(al_.frame_stackdepth));
        Addr base = mem_.read_pointer(frame + static_cast<Addr>(l_.frame_valuestack)).value_or(0);
        if (!st || *st != al_.suspended || !depth || *depth <= 0 || *depth > 4096 || !plausible_pointer(base))
          return std::nullopt;
        slot = base + static_cast<Addr>(*depth - 1) * 8;
        break;
      }
      case StackTop::IframeIndex: {
        auto top = mem_.read_value<std::int32_t>(frame + static_cast<Addr>(al_.iframe_stacktop));
        if (!suspended_in_await(gen_state) || !top || *top < depth || *top > kMaxItems) return std::nullopt;
        slot = frame + static_cast<Addr>(l_.iframe_localsplus) + static_cast<Addr>(*top - depth) * 8;
        break;
      }
      case StackTop::IframePointer: {
        // stackpointer: one past the top item, inside the frame's localsplus.
        const Addr base = frame + static_cast<Addr>(l_.iframe_localsplus);
        if (!l_.has(l_.iframe_stackpointer)) return std::nullopt;
        Addr sp = mem_.read_pointer(frame + static_cast<Addr>(l_.iframe_stackpointer)).value_or(0);
        if (!suspended_in_await(gen_state) || sp % 8 != 0 || sp < base + static_cast<Addr>(depth) * 8 ||
            sp - base > static_cast<Addr>(kMaxItems) * 8)
          return std::nullopt;
        slot = sp - static_cast<Addr>(depth) * 8;
        break;
      }
    }
    auto v = mem_.read_pointer(slot);
    if (!v || !plausible_pointer(l_.untag(*v))) return std::nullopt;
    return l_.untag(*v);
  }

  // obj.name from its instance dict, or from a __slots__ member of its type
  // or a base (asyncio's Handle and TimerHandle); 0 when neither has it.
  Addr attr(Addr obj, std::string_view name) {
    if (Addr v = objs_.attribute(obj, name)) return v;
    Addr tp = mem_.read_pointer(obj + static_cast<Addr>(l_.object_ob_type)).value_or(0);
    Addr mro = plausible_pointer(tp) ? mem_.read_pointer(tp + static_cast<Addr>(al_.type_mro)).value_or(0) : 0;
    if (!plausible_pointer(mro)) return 0;
    for (Addr t : objs_.sequence_items(mro, 16)) {
      Addr dict = mem_.read_pointer(t + static_cast<Addr>(al_.type_dict)).value_or(0);
      Addr descr = plausible_pointer(dict) ? objs_.dict_get(dict, name) : 0;
      if (!descr) continue;
      if (type(descr) != "member_descriptor") return 0;
      Addr member = mem_.read_pointer(descr + static_cast<Addr>(al_.member_descr_member)).value_or(0);
      auto offset = plausible_pointer(member)
                        ? mem_.read_value<std::int64_t>(member + static_cast<Addr>(al_.memberdef_offset))
                        : std::nullopt;
      if (!offset || *offset < 16 || *offset > (1 << 16)) return 0;
      Addr v = mem_.read_pointer(obj + static_cast<Addr>(*offset)).value_or(0);
      return plausible_pointer(v) ? v : 0;
    }
    return 0;
  }

  // The items of a collections.deque, at most `max`, left to right.
  std::vector<Addr> deque_items(Addr dq, std::size_t max) {
    std::vector<Addr> out;
    auto n = objs_.length(dq);
    Addr block = mem_.read_pointer(dq + static_cast<Addr>(al_.deque_leftblock)).value_or(0);
    auto index = mem_.read_value<std::int64_t>(dq + static_cast<Addr>(al_.deque_leftindex));
    if (!n || !index || *index < 0 || *index >= al_.block_len) return out;
    auto want = static_cast<std::size_t>(std::min<std::int64_t>(*n, static_cast<std::int64_t>(max)));
    std::int64_t i = *index;
    std::vector<Addr> data(static_cast<std::size_t>(al_.block_len));
    while (out.size() < want && plausible_pointer(block)) {
      if (!mem_.read(block + static_cast<Addr>(al_.block_data), data.data(), data.size() * 8)) break;
      for (; i < al_.block_len && out.size() < want; ++i) out.push_back(data[static_cast<std::size_t>(i)]);
      block = mem_.read_pointer(block + static_cast<Addr>(al_.block_rightlink)).value_or(0);
      i = 0;
    }
    return out;
  }

  // Futures the closures of the loop's ready callbacks refer to.
  void read_ready(Addr ready, PyLoopInfo& info) {
    for (Addr handle : deque_items(ready, 256)) {
      Addr cb = attr(handle, "_callback");
      if (plausible_pointer(cb)) closure_futures(cb, 0, info.ready_chained, info.ready_chained_types);
    }
  }

  // loop._scheduled: the TimerHandles of every loop, as {first argument: when}
  // (asyncio.sleep schedules futures._set_result_unless_cancelled(future, result)).
  void read_timers(Addr loop, PyLoopInfo& info) {
    Addr scheduled = objs_.attribute(loop, "_scheduled");
    if (!plausible_pointer(scheduled)) return;
    info.scheduled = objs_.length(scheduled);
    for (Addr h : objs_.sequence_items(scheduled, opts_.max_timers)) {
      auto when = objs_.real(attr(h, "_when"));
      Addr args = attr(h, "_args");
      auto items = plausible_pointer(args) ? objs_.sequence_items(args, 1) : std::vector<Addr>{};
      if (when && std::isfinite(*when) && !items.empty()) timers_.emplace(items[0], *when);
    }
  }

  MemoryReader& mem() { return mem_; }

 private:
  static Options frame_opts() {
    Options o;
    o.max_frames = 1;  // a suspended generator's frame has no caller; a running one is on a thread's stack
    return o;
  }
  MemoryReader& mem_;
  const PythonState& state_;
  const Layout& l_;
  const AsyncioLayout& al_;
  const AsyncioOptions& opts_;
  PyObjects objs_;
  detail::ObjectReader objects_;
  detail::CodeCache codes_;
  std::unordered_map<Addr, double> timers_;
};

bool is_loop_frame(const PyFrame& f) {
  if (!ends_with(f.file, "asyncio/base_events.py")) return false;
  auto fn = bare(f.function);
  return fn == "run_forever" || fn == "_run_once";
}

bool is_job_frame(const PyFrame& f) {
  return ends_with(f.file, "concurrent/futures/thread.py") && (f.function == "run" || f.function == "_WorkItem.run");
}

// The `self` of frame `index` of thread `tid` (0 when unreadable), and its type.
std::pair<Addr, std::string> self_of(MemoryReader& memory, const PythonState& state, int tid, std::size_t index) {
  LockWaitOptions lo;
  lo.max_frames = index + 1;
  auto selves = frame_selves(memory, state, tid, lo);
  if (selves.size() <= index || !plausible_pointer(selves[index].self)) return {0, ""};
  return {selves[index].self, selves[index].type};
}

// The tasks found, each once, at most max_tasks.
class TaskSet {
 public:
  TaskSet(Reader& r, std::size_t max) : r_(r), max_(max) {}
  void add(Addr t) {
    if (plausible_pointer(t) && !r_.is_none(t) && !full() && seen_.insert(t).second) tasks_.push_back(t);
  }
  bool full() const { return tasks_.size() >= max_; }
  std::vector<Addr>& tasks() { return tasks_; }

 private:
  Reader& r_;
  std::size_t max_;
  std::vector<Addr> tasks_;
  std::unordered_set<Addr> seen_;
};

// The tasks of a registry: a WeakSet of tasks (its `data` is a set of weak
// references) or a plain set; false when `reg` is neither.
bool registry_items(Reader& r, Addr reg, TaskSet& tasks, const AsyncioOptions& opts, std::string* p) {
  PyObjects& objs = r.objs();
  std::string type = r.type(reg);
  if (type == "set") {
    for (Addr t : objs.set_items(reg, opts.max_tasks, p)) tasks.add(t);
  } else if (type == "WeakSet") {
    Addr data = objs.attribute(reg, "data", p);
    for (Addr ref : objs.set_items(data, opts.max_tasks, p))
      tasks.add(r.mem().read_pointer(ref + 16).value_or(0));  // PyWeakReference.wr_object; None once dead
  } else {
    return false;
  }
  return true;
}

// Tasks of the registries of asyncio.tasks.  3.14+ keeps only tasks that
// are not _asyncio's (pure-Python ones) there.
void registry_tasks(Reader& r, AsyncioState& out, TaskSet& tasks, std::vector<std::string>& found,
                    const AsyncioOptions& opts) {
  for (const char* name : {"_all_tasks", "_scheduled_tasks", "_eager_tasks"}) {
    std::string p;
    Addr reg = r.objs().module_attribute("asyncio.tasks", name, &p);
    // 3.12+ keeps a function named all_tasks, not a registry
    if (!plausible_pointer(reg) || !registry_items(r, reg, tasks, opts, &p)) continue;
    if (!p.empty()) note(out.problem, std::string("asyncio.tasks.") + name + ": " + p);
    found.push_back(std::string("asyncio.tasks.") + name);
  }
}

// 3.14+: the tasks that are no asyncio.Task (a third party's, given to
// asyncio.tasks._register_task), which _asyncio keeps in its module state;
// read once the state is seen to hold _asyncio's Task type where the row
// says.  Nothing when _asyncio is not imported (pure-Python asyncio).
void module_state_tasks(Reader& r, const AsyncioLayout& al, AsyncioState& out, TaskSet& tasks,
                        std::vector<std::string>& found, const AsyncioOptions& opts) {
  if (al.module_state < 0) return;
  Addr mod = r.objs().module("_asyncio");
  if (!plausible_pointer(mod) || r.type(mod) != "module") return;
  Addr st = r.mem().read_pointer(mod + static_cast<Addr>(al.module_state)).value_or(0);
  Addr task_type =
      plausible_pointer(st) ? r.mem().read_pointer(st + static_cast<Addr>(al.state_task_type)).value_or(0) : 0;
  if (!plausible_pointer(task_type) || r.type_name_of_type(task_type) != "_asyncio.Task") {
    note(out.problem, "_asyncio's module state at " + hex(st) + " has no Task type where the " +
                          std::to_string(al.major) + "." + std::to_string(al.minor) +
                          " row says: tasks that are no asyncio.Task not read");
    return;
  }
  for (auto [name, at] : {std::pair{"non_asyncio_tasks", al.state_non_asyncio_tasks},
                          std::pair{"non_asyncio_eager_tasks", al.state_non_asyncio_eager_tasks}}) {
    std::string p;
    Addr reg = r.mem().read_pointer(st + static_cast<Addr>(at)).value_or(0);
    if (!plausible_pointer(reg) || !registry_items(r, reg, tasks, opts, &p)) p = "not a set";
    if (!p.empty()) note(out.problem, std::string("_asyncio's ") + name + ": " + p);
    else found.push_back(std::string("_asyncio's ") + name);
  }
}

// Takes the task of one node of a task list; why the walk must stop there
// otherwise (a node met before, one that is no task's, too many nodes).
std::string next_task_node(Reader& r, Addr node, std::unordered_set<Addr>& visited, TaskSet& tasks,
                           const AsyncioOptions& opts) {
  if (visited.size() >= opts.max_tasks || tasks.full())
    return "stopped after " + std::to_string(opts.max_tasks) + " tasks";
  if (!visited.insert(node).second) return "loops at " + hex(node);
  Addr t = plausible_pointer(node) ? r.task_of_node(node) : 0;
  if (!t) return "broken: node " + hex(node) + " is no _asyncio.Task's task_node";
  tasks.add(t);
  return {};
}

// One list of _asyncio's tasks (3.14+): circular, through each TaskObj's
// task_node, from the llist_node at `head` (in a thread state or the
// interpreter).  Every node is checked to be a task's before it is taken;
// a node met twice, an unreadable link, a node that is no task's or more
// than max_tasks nodes end the walk with a problem naming `what`.
void walk_task_list(Reader& r, const AsyncioLayout& al, Addr head, const std::string& what, TaskSet& tasks,
                    AsyncioState& out, const AsyncioOptions& opts) {
  MemoryReader& mem = r.mem();
  auto link = [&](Addr node) { return mem.read_pointer(node + static_cast<Addr>(al.llist_next)); };
  auto first = link(head);
  if (!first) {
    note(out.problem, what + " at " + hex(head) + " unreadable");
    return;
  }
  if (*first == 0) return;  // a thread state not initialised yet
  std::unordered_set<Addr> visited;
  for (Addr node = *first; node != head;) {
    std::string stop = next_task_node(r, node, visited, tasks, opts);
    auto next = stop.empty() ? link(node) : std::nullopt;
    if (stop.empty() && !next) stop = "node " + hex(node) + " unreadable";
    if (!stop.empty()) {
      note(out.problem, what + " " + stop);
      return;
    }
    node = *next;
  }
}

// The lists of _asyncio's tasks (3.14+): one per thread state, and the
// interpreter's, which keeps the tasks of threads that exited.
void list_tasks(Reader& r, const PythonState& state, const Effective& e, AsyncioState& out, TaskSet& tasks,
                std::vector<std::string>& found, const AsyncioOptions& opts) {
  const TaskLists& lists = e.lists;
  if (e.al.task_node < 0 || lists.tstate_tasks_head < 0) return;
  std::vector<Addr> interps;
  for (const auto& t : state.threads) {
    if (!t.tstate) continue;
    std::string who = t.native_tid ? "LWP " + std::to_string(*t.native_tid) : "thread state " + hex(t.tstate);
    walk_task_list(r, e.al, t.tstate + static_cast<Addr>(lists.tstate_tasks_head), "the task list of " + who, tasks,
                   out, opts);
    if (t.interp && std::find(interps.begin(), interps.end(), t.interp) == interps.end()) interps.push_back(t.interp);
  }
  found.push_back("_PyThreadStateImpl.asyncio_tasks_head");
  if (lists.interp_tasks_head < 0) return;
  for (Addr interp : interps)
    walk_task_list(r, e.al, interp + static_cast<Addr>(lists.interp_tasks_head),
                   "the task list of interpreter " + hex(interp) + " (tasks of exited threads)", tasks, out, opts);
  found.push_back("PyInterpreterState.asyncio_tasks_head");
}

// Every task: the registries of asyncio.tasks, and 3.14+ the task lists and
// _asyncio's own registries of tasks that are no asyncio.Task.
std::vector<Addr> collect_tasks(Reader& r, const PythonState& state, const Effective& e, AsyncioState& out,
                                const AsyncioOptions& opts) {
  TaskSet tasks(r, opts.max_tasks);
  std::vector<std::string> found;
  registry_tasks(r, out, tasks, found, opts);
  // Every version has one (3.14+ for pure-Python tasks): none is garbage.
  if (found.empty()) note(out.problem, "asyncio.tasks has no task registry (_all_tasks, _scheduled_tasks)");
  list_tasks(r, state, e, out, tasks, found, opts);
  module_state_tasks(r, e.al, out, tasks, found, opts);
  for (std::size_t i = 0; i < found.size(); ++i) out.registry += (i ? ", " : "") + found[i];
  return std::move(tasks.tasks());
}

// 3.14+: the loop each thread runs and the task it steps now, from its
// thread state (_asyncio's running loop and current task).
struct Running {
  std::optional<int> tid;
  Addr loop = 0;
  Addr task = 0;
};

std::vector<Running> running_loops(Reader& r, const PythonState& state, const TaskLists& lists) {
  std::vector<Running> out;
  if (lists.tstate_running_loop < 0 || lists.tstate_running_task < 0) return out;
  for (const auto& t : state.threads) {
    if (!t.tstate) continue;
    Addr loop = r.mem().read_pointer(t.tstate + static_cast<Addr>(lists.tstate_running_loop)).value_or(0);
    Addr task = r.mem().read_pointer(t.tstate + static_cast<Addr>(lists.tstate_running_task)).value_or(0);
    if (plausible_pointer(loop) && !r.is_none(loop))
      out.push_back({t.native_tid, loop, plausible_pointer(task) && !r.is_none(task) ? task : 0});
  }
  return out;
}

// Loops and executor jobs: found on the stacks of the threads running them
// (3.14+ also a thread state's running loop, where no frame shows it).
void find_loops(MemoryReader& memory, const PythonState& state, Reader& r, const std::vector<Running>& running,
                AsyncioState& out, const AsyncioOptions& opts) {
  for (const auto& t : state.threads) {
    if (!t.native_tid) continue;
    auto end = t.frames.begin() + static_cast<std::ptrdiff_t>(std::min(t.frames.size(), opts.max_loop_frames));
    if (auto it = std::find_if(t.frames.begin(), end, is_loop_frame); it != end) {
      auto [self, type] = self_of(memory, state, *t.native_tid, static_cast<std::size_t>(it - t.frames.begin()));
      if (!self) {
        note(out.problem, "LWP " + std::to_string(*t.native_tid) + ": the loop of " + it->function + " unreadable");
      } else {
        PyLoopInfo loop;
        loop.loop = self;
        loop.type = type;
        loop.tid = *t.native_tid;
        loop.frame_function = it->function;
        out.loops.push_back(std::move(loop));
      }
    }
    if (auto it = std::find_if(t.frames.begin(), end, is_job_frame); it != end) {
      auto [self, type] = self_of(memory, state, *t.native_tid, static_cast<std::size_t>(it - t.frames.begin()));
      Addr future = self && type == "_WorkItem" ? r.objs().attribute(self, "future") : 0;
      if (plausible_pointer(future)) out.jobs.push_back({*t.native_tid, self, future});
    }
  }
  for (const auto& run : running) {
    auto same = [&](const PyLoopInfo& l) { return l.loop == run.loop; };
    if (std::any_of(out.loops.begin(), out.loops.end(), same)) continue;
    PyLoopInfo loop;
    loop.loop = run.loop;
    loop.type = r.type(run.loop);
    loop.tid = run.tid;
    out.loops.push_back(std::move(loop));
  }
}

}  // namespace

Addr asyncio_debug_offsets(const AddressSpace& space) {
  for (const auto& o : space.objects()) {
    if (!o.elf) continue;
    if (const ElfSection* s = o.elf->section(".AsyncioDebug"); s && s->addr) return s->addr + o.bias;
  }
  return 0;
}

AsyncioState asyncio_state(Target& target, const PythonState& state, const AsyncioOptions& opts) {
  AsyncioOptions with = opts;
  if (!with.asyncio_debug) with.asyncio_debug = asyncio_debug_offsets(target.space());
  return asyncio_state(target.memory(), state, with);
}

AsyncioState asyncio_state(MemoryReader& memory, const PythonState& state, const AsyncioOptions& opts) {
  AsyncioState out;
  if (state.status != Status::Ok && state.status != Status::Finalizing) {
    out.problem = "no Python state (" + std::string(to_string(state.status)) + ")";
    return out;
  }
  auto layout = detail::layout_of(memory, state);
  const AsyncioLayout* row = asyncio_layout_for(state.major, state.minor);
  if (!layout || !row) {
    out.problem = "no asyncio layout for CPython " + (state.version.empty() ? std::string("?") : state.version);
    return out;
  }
  const Effective e = effective(memory, state, *layout, *row, opts.asyncio_debug, out.warnings);
  const AsyncioLayout* al = &e.al;
  Reader r(memory, state, *layout, e.al, opts);
  if (!r.objs().ok()) {
    out.problem = r.objs().problem();
    return out;
  }
  std::string why;
  if (!r.objs().module("asyncio.tasks", &why)) {
    out.problem = why;  // a program that never imported asyncio
    return out;
  }
  out.imported = true;

  const std::vector<Running> running = running_loops(r, state, e.lists);
  find_loops(memory, state, r, running, out, opts);
  std::vector<Addr> tasks = collect_tasks(r, state, e, out, opts);

  // Loops the tasks belong to that no thread is running.
  auto known = [&](Addr loop) {
    return std::any_of(out.loops.begin(), out.loops.end(), [&](const PyLoopInfo& l) { return l.loop == loop; });
  };
  for (Addr t : tasks) {
    Addr loop = r.c_layout(t, al->task_size) ? memory.read_pointer(t + static_cast<Addr>(al->fut_loop)).value_or(0)
                                             : r.objs().attribute(t, "_loop");
    if (plausible_pointer(loop) && !r.is_none(loop) && !known(loop)) {
      PyLoopInfo info;
      info.loop = loop;
      info.type = r.type(loop);
      out.loops.push_back(std::move(info));
    }
  }

  // Per loop: the task being stepped (asyncio.tasks._current_tasks; 3.14+
  // _asyncio keeps it in the thread state instead), the ready queue, the timers.
  std::string p;
  Addr current = r.objs().module_attribute("asyncio.tasks", "_current_tasks", &p);
  auto current_items = plausible_pointer(current) ? r.objs().dict_items(current, 1024, &p)
                                                  : std::vector<std::pair<Addr, Addr>>{};
  for (auto& loop : out.loops) {
    for (auto [l, t] : current_items)
      if (l == loop.loop) loop.current_task = t;
    for (const auto& run : running)
      if (run.loop == loop.loop && run.task) loop.current_task = run.task;
    if (Addr ready = r.objs().attribute(loop.loop, "_ready"); plausible_pointer(ready)) {
      loop.ready = r.objs().length(ready);
      r.read_ready(ready, loop);
    }
    if (Addr stopping = r.objs().attribute(loop.loop, "_stopping"); plausible_pointer(stopping))
      if (auto v = r.objs().integer(stopping)) loop.stopping = *v != 0;
    r.read_timers(loop.loop, loop);
  }

  for (Addr t : tasks) out.tasks.push_back(r.task(t));
  return out;
}

}  // namespace pyhang::cpython
