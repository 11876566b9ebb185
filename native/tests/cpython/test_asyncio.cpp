// The asyncio decoder on synthetic images: C _asyncio.Task objects laid out
// with the asyncio table (native/src/cpython/layouts/asyncio.hpp) where each
// version keeps them, found through the task registries of asyncio.tasks
// (sys.modules, 3.8 - 3.15); suspended coroutines whose frames hold what
// they await (the coroutine-chain walk); garbage registries, unreadable
// coroutines, chains that loop and fut_waiter cycles give a problem and
// bounded output, never a crash or a hang.  3.14+ task lists and debug
// offsets: test_asyncio_lists.cpp.
#include <catch2/catch.hpp>

#include "support/asyncio_world.hpp"
#include "support/read_problem.hpp"

using namespace pyhang;
using namespace pyhang::cpython;
using namespace pyhang::cpython::testing;


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
      REQUIRE(out.problem.path.size() == 2);
      CHECK(out.problem.path[0].part == ReadPart::Attribute);
      CHECK(out.problem.path[0].name.rfind("asyncio.tasks._", 0) == 0);
      CHECK(out.problem.path[1] == ReadStep{ReadPart::Set, data, {}, 0});
      if (garbage == 2) CHECK((out.problem.why == ReadWhy::Unreadable || out.problem.why == ReadWhy::PartlyUnreadable));
      else CHECK((out.problem.why == ReadWhy::Implausible && out.problem.name == "table"));
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
    CHECK(says(out.problem, ReadWhy::NotFound, {{ReadPart::Module, 0}, {ReadPart::TaskRegistry, 0}}));
    out = asyncio_state(mem, no_asyncio);
    CHECK_FALSE(out.imported);
    CHECK(out.tasks.empty());
    CHECK(says(out.problem, ReadWhy::NotImported, {{ReadPart::Module, 0}}));
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
    CHECK(says(out.tasks[0].problem, ReadWhy::Unreadable, {{ReadPart::Coroutine, Image::kUnmapped}}));
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
    CHECK(says(self->problem, ReadWhy::AwaitsItself, {{ReadPart::Task, ts}}));
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
    CHECK(says(loop2->problem, ReadWhy::Loops, {{ReadPart::Coroutine, 0}}));
    CHECK(loop2->problem.at == ca);
    const PyTaskInfo* loop1 = by_object(out, tc);
    REQUIRE(loop1);
    REQUIRE(loop1->stack.size() == 1);
    CHECK(loop1->stack[0].function == "c");
    CHECK(loop1->stack[0].line == 32);
    CHECK(says(loop1->problem, ReadWhy::Loops, {{ReadPart::Coroutine, 0}}));
    CHECK(loop1->problem.at == cc);
    const PyTaskInfo* bounded = by_object(out, td);
    REQUIRE(bounded);
    REQUIRE(bounded->stack.size() == 4);
    CHECK(bounded->stack[0].function == "level6");  // the four outermost, innermost first
    CHECK(bounded->stack[3].function == "level9");
    CHECK(says(bounded->problem, ReadWhy::StoppedAfter, {{ReadPart::Coroutine, 0}}));
    CHECK(bounded->problem.limit == 4);
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
      CHECK(says(t->problem, ReadWhy::Unreadable, {{ReadPart::Coroutine, lost_frame}, {ReadPart::Frame, Image::kUnmapped}}));
    } else {
      // 3.11+: the embedded frame is there, its code is not: an unknown frame
      REQUIRE(t->stack.size() == 2);
      CHECK(t->stack[0].function == "<unknown>");
      CHECK(t->stack[0].line == -1);
    }
  }
}

