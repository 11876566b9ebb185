// A synthetic image holding C _asyncio.Task objects, futures, coroutines
// and the registries and task lists asyncio keeps, laid out with the asyncio
// table of a version (test_asyncio.cpp, test_asyncio_lists.cpp).
#pragma once

#include <catch2/catch.hpp>

#include "cpython/layouts/asyncio.hpp"
#include "pyhang/base/format.hpp"
#include "pyhang/cpython/asyncio.hpp"
#include "support/cpython_objects.hpp"

namespace pyhang::cpython::testing {

inline constexpr int kMinors[] = {8, 9, 10, 11, 12, 13, 14, 15};
inline constexpr int kListMinors[] = {14, 15};  // _asyncio's per-thread task lists

// FutureObj.fut_state (Modules/_asynciomodule.c)
enum CState : std::int32_t { kPending = 0, kCancelled = 1, kFinished = 2 };

// PyStackRef_NULL of 3.15 (Py_TAG_REFCNT alone), which an await pushes
// above what it delegates to.
inline constexpr Addr kStackRefNull = 1;

struct Asyncio : Objects {
  // The table the objects are laid out with: the version's row, or a copy a
  // test moves fields in (what the target's own debug offsets then say).
  AsyncioLayout al;
  Addr task_type, coro_type, weakref_type, weakset_type, loop_type, error_type, future_type, future_iter_type;
  Addr loop;

  explicit Asyncio(int minor)
      : Objects(minor), al(*asyncio_layout_for(3, minor)) {
    task_type = img.type("_asyncio.Task", 0);
    img.put<std::int64_t>(task_type, l.type_basicsize, al.task_size);
    coro_type = img.type("coroutine", 0);
    weakref_type = img.type("weakref.ReferenceType", 0);
    weakset_type = type_with_dict("WeakSet");
    loop_type = type_with_dict("_UnixSelectorEventLoop");
    error_type = img.type("ValueError", 0);
    future_type = img.type("_asyncio.Future", 0);
    img.put<std::int64_t>(future_type, l.type_basicsize, al.fut_size);
    future_iter_type = img.type("_asyncio.FutureIter", 0);
    loop = instance(loop_type, {});
  }

  // A C future of this loop, and the iterator `await future` leaves on the
  // awaiting frame's value stack (futureiterobject).
  Addr future(CState state) {
    Addr f = img.alloc(static_cast<std::size_t>(al.fut_size));
    img.put<Addr>(f, l.object_ob_type, future_type);
    img.put<Addr>(f, al.fut_loop, loop);
    img.put<std::int32_t>(f, al.fut_state, state);
    return f;
  }
  Addr future_iter(Addr fut) {
    Addr it = object(future_iter_type);
    img.put<Addr>(it, al.futureiter_future, fut);
    return it;
  }

  // Byte offset of a suspended coroutine's instruction in its code: line
  // first + 2 in whole_code_at's table.
  static constexpr std::int64_t kSuspendedAt = 4;

