// The asyncio decoder on synthetic images: C _asyncio.Task objects laid out
// with the asyncio table (native/src/cpython/layouts/asyncio.hpp) where each
// version keeps them — the task registries of asyncio.tasks, found through
// sys.modules (3.8 - 3.15), and 3.14+ the task lists of the thread states
// and of the interpreter — for 3.8 - 3.15; suspended coroutines whose frames
// hold what they await (the coroutine-chain walk); the loop and task a
// thread runs (3.14+ thread state); _asyncio's own debug offsets
// (_AsyncioDebug) and _Py_DebugOffsets' generator fields winning over the
// table; garbage registries, task lists that loop or break, unreadable
// coroutines, chains that loop and fut_waiter cycles give a problem and
// bounded output, never a crash or a hang.
#include <catch2/catch.hpp>

#include "cpython/layouts/asyncio.hpp"
#include "pyhang/base/format.hpp"
#include "pyhang/cpython/asyncio.hpp"
#include "support/cpython_objects.hpp"

using namespace pyhang;
using namespace pyhang::cpython;
using pyhang::cpython::testing::Image;
using pyhang::cpython::testing::Objects;
using pyhang::cpython::testing::whole_code_at;

namespace {

constexpr int kMinors[] = {8, 9, 10, 11, 12, 13, 14, 15};
constexpr int kListMinors[] = {14, 15};  // _asyncio's per-thread task lists

// FutureObj.fut_state (Modules/_asynciomodule.c)
enum CState : std::int32_t { kPending = 0, kCancelled = 1, kFinished = 2 };

// PyStackRef_NULL of 3.15 (Py_TAG_REFCNT alone), which an await pushes
// above what it delegates to.
constexpr Addr kStackRefNull = 1;

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

const PyTaskInfo* by_object(const AsyncioState& s, Addr t) {
  for (const auto& task : s.tasks)
    if (task.object == t) return &task;
  return nullptr;
}

}  // namespace

TEST_CASE("a C _asyncio.Task is read with its name, state, coroutine and the task its fut_waiter awaits, 3.8 - 3.15",
          "[asyncio]") {
  for (int minor : kMinors) {
    INFO("3." << minor);
    Asyncio a(minor);
    Addr coro_b = a.coroutine(), coro_a = a.coroutine();
    Addr b = a.task(a.img.str("consumer"), kPending, coro_b, 0);
    Addr w = a.task(a.img.str("waiter"), kPending, coro_a, b);
    auto st = a.with_tasks({w, b});
    auto mem = a.img.reader();
    auto out = asyncio_state(mem, st);
    CHECK(out.imported);
    CHECK(out.problem.empty());
    CHECK(out.registry == a.registry());
    REQUIRE(out.tasks.size() == 2);
    const PyTaskInfo* tw = by_object(out, w);
    REQUIRE(tw);
    CHECK(tw->native);
    CHECK(tw->type == "_asyncio.Task");
    CHECK(tw->name == "waiter");
    CHECK(tw->state == FutureState::Pending);
    CHECK(tw->coro == coro_a);
    CHECK(tw->loop == a.loop);
    CHECK(tw->problem.empty());
    REQUIRE(tw->awaits);
    CHECK(tw->awaits->object == b);
    CHECK(tw->awaits->type == "_asyncio.Task");
    CHECK(tw->awaits->state == FutureState::Pending);
    CHECK(tw->awaits->loop == a.loop);
    const PyTaskInfo* tb = by_object(out, b);
    REQUIRE(tb);
    CHECK(tb->name == "consumer");
    CHECK(tb->coro == coro_b);
    CHECK_FALSE(tb->awaits);
    CHECK_FALSE(tb->has_exception);
    // The loop the tasks belong to, though no thread is seen running it.
    REQUIRE(out.loops.size() == 1);
    CHECK(out.loops[0].loop == a.loop);
    CHECK(out.loops[0].type == "_UnixSelectorEventLoop");
    CHECK_FALSE(out.loops[0].tid);
  }
}

TEST_CASE("3.13+ keeps an unnamed task's number as an int: its name reads Task-N", "[asyncio]") {
  for (int minor : {13, 14, 15}) {
    INFO("3." << minor);
    Asyncio a(minor);
    Addr t = a.task(a.integer(7), kPending, a.coroutine(), 0);
    auto st = a.with_tasks({t});
    auto mem = a.img.reader();
    auto out = asyncio_state(mem, st);
    REQUIRE(out.tasks.size() == 1);
    CHECK(out.tasks[0].name == "Task-7");
  }
}

