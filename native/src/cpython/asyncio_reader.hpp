// The reader of asyncio's objects in target memory (tasks, futures, loops,
// coroutine stacks) that cpython/asyncio.cpp walks the task lists with.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cpython/asyncio_debug.hpp"
#include "cpython/internal.hpp"
#include "cpython/layouts/asyncio.hpp"
#include "cpython/layouts/objects.hpp"
#include "pyhang/base/format.hpp"
#include "pyhang/cpython/asyncio.hpp"
#include "pyhang/cpython/locks.hpp"
#include "pyhang/cpython/pyobjects.hpp"

namespace pyhang::cpython::detail::asyncio_read {

inline bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// The function of a frame, without its class (co_qualname from 3.11).
inline std::string_view bare(std::string_view function) {
  auto dot = function.rfind('.');
  return dot == std::string_view::npos ? function : function.substr(dot + 1);
}

inline bool is_generator_type(std::string_view type) {
  return type == "coroutine" || type == "generator" || type == "async_generator";
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
        out.problem = unread(ReadPart::Task, t);
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
      if (out.state == FutureState::Unknown) out.problem = unread_field(ReadPart::Task, t, "_state");
    }
    if (!is_none(exception)) {
      out.has_exception = true;
      out.exception_type = type(exception);
    }
    out.exception_unretrieved = out.exception_unretrieved && out.has_exception;
    if (waiter == t) note(out.problem, unread(ReadPart::Task, t, ReadWhy::AwaitsItself));  // Task refuses that: memory is stale
    if (!is_none(waiter)) out.awaits = future(waiter);
    for (Addr cb : callbacks(t, out.native)) closure_futures(cb, t, out.completes, out.completes_types);
    if (out.state == FutureState::Pending && plausible_pointer(out.coro)) coroutine_chain(out);
    return out;
  }

  // The coroutine chain of a task, outermost first as walked, stored innermost first.
  void coroutine_chain(PyTaskInfo& task) {
    Addr obj = task.coro;
    if (type(obj).empty()) {
      note(task.problem, unread(ReadPart::Coroutine, obj));
      return;
    }
    // Bounded, and a coroutine met again ends the walk: CPython refuses to
    // await a coroutine twice, so a loop is stale or garbage memory.
    detail::ChainGuard guard(opts_.max_chain, ReadPart::Coroutine);
    while (plausible_pointer(obj) && is_generator_type(type(obj))) {
      if (auto stop = guard.next(obj)) {
        note(task.problem, std::move(stop));
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
        note(task.problem, walk.problem.empty() ? unread(ReadPart::Coroutine, obj, ReadWhy::NoFrame)
                                                : walk.problem.within(ReadPart::Coroutine, obj));
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

}  // namespace pyhang::cpython::detail::asyncio_read