  // A coroutine suspended in an await inside `function` (code from line
  // `first`): its first local is `self`, the top of its value stack is
  // `awaits` (a coroutine, a FutureIter; 3.15: under a NULL), as CPython
  // leaves a frame suspended in SEND / YIELD_FROM.  Its frame is gi_frame
  // (<= 3.10) or embedded (gi_iframe, 3.11+) and has no caller.
  Addr suspended(const std::string& function, int first, Addr self, Addr awaits) {
    Addr code = img.code(function, "/app/jobs.py", first, whole_code_at(l, 2));
    if (al.gen_frame == GenFrame::Pointer) {
      Addr f = img.frame_object(code, static_cast<int>(kSuspendedAt / l.lasti_unit), 0);
      img.put<Addr>(f, l.frame_localsplus, self);
      Addr stack = img.alloc(32);
      img.put<Addr>(f, l.frame_valuestack, stack);
      img.put<Addr>(stack, 0, awaits);
      if (al.stack_top == StackTop::Pointer) {
        img.put<Addr>(f, al.frame_stacktop, stack + 8);
      } else {
        img.put<std::int8_t>(f, al.frame_state, al.suspended);
        img.put<std::int32_t>(f, al.frame_stackdepth, 1);
      }
      Addr c = img.alloc(static_cast<std::size_t>(al.gen_frame_ptr) + 8);
      img.put<Addr>(c, l.object_ob_type, coro_type);
      img.put<Addr>(c, al.gen_frame_ptr, f);
      return c;
    }
    Addr c = img.alloc(static_cast<std::size_t>(al.gen_iframe + l.iframe_localsplus) + 24);
    img.put<Addr>(c, l.object_ob_type, coro_type);
    img.put<std::int8_t>(c, al.gen_frame_state, al.suspended);
    Addr f = frame_of(c);
    img.write_interpreter_frame(f, code, kSuspendedAt, 0, static_cast<int>(l.owner_generator));
    img.put<Addr>(f, l.iframe_localsplus, self);
    img.put<Addr>(f, l.iframe_localsplus + 8, awaits);
    // One local, what it awaits, and (3.15) the NULL pushed above that.
    const std::int64_t items = 1 + al.yield_from_depth;
    if (al.yield_from_depth == 2) img.put<Addr>(f, l.iframe_localsplus + 16, kStackRefNull);
    if (al.stack_top == StackTop::IframePointer)
      img.put<Addr>(f, l.iframe_stackpointer, f + l.iframe_localsplus + 8 * items);
    else
      img.put<std::int32_t>(f, al.iframe_stacktop, static_cast<std::int32_t>(items));
    return c;
  }
  Addr frame_of(Addr coro) const {
    return al.gen_frame == GenFrame::Pointer ? img.get<Addr>(coro, al.gen_frame_ptr) : coro + al.gen_iframe;
  }
  // What a suspended() coroutine awaits, changed after the fact (cycles).
  void set_awaits(Addr coro, Addr awaits) {
    Addr f = frame_of(coro);
    if (al.gen_frame == GenFrame::Pointer) img.put<Addr>(img.get<Addr>(f, l.frame_valuestack), 0, awaits);
    else img.put<Addr>(f, l.iframe_localsplus + 8, awaits);
  }
  // A value-stack depth no suspended frame has (a million items).
  void set_implausible_depth(Addr coro) {
    Addr f = frame_of(coro);
    switch (al.stack_top) {
      case StackTop::Pointer: img.put<Addr>(f, al.frame_stacktop, img.get<Addr>(f, l.frame_valuestack) + 8 * (1 << 20)); break;
      case StackTop::FrameDepth: img.put<std::int32_t>(f, al.frame_stackdepth, 1 << 20); break;
      case StackTop::IframeIndex: img.put<std::int32_t>(f, al.iframe_stacktop, 1 << 20); break;
      case StackTop::IframePointer:
        img.put<Addr>(f, l.iframe_stackpointer, f + l.iframe_localsplus + 8 * (1 << 20));
        break;
    }
  }

  // A coroutine whose frame is gone (gi_frame NULL; 3.11+: gi_frame_state
  // FRAME_COMPLETED, 3.15 FRAME_CLEARED): its chain has no frame to walk.
  Addr coroutine() {
    Addr c = img.alloc(static_cast<std::size_t>(std::max(al.gen_frame_ptr, al.gen_frame_state)) + 16);
    img.put<Addr>(c, l.object_ob_type, coro_type);
    if (al.gen_frame == GenFrame::Embedded) img.put<std::int8_t>(c, al.gen_frame_state, al.frame_gone);
    return c;
  }

  // A C task: FutureObj_HEAD and TaskObj fields where the table puts them.
  Addr task(Addr name, CState state, Addr coro, Addr waiter, Addr exception = 0, bool log_tb = false) {
    Addr t = img.alloc(static_cast<std::size_t>(al.task_size));
    img.put<Addr>(t, l.object_ob_type, task_type);
    img.put<Addr>(t, al.fut_loop, loop);
    img.put<std::int32_t>(t, al.fut_state, state);
    img.put<Addr>(t, al.fut_exception, exception);
    if (al.log_tb_bit) img.put<std::uint8_t>(t, al.fut_log_tb, log_tb ? 1u : 0u);  // 3.13+: bit 0 of the byte
    else img.put<std::uint32_t>(t, al.fut_log_tb, log_tb ? 1u : 0u);
    if (al.task_is_task >= 0) img.put<std::uint8_t>(t, al.task_is_task, 1);
    img.put<Addr>(t, al.task_coro, coro);
    img.put<Addr>(t, al.task_fut_waiter, waiter);
    img.put<Addr>(t, al.task_name, name);
    return t;
  }
  Addr node_of(Addr task) const { return task + al.task_node; }

  // 3.14+: a circular task list headed at `head` through the tasks'
  // task_node (llist_insert_tail order); `head` alone when empty.
  void link(Addr head, const std::vector<Addr>& tasks) {
    Addr prev = head;
    for (Addr t : tasks) {
      img.put<Addr>(prev, 0, node_of(t));     // next
      img.put<Addr>(node_of(t), 8, prev);     // prev
      prev = node_of(t);
    }
    img.put<Addr>(prev, 0, head);
    img.put<Addr>(head, 8, prev);
  }