TEST_CASE("a finished task whose exception was never retrieved is flagged with the exception's type; a retrieved one "
          "is not, 3.8 - 3.15",
          "[asyncio]") {
  for (int minor : kMinors) {
    INFO("3." << minor);
    Asyncio a(minor);
    Addr lost = a.task(a.img.str("lost"), kFinished, a.coroutine(), 0, a.object(a.error_type), true);
    Addr seen = a.task(a.img.str("seen"), kFinished, a.coroutine(), 0, a.object(a.error_type), false);
    Addr cancelled = a.task(a.img.str("stopped"), kCancelled, a.coroutine(), 0, a.none, true);
    auto st = a.with_tasks({lost, seen, cancelled});
    auto mem = a.img.reader();
    auto out = asyncio_state(mem, st);
    CHECK(out.problem.empty());
    REQUIRE(out.tasks.size() == 3);
    const PyTaskInfo* tl = by_object(out, lost);
    REQUIRE(tl);
    CHECK(tl->state == FutureState::Finished);
    CHECK(tl->has_exception);
    CHECK(tl->exception_type == "ValueError");
    CHECK(tl->exception_unretrieved);
    CHECK(tl->stack.empty());  // a done task has no coroutine chain
    const PyTaskInfo* ts = by_object(out, seen);
    REQUIRE(ts);
    CHECK(ts->has_exception);
    CHECK_FALSE(ts->exception_unretrieved);
    // log_tb without an exception (None) is no unretrieved exception.
    const PyTaskInfo* tc = by_object(out, cancelled);
    REQUIRE(tc);
    CHECK(tc->state == FutureState::Cancelled);
    CHECK_FALSE(tc->has_exception);
    CHECK_FALSE(tc->exception_unretrieved);
  }
}

TEST_CASE("a task registry whose set table is implausible gives a problem and no tasks, never a crash", "[asyncio]") {
  for (int minor : kMinors) {
    for (int garbage = 0; garbage < 3; ++garbage) {
      INFO("3." << minor << ", garbage " << garbage);
      Asyncio a(minor);
      Addr data = a.refs({a.task(a.img.str("hidden"), kPending, a.coroutine(), 0)});
      if (garbage == 0) a.img.put<std::int64_t>(data, a.l.set_mask, 6);  // not a power of two less one
      if (garbage == 1) a.img.put<std::int64_t>(data, a.l.set_mask, (std::int64_t{1} << 40) - 1);  // 2^40 slots
      if (garbage == 2) a.img.put<Addr>(data, a.l.set_table, Image::kUnmapped);
      auto st = a.state_with(a.instance(a.weakset_type, {{"data", data}}));
      auto mem = a.img.reader();
      auto out = asyncio_state(mem, st);
      CHECK(out.imported);
      CHECK(out.tasks.empty());
      CHECK(out.problem.rfind("asyncio.tasks._", 0) == 0);
      CHECK(out.problem.find(garbage == 2 ? "unreadable" : "table implausible") != std::string::npos);
    }
  }
}

TEST_CASE("a registry that is not a set, and a missing asyncio.tasks, each give a problem", "[asyncio]") {
  for (int minor : kMinors) {
    INFO("3." << minor);
    Asyncio a(minor);
    auto not_a_set = a.state_with(a.integer(3), a.integer(4));
    auto no_asyncio = a.state(a.dict({{"sys", a.module(a.dict({}))}}));
    auto mem = a.img.reader();
    auto out = asyncio_state(mem, not_a_set);
    CHECK(out.imported);
    CHECK(out.tasks.empty());
    CHECK(out.problem == "asyncio.tasks has no task registry (_all_tasks, _scheduled_tasks)");
    out = asyncio_state(mem, no_asyncio);
    CHECK_FALSE(out.imported);
    CHECK(out.tasks.empty());
    CHECK(out.problem == "module asyncio.tasks is not imported");
  }
}

TEST_CASE("a pending task whose coroutine pointer is unmapped gives a problem and an empty chain", "[asyncio]") {
  for (int minor : kMinors) {
    INFO("3." << minor);
    Asyncio a(minor);
    Addr t = a.task(a.img.str("lost-coro"), kPending, Image::kUnmapped, 0);
    auto st = a.with_tasks({t});
    auto mem = a.img.reader();
    auto out = asyncio_state(mem, st);
    REQUIRE(out.tasks.size() == 1);
    CHECK(out.tasks[0].name == "lost-coro");
    CHECK(out.tasks[0].coro == Image::kUnmapped);
    CHECK(out.tasks[0].stack.empty());
    CHECK(out.tasks[0].problem == "coroutine " + hex(Image::kUnmapped) + " unreadable");
  }
}

