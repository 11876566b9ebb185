// The asyncio decoder on synthetic images: C _asyncio.Task objects laid out
// with the asyncio table (native/src/cpython/layouts/asyncio.hpp) in the
// task registries of asyncio.tasks, found through sys.modules, for 3.8 -
// 3.13; garbage registries, unreadable coroutines and fut_waiter cycles give
// a problem and bounded output, never a crash or a hang.
#include <catch2/catch.hpp>

#include "cpython/layouts/asyncio.hpp"
#include "pyhang/base/format.hpp"
#include "pyhang/cpython/asyncio.hpp"
#include "support/cpython_objects.hpp"

using namespace pyhang;
using namespace pyhang::cpython;
using pyhang::cpython::testing::Image;
using pyhang::cpython::testing::Objects;

namespace {

constexpr int kMinors[] = {8, 9, 10, 11, 12, 13};

// FutureObj.fut_state (Modules/_asynciomodule.c)
enum CState : std::int32_t { kPending = 0, kCancelled = 1, kFinished = 2 };

struct Asyncio : Objects {
  const AsyncioLayout& al;
  Addr task_type, coro_type, weakref_type, weakset_type, loop_type, error_type;
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
    loop = instance(loop_type, {});
  }

  // A coroutine whose frame is gone (gi_frame NULL; 3.11+: gi_frame_state
  // FRAME_COMPLETED): its chain has no frame to walk.
  Addr coroutine() {
    Addr c = img.alloc(static_cast<std::size_t>(std::max(al.gen_frame_ptr, al.gen_frame_state)) + 16);
    img.put<Addr>(c, l.object_ob_type, coro_type);
    if (al.gen_frame == GenFrame::Embedded) img.put<std::int8_t>(c, al.gen_frame_state, 1);
    return c;
  }

  // A C task: FutureObj_HEAD and TaskObj fields where the table puts them.
  Addr task(Addr name, CState state, Addr coro, Addr waiter, Addr exception = 0, bool log_tb = false) {
    Addr t = img.alloc(static_cast<std::size_t>(al.task_size));
    img.put<Addr>(t, l.object_ob_type, task_type);
    img.put<Addr>(t, al.fut_loop, loop);
    img.put<std::int32_t>(t, al.fut_state, state);
    img.put<Addr>(t, al.fut_exception, exception);
    img.put<std::uint32_t>(t, al.fut_log_tb, log_tb ? 1u : 0u);  // 3.13: bit 0 of the word
    img.put<Addr>(t, al.task_coro, coro);
    img.put<Addr>(t, al.task_fut_waiter, waiter);
    img.put<Addr>(t, al.task_name, name);
    return t;
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

  // The registry of asyncio.tasks for this version, holding `tasks`
  // (3.8 - 3.11: _all_tasks; 3.12+: _scheduled_tasks and _eager_tasks, an
  // empty set unless given).
  PythonState state_with(Addr weakset_registry, Addr eager = 0) {
    std::vector<std::pair<std::string, Addr>> globals;
    if (l.minor <= 11) {
      globals = {{"_all_tasks", weakset_registry}};
    } else {
      globals = {{"_scheduled_tasks", weakset_registry}, {"_eager_tasks", eager ? eager : set({})}};
    }
    Addr modules = dict({{"asyncio.tasks", module(dict(globals))}});
    return state(modules);
  }
  std::string registry() const {
    return l.minor <= 11 ? "asyncio.tasks._all_tasks" : "asyncio.tasks._scheduled_tasks, asyncio.tasks._eager_tasks";
  }
};

const PyTaskInfo* by_object(const AsyncioState& s, Addr t) {
  for (const auto& task : s.tasks)
    if (task.object == t) return &task;
  return nullptr;
}

}  // namespace

TEST_CASE("a C _asyncio.Task is read with its name, state, coroutine and the task its fut_waiter awaits, 3.8 - 3.13",
          "[asyncio]") {
  for (int minor : kMinors) {
    INFO("3." << minor);
    Asyncio a(minor);
    Addr coro_b = a.coroutine(), coro_a = a.coroutine();
    Addr b = a.task(a.img.str("consumer"), kPending, coro_b, 0);
    Addr w = a.task(a.img.str("waiter"), kPending, coro_a, b);
    auto st = a.state_with(a.weakset({w, b}));
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

TEST_CASE("3.13 keeps an unnamed task's number as an int: its name reads Task-N", "[asyncio]") {
  Asyncio a(13);
  Addr t = a.task(a.integer(7), kPending, a.coroutine(), 0);
  auto st = a.state_with(a.weakset({t}));
  auto mem = a.img.reader();
  auto out = asyncio_state(mem, st);
  REQUIRE(out.tasks.size() == 1);
  CHECK(out.tasks[0].name == "Task-7");
}

TEST_CASE("a finished task whose exception was never retrieved is flagged with the exception's type; a retrieved one "
          "is not, 3.8 - 3.13",
          "[asyncio]") {
  for (int minor : kMinors) {
    INFO("3." << minor);
    Asyncio a(minor);
    Addr lost = a.task(a.img.str("lost"), kFinished, a.coroutine(), 0, a.object(a.error_type), true);
    Addr seen = a.task(a.img.str("seen"), kFinished, a.coroutine(), 0, a.object(a.error_type), false);
    Addr cancelled = a.task(a.img.str("stopped"), kCancelled, a.coroutine(), 0, a.none, true);
    auto st = a.state_with(a.weakset({lost, seen, cancelled}));
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
    auto st = a.state_with(a.weakset({t}));
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
    auto st = a.state_with(a.weakset({ta, tb, tc, ts}));
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