  // A set of weak references to `items` (a WeakSet's data).
  Addr refs(const std::vector<Addr>& items) {
    std::vector<Addr> out;
    for (Addr i : items) {
      Addr r = object(weakref_type);
      img.put<Addr>(r, al.weakref_object, i);
      out.push_back(r);
    }
    return set(out);
  }
  Addr weakset(const std::vector<Addr>& items) { return instance(weakset_type, {{"data", refs(items)}}); }

  std::string registry() const {
    if (l.minor <= 11) return "asyncio.tasks._all_tasks";
    if (l.minor <= 13) return "asyncio.tasks._scheduled_tasks, asyncio.tasks._eager_tasks";
    return "asyncio.tasks._scheduled_tasks, asyncio.tasks._eager_tasks, _PyThreadStateImpl.asyncio_tasks_head, "
           "PyInterpreterState.asyncio_tasks_head";
  }

  // 3.14+: the thread states of a state_with() state (LWP 100, 101, ...)
  // and their interpreter, each with an empty task list until link()ed.
  std::vector<Addr> tstates;
  Addr interp = 0;
  static constexpr int kFirstTid = 100;
  Addr thread_head(std::size_t i) const { return tstates.at(i) + l.tstateimpl_asyncio_tasks_head; }
  Addr interp_head() const { return interp + l.interp_asyncio_tasks_head; }
  // Thread `i` runs `loop` and steps `task` now (_asyncio's thread state).
  void running(std::size_t i, Addr on_loop, Addr task) {
    img.put<Addr>(tstates.at(i), l.tstateimpl_asyncio_running_loop, on_loop);
    img.put<Addr>(tstates.at(i), l.tstateimpl_asyncio_running_task, task);
  }

  // A state whose sys.modules holds asyncio.tasks with the registry of this
  // version (3.8 - 3.11: _all_tasks; 3.12+: _scheduled_tasks and
  // _eager_tasks, an empty set unless given); 3.14+ also `threads` thread
  // states and their interpreter, whose task lists are empty.
  // More modules of sys.modules (e.g. "_asyncio"), for state_with().
  std::vector<std::pair<std::string, Addr>> extra_modules;

  PythonState state_with(Addr weakset_registry, Addr eager = 0, std::size_t threads = 1) {
    PythonState st = Objects::state(modules(weakset_registry, eager));
    if (!l.has(l.tstateimpl_asyncio_tasks_head)) return st;
    std::int64_t iend = std::max({l.interp_modules, l.interp_asyncio_tasks_head}) + 16;
    interp = img.alloc(static_cast<std::size_t>(iend));
    img.put<Addr>(interp, l.interp_modules, img.get<Addr>(st.threads[0].interp, l.interp_modules));
    link(interp_head(), {});
    st.threads.clear();
    for (std::size_t i = 0; i < threads; ++i) {
      Addr t = img.alloc(static_cast<std::size_t>(std::max(l.tstate_size, l.tstateimpl_asyncio_tasks_head + 16)));
      tstates.push_back(t);
      link(thread_head(i), {});
      PyThreadInfo info;
      info.tstate = t;
      info.interp = interp;
      info.native_tid = kFirstTid + static_cast<int>(i);
      st.threads.push_back(info);
    }
    return st;
  }
  // A state holding `tasks` where this version keeps C tasks: a registry
  // (WeakSet) up to 3.13, the first thread's task list from 3.14.
  PythonState with_tasks(const std::vector<Addr>& tasks) {
    if (!l.has(l.tstateimpl_asyncio_tasks_head)) return state_with(weakset(tasks));
    PythonState st = state_with(weakset({}));
    link(thread_head(0), tasks);
    return st;
  }

 private:
  Addr modules(Addr weakset_registry, Addr eager) {
    std::vector<std::pair<std::string, Addr>> globals;
    if (l.minor <= 11) {
      globals = {{"_all_tasks", weakset_registry}};
    } else {
      globals = {{"_scheduled_tasks", weakset_registry}, {"_eager_tasks", eager ? eager : set({})}};
    }
    std::vector<std::pair<std::string, Addr>> mods{{"asyncio.tasks", module(dict(globals))}};
    mods.insert(mods.end(), extra_modules.begin(), extra_modules.end());
    return dict(mods);
  }
};

inline const PyTaskInfo* by_object(const AsyncioState& s, Addr t) {
  for (const auto& task : s.tasks)
    if (task.object == t) return &task;
  return nullptr;
}

}  // namespace pyhang::cpython::testing