TEST_CASE("a cycle of fut_waiter links is read one link per task, bounded; a task awaiting itself is a problem",
          "[asyncio]") {
  for (int minor : kMinors) {
    INFO("3." << minor);
    Asyncio a(minor);
    // Tasks first, then their fut_waiter links: A -> B -> C -> A, and S -> S.
    Addr ta = a.task(a.img.str("A"), kPending, a.coroutine(), 0);
    Addr tb = a.task(a.img.str("B"), kPending, a.coroutine(), 0);
    Addr tc = a.task(a.img.str("C"), kPending, a.coroutine(), 0);
    Addr ts = a.task(a.img.str("S"), kPending, a.coroutine(), 0);
    a.img.put<Addr>(ta, a.al.task_fut_waiter, tb);
    a.img.put<Addr>(tb, a.al.task_fut_waiter, tc);
    a.img.put<Addr>(tc, a.al.task_fut_waiter, ta);
    a.img.put<Addr>(ts, a.al.task_fut_waiter, ts);
    auto st = a.with_tasks({ta, tb, tc, ts});
    auto mem = a.img.reader();
    auto out = asyncio_state(mem, st);
    REQUIRE(out.tasks.size() == 4);
    for (auto [from, to] : {std::pair{ta, tb}, {tb, tc}, {tc, ta}}) {
      const PyTaskInfo* t = by_object(out, from);
      REQUIRE(t);
      REQUIRE(t->awaits);
      CHECK(t->awaits->object == to);
      CHECK(t->problem.empty());  // a cycle of live tasks is an await deadlock, not unreadable memory
    }
    const PyTaskInfo* self = by_object(out, ts);
    REQUIRE(self);
    REQUIRE(self->awaits);
    CHECK(self->awaits->object == ts);
    CHECK(self->problem == "task " + hex(ts) + " awaits itself");
  }
}

TEST_CASE("a task's coroutine chain is read from suspended frames: a task awaiting a coroutine awaiting a future "
          "gives both frames innermost first with their lines, the innermost frame's self and the future, 3.8 - 3.15",
          "[asyncio][chain]") {
  for (int minor : kMinors) {
    INFO("3." << minor);
    Asyncio a(minor);
    Addr fut = a.future(kPending);
    Addr client = a.instance(a.type_with_dict("Client"), {});
    Addr inner = a.suspended("Client.fetch", 40, client, a.future_iter(fut));
    Addr outer = a.suspended("main", 10, a.none, inner);
    Addr t = a.task(a.img.str("main-task"), kPending, outer, fut);
    auto st = a.with_tasks({t});
    auto mem = a.img.reader();
    auto out = asyncio_state(mem, st);
    CHECK(out.problem.empty());
    REQUIRE(out.tasks.size() == 1);
    const PyTaskInfo& task = out.tasks[0];
    CHECK(task.problem.empty());
    REQUIRE(task.stack.size() == 2);
    // The lines come from each code's line table, read through the frame
    // walker's options: '?' (-1) here is what a dangling reference to them gave.
    CHECK(task.stack[0].function == "Client.fetch");
    CHECK(task.stack[0].file == "/app/jobs.py");
    CHECK(task.stack[0].line == 42);
    CHECK(task.stack[0].frame == a.frame_of(inner));
    CHECK(task.stack[1].function == "main");
    CHECK(task.stack[1].line == 12);
    CHECK(task.stack[1].frame == a.frame_of(outer));
    CHECK(task.innermost_self == client);
    CHECK(task.innermost_self_type == "Client");
    REQUIRE(task.awaits);
    CHECK(task.awaits->object == fut);
    CHECK(task.awaits->type == "_asyncio.Future");
    CHECK(task.awaits->state == FutureState::Pending);
    CHECK(task.awaits->loop == a.loop);
  }
}

