// The asyncio decoder on synthetic 3.14+ images: the task lists of the
// thread states and of the interpreter, the loop and task a thread runs,
// _asyncio's own debug offsets (_AsyncioDebug) and _Py_DebugOffsets'
// generator fields winning over the table; lists that loop or break give a
// problem and bounded output.
#include <catch2/catch.hpp>

#include "support/asyncio_world.hpp"
#include "support/read_problem.hpp"

using namespace pyhang;
using namespace pyhang::cpython;
using namespace pyhang::cpython::testing;

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
    const ReadStep list{ReadPart::ThreadTaskList, a.thread_head(0), {}, 100};
    CHECK(out.problem == ReadProblem{{list, {ReadPart::TaskNode, 0, {}, 0}}, ReadWhy::Loops, {}, 0, a.node_of(ts[1])});
    // A node that is its own successor.
    a.img.put<Addr>(a.node_of(ts[0]), 0, a.node_of(ts[0]));
    auto mem2 = a.img.reader();
    out = asyncio_state(mem2, st);
    CHECK(objects_of(out) == std::vector<Addr>{ts[0]});
    CHECK(out.problem == ReadProblem{{list, {ReadPart::TaskNode, 0, {}, 0}}, ReadWhy::Loops, {}, 0, a.node_of(ts[0])});
    // An intact list of five, read with max_tasks 3.
    a.link(a.thread_head(0), ts);
    auto mem3 = a.img.reader();
    AsyncioOptions opts;
    opts.max_tasks = 3;
    out = asyncio_state(mem3, st, opts);
    CHECK(objects_of(out) == std::vector<Addr>{ts[0], ts[1], ts[2]});
    CHECK(out.problem == ReadProblem{{list, {ReadPart::Task, 0, {}, 0}}, ReadWhy::StoppedAfter, {}, 3});
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
      CHECK(says(out.problem, ReadWhy::NotA, {{ReadPart::ThreadTaskList, a.thread_head(0)}, {ReadPart::TaskNode, bad}}));
      CHECK(out.problem.path[0].number == 100);
    }
    // A thread state whose list head cannot be read.
    Asyncio a(minor);
    auto st = a.state_with(a.weakset({}));
    st.threads[0].tstate = Image::kUnmapped;
    auto mem = a.img.reader();
    auto out = asyncio_state(mem, st);
    CHECK(out.tasks.empty());
    const Addr head = Image::kUnmapped + static_cast<Addr>(a.l.tstateimpl_asyncio_tasks_head);
    CHECK(out.problem == ReadProblem{{{ReadPart::ThreadTaskList, head, {}, 100}}, ReadWhy::Unreadable});
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
    const auto& w = out.warnings[0];
    CHECK(w.kind == StateProblem::AsyncioDebugDiffer);
    CHECK(w.address == opts.asyncio_debug);
    CHECK(w.text == "3." + std::to_string(minor));
    CHECK(w.text3 == "_AsyncioDebug");
    CHECK(w.changes == std::vector<FieldChange>{{"task_size", 168, 200}, {"task_name", 136, 144},
                                                {"task_is_task", 108, 111}, {"task_node", 152, 176}});
    // Read with the table alone, the first node is no task's.
    auto alone = asyncio_state(mem, st);
    CHECK(alone.tasks.empty());
    CHECK(alone.problem.why == ReadWhy::NotA);
    CHECK(parts(alone.problem).front().first == ReadPart::ThreadTaskList);
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
    CHECK(out.warnings[0].kind == StateProblem::AsyncioDebugImplausible);
    CHECK(out.warnings[0].address == opts.asyncio_debug);
    CHECK(out.warnings[0].text == "3." + std::to_string(minor));
    CHECK(out.warnings[0].text2 == "task_coro");
    CHECK(out.warnings[0].number == 500);
    CHECK(out.warnings[0].count == 168);
    // Unmapped: the same, said as unreadable.
    opts.asyncio_debug = Image::kUnmapped;
    out = asyncio_state(mem, st, opts);
    REQUIRE(out.tasks.size() == 1);
    REQUIRE(out.warnings.size() == 1);
    CHECK(out.warnings[0].kind == StateProblem::AsyncioDebugUnreadable);
    CHECK(out.warnings[0].address == Image::kUnmapped);
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
    CHECK(out.warnings[0].kind == StateProblem::AsyncioDebugDiffer);
    CHECK(out.warnings[0].text3 == "_Py_DebugOffsets");
    CHECK(out.warnings[0].changes == std::vector<FieldChange>{{"gi_iframe", 72, 88}, {"gi_frame_state", 67, 66}});
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
        CHECK(says(out.problem, ReadWhy::NoTaskType, {{ReadPart::AsyncioState, state}}));
        CHECK(out.problem.name == "3." + std::to_string(minor));
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