TEST_CASE("a coroutine chain that loops ends at the first coroutine met again and says so; a chain longer than "
          "max_chain stops there and says so, 3.8 - 3.15",
          "[asyncio][chain]") {
  for (int minor : kMinors) {
    INFO("3." << minor);
    Asyncio a(minor);
    // A awaits B awaits A (CPython refuses this: the memory is stale), and C awaits itself.
    Addr ca = a.suspended("a", 10, a.none, 0);
    Addr cb = a.suspended("b", 20, a.none, ca);
    a.set_awaits(ca, cb);
    Addr cc = a.suspended("c", 30, a.none, 0);
    a.set_awaits(cc, cc);
    // A chain of 10 coroutines, read with max_chain 4.
    Addr deep = a.future_iter(a.future(kPending));
    for (int i = 0; i < 10; ++i) deep = a.suspended("level" + std::to_string(i), 100 + 10 * i, a.none, deep);
    Addr ta = a.task(a.img.str("A"), kPending, ca, 0);
    Addr tc = a.task(a.img.str("C"), kPending, cc, 0);
    Addr td = a.task(a.img.str("D"), kPending, deep, 0);
    auto st = a.with_tasks({ta, tc, td});
    auto mem = a.img.reader();
    AsyncioOptions opts;
    opts.max_chain = 4;
    auto out = asyncio_state(mem, st, opts);
    REQUIRE(out.tasks.size() == 3);
    const PyTaskInfo* loop2 = by_object(out, ta);
    REQUIRE(loop2);
    REQUIRE(loop2->stack.size() == 2);
    CHECK(loop2->stack[0].function == "b");
    CHECK(loop2->stack[1].function == "a");
    CHECK(loop2->problem == "coroutine chain loops at " + hex(ca));
    const PyTaskInfo* loop1 = by_object(out, tc);
    REQUIRE(loop1);
    REQUIRE(loop1->stack.size() == 1);
    CHECK(loop1->stack[0].function == "c");
    CHECK(loop1->stack[0].line == 32);
    CHECK(loop1->problem == "coroutine chain loops at " + hex(cc));
    const PyTaskInfo* bounded = by_object(out, td);
    REQUIRE(bounded);
    REQUIRE(bounded->stack.size() == 4);
    CHECK(bounded->stack[0].function == "level6");  // the four outermost, innermost first
    CHECK(bounded->stack[3].function == "level9");
    CHECK(bounded->problem == "stopped after 4 coroutines");
    // The whole chain within the default bound: ten frames, no problem.
    auto all = asyncio_state(mem, st);
    const PyTaskInfo* whole = by_object(all, td);
    REQUIRE(whole);
    CHECK(whole->stack.size() == 10);
    CHECK(whole->stack[0].function == "level0");
    CHECK(whole->stack[0].line == 102);
    CHECK(whole->problem.empty());
  }
}

TEST_CASE("garbage in a coroutine chain (an awaited pointer into nothing or to a typeless object, an implausible "
          "stack depth, an unmapped frame, an unreadable code object) ends the chain with what was read, never a "
          "crash or a hang, 3.8 - 3.15",
          "[asyncio][chain]") {
  for (int minor : kMinors) {
    INFO("3." << minor);
    Asyncio a(minor);
    Addr into_nothing = a.suspended("unmapped_await", 10, a.none, Image::kUnmapped);
    Addr typeless = a.suspended("typeless_await", 20, a.none, a.img.alloc(64));
    Addr deep_stack = a.suspended("deep_stack", 30, a.none, a.suspended("never_reached", 40, a.none, 0));
    a.set_implausible_depth(deep_stack);
    // An outer coroutine awaiting one whose frame cannot be read.
    Addr lost_frame = a.suspended("lost_frame", 50, a.none, 0);
    if (a.al.gen_frame == GenFrame::Pointer) a.img.put<Addr>(lost_frame, a.al.gen_frame_ptr, Image::kUnmapped);
    else a.img.put<Addr>(a.frame_of(lost_frame), a.l.iframe_code, Image::kUnmapped);
    Addr outer = a.suspended("outer", 60, a.none, lost_frame);
    std::vector<Addr> tasks;
    for (Addr c : {into_nothing, typeless, deep_stack, outer}) tasks.push_back(a.task(a.img.str("t"), kPending, c, 0));
    auto st = a.with_tasks({tasks[0], tasks[1], tasks[2], tasks[3]});
    auto mem = a.img.reader();
    auto out = asyncio_state(mem, st);
    REQUIRE(out.tasks.size() == 4);
    for (std::size_t i = 0; i < 3; ++i) {
      const PyTaskInfo* t = by_object(out, tasks[i]);
      REQUIRE(t);
      REQUIRE(t->stack.size() == 1);  // the frame read; nothing past it
      CHECK(t->stack[0].line == 12 + 10 * static_cast<int>(i));
      CHECK(t->problem.empty());
    }
    const PyTaskInfo* t = by_object(out, tasks[3]);
    REQUIRE(t);
    REQUIRE_FALSE(t->stack.empty());
    CHECK(t->stack.back().function == "outer");
    CHECK(t->stack.back().line == 62);
    if (a.al.gen_frame == GenFrame::Pointer) {
      // <= 3.10: no frame at all behind gi_frame: said, and the chain ends at `outer`
      CHECK(t->stack.size() == 1);
      CHECK(t->problem == "coroutine " + hex(lost_frame) + ": frame at " + hex(Image::kUnmapped) + " unreadable");
    } else {
      // 3.11+: the embedded frame is there, its code is not: an unknown frame
      REQUIRE(t->stack.size() == 2);
      CHECK(t->stack[0].function == "<unknown>");
      CHECK(t->stack[0].line == -1);
    }
  }
}

namespace {

// _asyncio's _AsyncioDebug (3.14+) as the target would hold it for the
// objects laid out with `a.al`, the list heads where the generated layout
// puts them.
Addr asyncio_debug_block(Asyncio& a) {
  const AsyncioDebugMap& m = *a.al.debug;
  Addr d = a.img.alloc(static_cast<std::size_t>(m.size));
  auto w = [&](std::int64_t at, std::int64_t v) { a.img.put<std::uint64_t>(d, at, static_cast<std::uint64_t>(v)); };
  w(m.task_size, a.al.task_size);
  w(m.task_name, a.al.task_name);
  w(m.task_awaited_by, 96);
  w(m.task_is_task, a.al.task_is_task);
  w(m.task_awaited_by_is_set, a.al.task_is_task + 1);
  w(m.task_coro, a.al.task_coro);
  w(m.task_node, a.al.task_node);
  w(m.interp_size, a.l.interp_asyncio_tasks_head + 16);
  w(m.interp_tasks_head, a.l.interp_asyncio_tasks_head);
  w(m.tstate_size, a.l.tstateimpl_asyncio_tasks_head + 16);
  w(m.tstate_running_loop, a.l.tstateimpl_asyncio_running_loop);
  w(m.tstate_running_task, a.l.tstateimpl_asyncio_running_task);
  w(m.tstate_tasks_head, a.l.tstateimpl_asyncio_tasks_head);
  return d;
}

std::vector<Addr> objects_of(const AsyncioState& s) {
  std::vector<Addr> out;
  for (const auto& t : s.tasks) out.push_back(t.object);
  return out;
}

}  // namespace

TEST_CASE("3.14+: _asyncio's tasks are found in each thread's task list and in the interpreter's list of exited "
          "threads' tasks, a pure-Python task in asyncio.tasks._scheduled_tasks; a task in two places is listed once",
          "[asyncio][lists]") {
  for (int minor : kListMinors) {
    INFO("3." << minor);
    Asyncio a(minor);
    Addr t1 = a.task(a.img.str("t1"), kPending, a.coroutine(), 0);
    Addr t2 = a.task(a.img.str("t2"), kPending, a.coroutine(), 0);
    Addr t3 = a.task(a.img.str("t3"), kPending, a.coroutine(), 0);
    Addr orphan = a.task(a.img.str("orphan"), kPending, a.coroutine(), 0);
    Addr py = a.instance(a.type_with_dict("Task"), {{"_state", a.img.str("PENDING")}, {"_name", a.img.str("py")}});
    auto st = a.state_with(a.weakset({py, t2}), 0, 2);
    a.link(a.thread_head(0), {t1, t2});
    a.link(a.thread_head(1), {t3});
    a.link(a.interp_head(), {orphan});
    auto mem = a.img.reader();
    auto out = asyncio_state(mem, st);
    CHECK(out.problem.empty());
    CHECK(out.warnings.empty());
    CHECK(out.registry == a.registry());
    auto found = objects_of(out);
    std::sort(found.begin(), found.end());
    std::vector<Addr> want{t1, t2, t3, orphan, py};
    std::sort(want.begin(), want.end());
    CHECK(found == want);
    const PyTaskInfo* o = by_object(out, orphan);
    REQUIRE(o);
    CHECK(o->native);
    CHECK(o->name == "orphan");
    const PyTaskInfo* p = by_object(out, py);
    REQUIRE(p);
    CHECK_FALSE(p->native);
    CHECK(p->name == "py");
  }
}

TEST_CASE("3.14+: a task list that loops back into itself ends where it loops with a problem naming the thread; a "
          "list longer than max_tasks stops there; each task is read once, never a hang",
          "[asyncio][lists]") {
  for (int minor : kListMinors) {
    INFO("3." << minor);
    Asyncio a(minor);
    std::vector<Addr> ts;
    for (int i = 0; i < 5; ++i) ts.push_back(a.task(a.img.str("t" + std::to_string(i)), kPending, a.coroutine(), 0));
    auto st = a.state_with(a.weakset({}));
    a.link(a.thread_head(0), ts);
    a.img.put<Addr>(a.node_of(ts[4]), 0, a.node_of(ts[1]));  // t4.next = t1: never back to the head
    auto mem = a.img.reader();
    auto out = asyncio_state(mem, st);
    CHECK(objects_of(out) == ts);
    CHECK(out.problem == "the task list of LWP 100 loops at " + hex(a.node_of(ts[1])));
    // A node that is its own successor.
    a.img.put<Addr>(a.node_of(ts[0]), 0, a.node_of(ts[0]));
    auto mem2 = a.img.reader();
    out = asyncio_state(mem2, st);
    CHECK(objects_of(out) == std::vector<Addr>{ts[0]});
    CHECK(out.problem == "the task list of LWP 100 loops at " + hex(a.node_of(ts[0])));
    // An intact list of five, read with max_tasks 3.
    a.link(a.thread_head(0), ts);
    auto mem3 = a.img.reader();
    AsyncioOptions opts;
    opts.max_tasks = 3;
    out = asyncio_state(mem3, st, opts);
    CHECK(objects_of(out) == std::vector<Addr>{ts[0], ts[1], ts[2]});
    CHECK(out.problem == "the task list of LWP 100 stopped after 3 tasks");
  }
}

TEST_CASE("3.14+: a task list broken by garbage (a link into nothing, a NULL link, a node inside an object that is no "
          "task, a task whose is_task is clear, an unreadable list head) ends with a problem; the tasks before it are "
          "kept",
          "[asyncio][lists]") {
  for (int minor : kListMinors) {
    for (int garbage = 0; garbage < 5; ++garbage) {
      INFO("3." << minor << ", garbage " << garbage);
      Asyncio a(minor);
      Addr t0 = a.task(a.img.str("t0"), kPending, a.coroutine(), 0);
      Addr t1 = a.task(a.img.str("t1"), kPending, a.coroutine(), 0);
      auto st = a.state_with(a.weakset({}));
      a.link(a.thread_head(0), {t0, t1});
      Addr bad = 0;
      switch (garbage) {
        case 0: bad = Image::kUnmapped; break;
        case 1: bad = 0; break;
        case 2: bad = a.future(kPending) + 8; break;  // a Future is no task, and too small to hold a task_node
        case 3: bad = a.node_of(a.instance(a.loop_type, {})); break;
        case 4: a.img.put<std::uint8_t>(t1, a.al.task_is_task, 0); break;
      }
      if (garbage < 4) a.img.put<Addr>(a.node_of(t0), 0, bad);
      auto mem = a.img.reader();
      auto out = asyncio_state(mem, st);
      CHECK(objects_of(out) == std::vector<Addr>{t0});
      if (garbage == 4) bad = a.node_of(t1);
      CHECK(out.problem == "the task list of LWP 100 broken: node " + hex(bad) + " is no _asyncio.Task's task_node");
    }
    // A thread state whose list head cannot be read.
    Asyncio a(minor);
    auto st = a.state_with(a.weakset({}));
    st.threads[0].tstate = Image::kUnmapped;
    auto mem = a.img.reader();
    auto out = asyncio_state(mem, st);
    CHECK(out.tasks.empty());
    const Addr head = Image::kUnmapped + static_cast<Addr>(a.l.tstateimpl_asyncio_tasks_head);
    CHECK(out.problem == "the task list of LWP 100 at " + hex(head) + " unreadable");
  }
}

TEST_CASE("3.14+: the loop a thread runs and the task it steps now are read from its thread state, with the thread, "
          "also for a loop no frame shows",
          "[asyncio][lists]") {
  for (int minor : kListMinors) {
    INFO("3." << minor);
    Asyncio a(minor);
    Addr t = a.task(a.img.str("stepping"), kPending, a.coroutine(), 0);
    Addr idle_loop = a.instance(a.loop_type, {});
    auto st = a.state_with(a.weakset({}), 0, 2);
    a.link(a.thread_head(0), {t});
    a.running(0, a.loop, t);
    a.running(1, idle_loop, 0);
    auto mem = a.img.reader();
    auto out = asyncio_state(mem, st);
    CHECK(out.problem.empty());
    REQUIRE(out.loops.size() == 2);
    auto loop_of = [&](Addr l) {
      return std::find_if(out.loops.begin(), out.loops.end(), [&](const PyLoopInfo& i) { return i.loop == l; });
    };
    REQUIRE(loop_of(a.loop) != out.loops.end());
    CHECK(loop_of(a.loop)->tid == 100);
    CHECK(loop_of(a.loop)->current_task == t);
    CHECK(loop_of(a.loop)->type == "_UnixSelectorEventLoop");
    REQUIRE(loop_of(idle_loop) != out.loops.end());
    CHECK(loop_of(idle_loop)->tid == 101);
    CHECK(loop_of(idle_loop)->current_task == 0);
  }
}

TEST_CASE("3.14+: the target's _AsyncioDebug wins over the table: tasks whose name, is_task and task_node sit where "
          "it says are read through it, a warning names each difference; without it they are not",
          "[asyncio][lists]") {
  for (int minor : kListMinors) {
    INFO("3." << minor);
    Asyncio a(minor);
    // A build whose TaskObj is larger: the name where the table has the
    // context, is_task and the list node moved, a longer struct.
    a.al.task_name = 144;
    a.al.task_is_task = 111;
    a.al.task_node = 176;
    a.al.task_size = 200;
    a.img.put<std::int64_t>(a.task_type, a.l.type_basicsize, a.al.task_size);
    Addr t0 = a.task(a.img.str("moved-0"), kPending, a.coroutine(), 0);
    Addr t1 = a.task(a.img.str("moved-1"), kPending, a.coroutine(), 0);
    auto st = a.state_with(a.weakset({}));
    a.link(a.thread_head(0), {t0, t1});
    AsyncioOptions opts;
    opts.asyncio_debug = asyncio_debug_block(a);
    auto mem = a.img.reader();
    auto out = asyncio_state(mem, st, opts);
    CHECK(out.problem.empty());
    CHECK(objects_of(out) == std::vector<Addr>{t0, t1});
    REQUIRE(out.tasks.size() == 2);
    CHECK(out.tasks[0].name == "moved-0");
    CHECK(out.tasks[1].name == "moved-1");
    REQUIRE(out.warnings.size() == 1);
    CHECK(out.warnings[0] == "asyncio: the target's _AsyncioDebug differ from the 3." + std::to_string(minor) +
                                 " row in task_size 168->200, task_name 136->144, task_is_task 108->111, task_node "
                                 "152->176; using the target's (fields it does not cover come from the row)");
    // Read with the table alone, the first node is no task's.
    auto alone = asyncio_state(mem, st);
    CHECK(alone.tasks.empty());
    CHECK(alone.problem.find("the task list of LWP 100 broken") == 0);
  }
}

TEST_CASE("3.14+: an _AsyncioDebug whose offsets lie outside their structs is not used: a warning says so and the "
          "table reads the tasks",
          "[asyncio][lists]") {
  for (int minor : kListMinors) {
    INFO("3." << minor);
    Asyncio a(minor);
    Addr t = a.task(a.img.str("kept"), kPending, a.coroutine(), 0);
    auto st = a.state_with(a.weakset({}));
    a.link(a.thread_head(0), {t});
    AsyncioOptions opts;
    opts.asyncio_debug = asyncio_debug_block(a);
    a.img.put<std::uint64_t>(opts.asyncio_debug, a.al.debug->task_coro, 500);
    auto mem = a.img.reader();
    auto out = asyncio_state(mem, st, opts);
    CHECK(out.problem.empty());
    REQUIRE(out.tasks.size() == 1);
    CHECK(out.tasks[0].name == "kept");
    REQUIRE(out.warnings.size() == 1);
    CHECK(out.warnings[0] == "asyncio: _AsyncioDebug at " + hex(opts.asyncio_debug) +
                                 " implausible (task_coro 500 outside its struct of 168 bytes); using the 3." +
                                 std::to_string(minor) + " row");
    // Unmapped: the same, said as unreadable.
    opts.asyncio_debug = Image::kUnmapped;
    out = asyncio_state(mem, st, opts);
    REQUIRE(out.tasks.size() == 1);
    REQUIRE(out.warnings.size() == 1);
    CHECK(out.warnings[0].find("unreadable; using the 3.") != std::string::npos);
  }
}

TEST_CASE("3.14+: _Py_DebugOffsets' gen_object place a coroutine's frame and state where the table does not: the "
          "chain is read through them, with a warning",
          "[asyncio][chain]") {
  for (int minor : kListMinors) {
    INFO("3." << minor);
    Asyncio a(minor);
    a.al.gen_iframe = 88;
    a.al.gen_frame_state = 66;
    Addr fut = a.future(kPending);
    Addr coro = a.suspended("fetch", 40, a.none, a.future_iter(fut));
    Addr t = a.task(a.img.str("t"), kPending, coro, fut);
    auto st = a.state_with(a.weakset({}));
    a.link(a.thread_head(0), {t});
    st.runtime = a.img.runtime(a.interp);
    a.img.put<std::uint64_t>(st.runtime, a.l.dbg_gen_iframe, 88);
    a.img.put<std::uint64_t>(st.runtime, a.l.dbg_gen_frame_state, 66);
    auto mem = a.img.reader();
    auto out = asyncio_state(mem, st);
    REQUIRE(out.tasks.size() == 1);
    CHECK(out.tasks[0].problem.empty());
    REQUIRE(out.tasks[0].stack.size() == 1);
    CHECK(out.tasks[0].stack[0].function == "fetch");
    CHECK(out.tasks[0].stack[0].line == 42);
    REQUIRE(out.warnings.size() == 1);
    CHECK(out.warnings[0] == "asyncio: the target's _Py_DebugOffsets differ from the 3." + std::to_string(minor) +
                                 " row in gi_iframe 72->88, gi_frame_state 67->66; using the target's");
  }
}

TEST_CASE("3.15: a coroutine in FRAME_SUSPENDED_YIELD_FROM_LOCKED is read as one suspended in an await; one at a "
          "plain yield (FRAME_SUSPENDED) or running (FRAME_EXECUTING) ends the chain at its own frame",
          "[asyncio][chain]") {
  constexpr std::int8_t kSuspendedPlain = 1, kExecuting = 4;
  Asyncio a(15);
  Addr fut = a.future(kPending);
  std::vector<Addr> tasks;
  for (std::int8_t state : {a.al.suspended_locked, kSuspendedPlain, kExecuting}) {
    Addr inner = a.suspended("inner", 40, a.none, a.future_iter(fut));
    Addr outer = a.suspended("outer", 10, a.none, inner);
    a.img.put<std::int8_t>(outer, a.al.gen_frame_state, state);
    tasks.push_back(a.task(a.img.str("t"), kPending, outer, fut));
  }
  auto st = a.with_tasks(tasks);
  auto mem = a.img.reader();
  auto out = asyncio_state(mem, st);
  CHECK(out.problem.empty());
  REQUIRE(out.tasks.size() == 3);
  REQUIRE(out.tasks[0].stack.size() == 2);
  CHECK(out.tasks[0].stack[0].function == "inner");
  CHECK(out.tasks[0].stack[1].function == "outer");
  for (std::size_t i : {1u, 2u}) {
    REQUIRE(out.tasks[i].stack.size() == 1);
    CHECK(out.tasks[i].stack[0].function == "outer");
    CHECK(out.tasks[i].problem.empty());
  }
}

TEST_CASE("3.14+: tasks that are no asyncio.Task, given to _register_task, are found in _asyncio's module state "
          "(non_asyncio_tasks, non_asyncio_eager_tasks); a state without _asyncio's Task type there is not read and "
          "says so",
          "[asyncio][lists]") {
  for (int minor : kListMinors) {
    for (bool garbage : {false, true}) {
      INFO("3." << minor << (garbage ? ", garbage module state" : ""));
      Asyncio a(minor);
      Addr third_type = a.type_with_dict("ThirdPartyTask");
      Addr third = a.instance(third_type, {{"_state", a.img.str("PENDING")}, {"_name", a.img.str("third")}});
      Addr eager = a.instance(third_type, {{"_state", a.img.str("PENDING")}, {"_name", a.img.str("eager")}});
      Addr state = a.img.alloc(static_cast<std::size_t>(a.al.state_non_asyncio_eager_tasks) + 8);
      a.img.put<Addr>(state, a.al.state_task_type, garbage ? a.future_type : a.task_type);
      a.img.put<Addr>(state, a.al.state_non_asyncio_tasks, a.weakset({third}));
      a.img.put<Addr>(state, a.al.state_non_asyncio_eager_tasks, a.set({eager}));
      Addr mod = a.module(a.dict({}));
      a.img.put<Addr>(mod, a.al.module_state, state);
      a.extra_modules = {{"_asyncio", mod}};
      Addr native = a.task(a.img.str("native"), kPending, a.coroutine(), 0);
      auto st = a.with_tasks({native});
      auto mem = a.img.reader();
      auto out = asyncio_state(mem, st);
      if (garbage) {
        CHECK(objects_of(out) == std::vector<Addr>{native});
        CHECK(out.problem == "_asyncio's module state at " + hex(state) + " has no Task type where the 3." +
                                 std::to_string(minor) + " row says: tasks that are no asyncio.Task not read");
        continue;
      }
      CHECK(out.problem.empty());
      CHECK(out.registry == a.registry() + ", _asyncio's non_asyncio_tasks, _asyncio's non_asyncio_eager_tasks");
      CHECK(objects_of(out) == std::vector<Addr>{native, third, eager});
      const PyTaskInfo* t = by_object(out, third);
      REQUIRE(t);
      CHECK_FALSE(t->native);
      CHECK(t->name == "third");
      CHECK(t->type == "ThirdPartyTask");
    }
  }
}
